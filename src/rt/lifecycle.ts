/**
 * The one lifecycle wrapper (ros2_control's HardwareComponent): it owns a body's transitions and
 * its cycle, so every body starts, stops, restarts and fails the same way. The robot (the body's
 * runtime object: leases, safety, commands) and its driver (the body seam over the link,
 * src/drivers/) plug in (words: docs/glossary.md).
 *
 *   unconfigured ──configure──► inactive ──activate──► active
 *        ▲                         │  ▲                  │
 *        └──────── close ──────────┘  └── deactivate ────┘        any ──shutdown──► finalized
 *
 * - `unconfigured`: nothing open (created, stopped, or after a driver error). `start()` configures again.
 * - `inactive`: link open, body identified (preferences, handshake), state readable by `loop.step()`
 *   (tests, benches, single-shot reads); no cycle runs by itself.
 * - `active`: the loop cycles on the clock; commands flow while a lease is held.
 * - `finalized`: shut down for good; `start()` fails with BL_ERR_BODY_FINALIZED.
 *
 * `start()` = configure (if needed) + activate; `stop()` = deactivate (the body's safe state: the
 * NAO's last frame at stiffness 0) + close, back to unconfigured; `shutdown()` = stop + finalized.
 * Transitions run one at a time, in call order, and record how long they took.
 *
 * A driver that throws in `read` or `write` (a broken link, not a failed transfer: those are codes)
 * takes the body through the error transition: the cycle stops at once, the robot is told
 * (`onDriverError`), the driver is asked for its safe state (best effort), the link closed; the
 * state is then `unconfigured` with `lastError` set. A robot whose cycle throws (a bug) does not
 * stop the loop: the loop counts it and the robot goes to its fault state (`onCycleError`).
 */
import { BodylinkError } from "../errors.js";
import { IO, type BodyDriver } from "../drivers/driver.js";
import type { Clock } from "../runtime/clock.js";
import { CycleLoop, type LoopOptions } from "../runtime/loop.js";

export const LIFECYCLE_STATES = ["unconfigured", "inactive", "active", "finalized"] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/** Which driver call an I/O code came from (numbers: no string per cycle). */
export const PHASE = { Read: 0, Write: 1 } as const;
export type Phase = (typeof PHASE)[keyof typeof PHASE];

/** The robot (the body's logic), as the wrapper drives it. */
export interface CycleRobot<S, C> {
  readonly periodMs: number;
  /** The live state the driver reads into. */
  readonly state: S;
  /** The command object the driver writes from (one for the runtime's life). */
  readonly output: C;
  /** Perform side: arbitrate (lease, safety ramps, motions) into `output`. */
  update(nowMs: number): void;
  /** Perform side: a read that was not IO.None, or a write that was not IO.Sent. */
  account(nowMs: number, code: number, phase: Phase): void;
  onLate?(lateByMs: number): void;
  onCycleError?(error: unknown): void;
  /** Prepare side, after the driver configured (identity known). */
  onConfigured?(): void;
  /** Prepare side, before the loop starts. */
  onActivating?(): void;
  /** Prepare side, before the body is put in its safe state (revoke control, stop motions). */
  onDeactivating?(): void;
  /** Prepare side, once the link is closed (stop or error). */
  onClosed?(): void;
  /** The driver threw: go to the safe state's bookkeeping (link lost, reason). */
  onDriverError?(message: string): void;
}

export interface TransitionTiming {
  readonly configureMs: number;
  readonly activateMs: number;
  readonly deactivateMs: number;
  readonly closeMs: number;
}

export class Lifecycle<S, C> {
  readonly loop: CycleLoop;
  readonly driver: BodyDriver<S, C>;
  readonly #robot: CycleRobot<S, C>;
  readonly #clock: Clock;
  #state: LifecycleState = "unconfigured";
  #queue: Promise<unknown> = Promise.resolve();
  /** Why the last driver error happened, or null. */
  lastError: string | null = null;
  /** Driver errors so far (each one ended in `unconfigured`). */
  driverErrors = 0;
  readonly #timing = { configureMs: 0, activateMs: 0, deactivateMs: 0, closeMs: 0 };
  /** Set when the driver threw inside a cycle: the cycle stops touching it at once. */
  #broken = false;

  constructor(driver: BodyDriver<S, C>, robot: CycleRobot<S, C>, clock: Clock, loopOptions: LoopOptions = {}) {
    this.driver = driver;
    this.#robot = robot;
    this.#clock = clock;
    this.loop = new CycleLoop(
      {
        periodMs: robot.periodMs,
        cycle: (nowMs) => this.cycle(nowMs),
        onLate: robot.onLate ? (lateByMs) => robot.onLate!(lateByMs) : undefined,
        onCycleError: robot.onCycleError ? (e) => robot.onCycleError!(e) : undefined,
      },
      clock,
      loopOptions,
    );
  }

  get state(): LifecycleState {
    return this.#state;
  }

  /** How long the last transition of each kind took, ms. */
  get timing(): TransitionTiming {
    return { ...this.#timing };
  }

  /** unconfigured → inactive. No-op when already configured. */
  configure(): Promise<void> {
    return this.#serial(async () => {
      this.#assertUsable();
      if (this.#state !== "unconfigured") return;
      await this.#timed("configureMs", () => this.driver.configure());
      this.#broken = false;
      this.#state = "inactive";
      this.#robot.onConfigured?.();
    });
  }

  /** configure if needed, then inactive → active (the loop runs). No-op when active. */
  async start(): Promise<void> {
    await this.configure();
    return this.#serial(async () => {
      this.#assertUsable();
      if (this.#state !== "inactive") return;
      await this.#timed("activateMs", () => this.driver.activate());
      this.#robot.onActivating?.();
      this.#state = "active";
      this.loop.start();
    });
  }

  /** active → inactive → unconfigured: safe state sent, loop stopped, link closed. Idempotent. */
  stop(): Promise<void> {
    return this.#serial(() => this.#stopNow());
  }

  /** stop, then finalized: nothing starts again. Idempotent. */
  shutdown(): Promise<void> {
    return this.#serial(async () => {
      await this.#stopNow();
      this.#state = "finalized";
    });
  }

  async #stopNow(): Promise<void> {
    if (this.#state === "finalized") return;
    if (this.#state === "unconfigured") {
      this.#robot.onClosed?.(); // stopping a body that never started still leaves it "stopped"
      return;
    }
    this.#robot.onDeactivating?.();
    await this.loop.stop();
    await this.#timed("deactivateMs", () => this.driver.deactivate());
    this.#state = "inactive";
    await this.#timed("closeMs", () => this.driver.close());
    this.#state = "unconfigured";
    this.#robot.onClosed?.();
  }

  #assertUsable(): void {
    if (this.#state === "finalized") throw new BodylinkError("BL_ERR_BODY_FINALIZED");
  }

  /**
   * Perform side: one cycle now, read → update → write → read (the loop calls it; tests and
   * benches may too, on an inactive body). Does nothing while unconfigured or after a driver error.
   */
  /**
   * Perform side, at the start of every cycle before the robot arbitrates: what came in from another
   * thread (a threaded core's e-stop request word and command mailbox, src/rt/core-worker.ts).
   * Must not allocate in steady state.
   */
  input: ((nowMs: number) => void) | null = null;

  cycle(nowMs: number): void {
    if (this.#broken || (this.#state !== "inactive" && this.#state !== "active")) return;
    const d = this.driver;
    const c = this.#robot;
    let r: number;
    try {
      r = d.read(nowMs, c.state);
    } catch (e) {
      return this.#driverFailed("read", e);
    }
    if (r !== IO.None) c.account(nowMs, r, PHASE.Read);
    this.input?.(nowMs);
    c.update(nowMs);
    let w: number;
    try {
      w = d.write(nowMs, c.output);
    } catch (e) {
      return this.#driverFailed("write", e);
    }
    if (w !== IO.Sent) c.account(nowMs, w, PHASE.Write);
    try {
      r = d.read(nowMs, c.state);
    } catch (e) {
      return this.#driverFailed("read", e);
    }
    if (r !== IO.None) c.account(nowMs, r, PHASE.Read);
  }

  /** The error transition (prepare side from here on: it may allocate). */
  #driverFailed(where: "read" | "write", e: unknown): void {
    this.#broken = true;
    this.driverErrors++;
    const message = `${this.driver.name} ${where} failed: ${(e as Error)?.message ?? String(e)}`;
    this.lastError = message;
    console.error(`bodylink: ${message}; the body is taken to its safe state and the cycle stopped (start() configures it again)`);
    this.#robot.onDriverError?.(message);
    void this.#serial(async () => {
      if (this.#state === "finalized" || this.#state === "unconfigured") return;
      await this.loop.stop();
      await this.driver.deactivate().catch(() => {});
      await this.driver.close().catch(() => {});
      // Not onClosed: the body stays "lost" with its reason until start() configures it again.
      if ((this.#state as LifecycleState) !== "finalized") this.#state = "unconfigured";
    });
  }

  /** Resolves once every transition asked for so far (including an error transition) is done. */
  settled(): Promise<void> {
    return this.#serial(async () => {});
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(f, f);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #timed(key: keyof TransitionTiming, f: () => Promise<void>): Promise<void> {
    const t0 = this.#clock.nowMs();
    try {
      await f();
    } finally {
      this.#timing[key] = this.#clock.nowMs() - t0;
    }
  }
}
