/**
 * The newest state message a client holds and what it derives from it: how old it is, its
 * snapshots (built lazily, once per message) and its frozen wire form. The stream keeps only the
 * newest message (never a queue). Prepare side; browser-safe.
 *
 * Age is measured without trusting either machine's wall clock: the smallest (local receive time −
 * source monotonic time) seen so far is the best case, allowed to rise by 1 ms per second to follow
 * clock drift, and a state's age is how much later than that best case it is now.
 */
import type { LinkStatus, StateMessage } from "./messages.js";
import { BODY_SHAPES, buildModels, deepFreeze, type RobotState } from "./snapshots.js";

const DRIFT_MS_PER_MS = 0.001; // how fast the best-case delay may rise (clock drift allowance)

export type Models = ReturnType<typeof buildModels>;

export class NewestState {
  /** Joint names in the order of every joint array (from the stream's hello). */
  jointNames: readonly string[] = Object.freeze([]);
  readonly #now: () => number;
  readonly #staleAfterMs: number;
  #latest: StateMessage | null = null;
  #models: Models | null = null;
  #state: RobotState | null | undefined = undefined;
  #frozen = false;
  // Best-case delay estimate (local receive − source monotonic time).
  #minDelayMs = Number.NaN;
  #lastRecvMs = 0;

  constructor(now: () => number, staleAfterMs: number) {
    this.#now = now;
    this.#staleAfterMs = staleAfterMs;
  }

  /** The newest message as received (not frozen), or null. */
  get message(): StateMessage | null {
    return this.#latest;
  }

  /** A new message: it replaces the last one and updates the best-case delay. */
  accept(m: StateMessage): void {
    const now = this.#now();
    const delay = now - m.timestamp_ms;
    if (Number.isFinite(delay)) {
      this.#minDelayMs = Number.isNaN(this.#minDelayMs) ? delay : Math.min(delay, this.#minDelayMs + (now - this.#lastRecvMs) * DRIFT_MS_PER_MS);
      this.#lastRecvMs = now;
    }
    this.#set(m);
  }

  /** No current message (the stream closed). */
  clear(): void {
    this.#set(null);
  }

  /** A new connection may be a new runtime with another clock origin: forget the best case. */
  newConnection(jointNames: readonly string[]): void {
    this.jointNames = jointNames;
    this.#minDelayMs = Number.NaN;
  }

  /** How old the newest message is, ms, against the best delivery seen; Infinity when there is none. */
  ageMs(): number {
    const m = this.#latest;
    if (!m || Number.isNaN(this.#minDelayMs)) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.#now() - (m.timestamp_ms + this.#minDelayMs));
  }

  /** The newest message's models when it is current (link ok or degraded, fresh), else null. */
  current(): Models | null {
    const m = this.#latest;
    if (!m) return null;
    if (m.link !== "ok" && m.link !== "degraded") return null;
    if (this.ageMs() > this.#staleAfterMs) return null;
    if (!this.#models) this.#models = buildModels(m, this.jointNames);
    return this.#models;
  }

  /** The newest message, deep-frozen (once). Only while there is one. */
  frozen(): Readonly<StateMessage> {
    const m = this.#latest!;
    if (!this.#frozen) {
      deepFreeze(m);
      this.#frozen = true;
    }
    return m;
  }

  /** Joints, motors and IMU of one cycle plus the body's fields, once current() is non-null; or null. */
  robotState(): RobotState | null {
    if (this.#state !== undefined) return this.#state;
    const mm = this.#models!;
    const m = this.#latest!;
    const motorsOk = mm.motors !== null || !BODY_SHAPES[m.body].motors;
    this.#state =
      mm.joints && motorsOk && mm.imu && mm.meta
        ? Object.freeze({ ...mm.meta, body: m.body, link: m.link as LinkStatus, joints: mm.joints, motors: mm.motors, imu: mm.imu, fields: this.frozen() })
        : null;
    return this.#state;
  }

  #set(m: StateMessage | null): void {
    this.#latest = m;
    this.#models = null;
    this.#state = undefined;
    this.#frozen = false;
  }
}
