/**
 * Control authority as a loan (ros2_control's exclusive command-interface loan, with expiry).
 *
 * One {@link Authority} per runtime arbitrates every commanding client: the LoLA socket's
 * controlling client, robot-API clients and TNY-360 API clients all acquire the same lease, so the
 * rule is one: **first holder wins until it releases or its lease expires**. A lease not renewed
 * within its duration expires by itself, so a crashed client never blocks others. Reads never need
 * a lease; emergency stop never needs one.
 *
 * The emergency-stop latch lives here too (estop.ts): while it is latched every lease is refused,
 * whoever asks, until an explicit reset.
 *
 * Runs on the prepare side of the cycle (may allocate); `isHeld(id)` is cheap for the perform side.
 */
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { BodylinkError } from "../errors.js";
import type { Clock } from "./clock.js";
import { describeEstop, ESTOP_CLEAR, type EstopPhase, type EstopResetRequest, type EstopState, estopText, type StopCategory } from "./estop.js";

export type LeaseSource = "api" | "lola" | "tny" | "cli" | "fleet";

/**
 * Who holds control. The holder's record is one object for the lease's life: a renewal moves its
 * deadlines in place (allocation-free; a LoLA client renews every cycle), so copy the fields you
 * keep rather than the object.
 */
export interface LeaseInfo {
  /** Opaque id; present it (x-bodylink-lease header, SDK) with every command. */
  readonly id: string;
  /** Who holds control, as the client named itself (e.g. "lola:pid 1234", "api:alice"). */
  readonly owner: string;
  readonly source: LeaseSource;
  readonly acquiredAtMs: number;
  /** Monotonic deadline; see `expiresAtEpochMs` for users. */
  readonly expiresAtMs: number;
  /** With a cycle counter bound (bindCycles): the cycle count the lease lasts until, else 0. */
  readonly expiresAtCycle: number;
  readonly expiresAtEpochMs: number;
}

export type AcquireResult =
  | { readonly ok: true; readonly lease: Lease }
  | { readonly ok: false; readonly holder: LeaseInfo; readonly reason: string; readonly latched: false }
  /** Refused because the emergency stop is latched: nobody gets control until it is reset. */
  | { readonly ok: false; readonly holder: null; readonly reason: string; readonly latched: true; readonly estop: EstopState };

/** What leases are charged against besides the wall clock (CycleLoop has both). */
export interface CycleCounter {
  readonly running: boolean;
  /** Cycles run so far. */
  readonly seq: number;
}

/** A value, or a promise of it: an authority or a body in another thread answers changes asynchronously. */
export type Awaitable<T> = T | Promise<T>;

/** What a caller keeps of a granted lease (Lease here; a host's handle for a core in a worker). */
export interface LeaseHandle {
  readonly id: string;
  /** The lease as the authority sees it now, or null once it ended. */
  readonly info: LeaseInfo | null;
  release(): unknown;
}

export type AcquireResultOf<L extends LeaseHandle> = { readonly ok: true; readonly lease: L } | Exclude<AcquireResult, { ok: true }>;

/**
 * The control authority as the servers use it (robot API, fleet bridge, safety log): reads answer
 * at once and never wait (on a host, from the core's mirror in shared memory); changes may be
 * answered later (a core in a worker thread answers between its cycles). `Authority` implements
 * it synchronously; `HostAuthority` (src/host/nao-host.ts) with promises and a bounded timeout.
 */
export interface ControlAuthority {
  holder(): LeaseInfo | null;
  /**
   * `nowMs`: the caller's one reading of this authority's clock for the request it serves (a server
   * reads the time once per frame and every check compares against it); omitted, read here.
   */
  isHeld(id: string | undefined | null, nowMs?: number): boolean;
  readonly latched: boolean;
  readonly estop: EstopState;
  acquire(owner: string, source: LeaseSource, leaseMs?: number): Awaitable<AcquireResultOf<LeaseHandle>>;
  /** `nowMs`: as for `isHeld`. */
  renew(id: string, leaseMs?: number, nowMs?: number): Awaitable<boolean>;
  release(id: string): Awaitable<boolean>;
  revoke(): Awaitable<void>;
  on<E extends keyof AuthorityEvents>(event: E, listener: (...args: AuthorityEvents[E]) => void): unknown;
  off<E extends keyof AuthorityEvents>(event: E, listener: (...args: AuthorityEvents[E]) => void): unknown;
}

export const DEFAULT_LEASE_MS = 2000;
export const MAX_LEASE_MS = 60_000;
export const MIN_LEASE_MS = 50;

/** A held lease. `release()` or `using` frees it; `renew()` extends it. */
export class Lease implements Disposable {
  readonly #authority: Authority;
  constructor(
    authority: Authority,
    readonly id: string,
  ) {
    this.#authority = authority;
  }
  get info(): LeaseInfo | null {
    const h = this.#authority.holder();
    return h && h.id === this.id ? h : null;
  }
  renew(leaseMs?: number): boolean {
    return this.#authority.renew(this.id, leaseMs);
  }
  release(): void {
    this.#authority.release(this.id);
  }
  [Symbol.dispose](): void {
    this.release();
  }
}

export interface AuthorityEvents {
  acquired: [LeaseInfo];
  released: [LeaseInfo, "released" | "expired" | "revoked"];
  /** The latch engaged, or a latched stop changed (category upgraded, phase moved on). */
  estop: [EstopState];
  reset: [EstopState, EstopResetRequest];
}

export class Authority extends EventEmitter<AuthorityEvents> implements ControlAuthority {
  readonly #clock: Clock;
  #holder: LeaseInfo | null = null;
  /** The holder's epoch time minus its monotonic time, taken when it acquired: a renewal maps its deadline without a second clock read. */
  #holderEpochOffsetMs = 0;
  #estop: EstopState = ESTOP_CLEAR;
  /** Changes with every change of holder (acquired, released, expired, revoked): names a lease without its id. */
  #generation = 0;
  /** Called after every change of the holder, its deadline or the latch (a core publishes them for its host). */
  #watcher: (() => void) | null = null;
  #sweepQueued = false;
  readonly #sweep = (): void => {
    this.#sweepQueued = false;
    this.holder();
  };

  /** The runtime's cycles (see bindCycles), or null: leases then count wall-clock time only. */
  #cycles: CycleCounter | null = null;
  #periodMs = 0;

  /**
   * Charge leases against the cycles the runtime actually runs, not only against the wall clock
   * (docs/architecture.md, "Control authority"): a lease expires once its time has passed AND, while the loop runs, as many cycles
   * as its duration holds have run since it was acquired or renewed. A paused or stalled runtime
   * (SIGSTOP, a blocked thread, a long GC) sends its clients no frame, so it charges them nothing:
   * a LoLA client that answers every frame keeps control however late the frames come.
   */
  bindCycles(cycles: CycleCounter, periodMs: number): void {
    this.#cycles = cycles;
    this.#periodMs = periodMs;
  }

  #cycleDeadline(ms: number): number {
    const c = this.#cycles;
    return c ? c.seq + Math.ceil(ms / this.#periodMs) : 0;
  }

  #expired(h: LeaseInfo, nowMs: number = this.#clock.nowMs()): boolean {
    if (nowMs < h.expiresAtMs) return false;
    const c = this.#cycles;
    return c === null || !c.running || c.seq >= h.expiresAtCycle;
  }

  constructor(clock: Clock) {
    super();
    this.#clock = clock;
  }

  /** The current holder, or null. Expires an overdue lease as a side effect (prepare side: it emits "released"). */
  holder(): LeaseInfo | null {
    return this.#holderAt(this.#clock.nowMs());
  }

  #holderAt(nowMs: number): LeaseInfo | null {
    const h = this.#holder;
    if (h && this.#expired(h, nowMs)) {
      this.#holder = null;
      this.#generation++;
      this.#changed();
      this.emit("released", h, "expired");
      return null;
    }
    return h;
  }

  /**
   * The holder for the cycle (perform side): an overdue lease counts as gone at once, but nothing is
   * emitted or allocated here; the expiry (and its "released" event) runs in a microtask after the
   * cycle's code.
   */
  activeHolder(): LeaseInfo | null {
    const h = this.#holder;
    if (h === null || !this.#expired(h)) return h;
    if (!this.#sweepQueued) {
      this.#sweepQueued = true;
      queueMicrotask(this.#sweep);
    }
    return null;
  }

  /** The lease `activeHolder()` found overdue and whose expiry has not run yet (perform side: no allocation), else null. */
  overdue(): LeaseInfo | null {
    const h = this.#holder;
    return h !== null && this.#expired(h) ? h : null;
  }

  /** Changes whenever the holder does (acquire, release, expiry, revoke): commands carry it to name their lease. */
  get generation(): number {
    return this.#generation;
  }

  /** Call `watcher` after every change of the holder, its deadline or the latch (one watcher; the core's publisher). */
  watch(watcher: (() => void) | null): void {
    this.#watcher = watcher;
  }

  #changed(): void {
    this.#watcher?.();
  }

  acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): AcquireResult {
    const ms = clampLease(leaseMs);
    if (this.#estop.latched) return { ok: false, holder: null, latched: true, estop: this.#estop, reason: `${describeEstop(this.#estop)}: reset it first` };
    const current = this.holder();
    if (current) {
      return {
        ok: false,
        holder: current,
        latched: false,
        reason: `control is held by ${current.owner} (${current.source}) until ${new Date(current.expiresAtEpochMs).toISOString()}`,
      };
    }
    const now = this.#clock.nowMs();
    const epoch = this.#clock.epochMs();
    const info: LeaseInfo = {
      id: randomUUID(),
      owner,
      source,
      acquiredAtMs: now,
      expiresAtMs: now + ms,
      expiresAtCycle: this.#cycleDeadline(ms),
      expiresAtEpochMs: epoch + ms,
    };
    this.#holder = info;
    this.#holderEpochOffsetMs = epoch - now;
    this.#generation++;
    this.#changed();
    this.emit("acquired", info);
    return { ok: true, lease: new Lease(this, info.id) };
  }

  /** True while `id` holds control (cheap; safe on the perform side). `nowMs`: see ControlAuthority.isHeld. */
  isHeld(id: string | undefined | null, nowMs: number = this.#clock.nowMs()): boolean {
    if (!id) return false;
    const h = this.#holderAt(nowMs);
    return h !== null && h.id === id;
  }

  /** `nowMs`: see ControlAuthority.isHeld (one clock read per request: a TNY-360 client renews with every frame). */
  renew(id: string, leaseMs = DEFAULT_LEASE_MS, nowMs: number = this.#clock.nowMs()): boolean {
    const h = this.#holderAt(nowMs);
    if (!h || h.id !== id) return false;
    const ms = clampLease(leaseMs);
    // In place, not a new record: a LoLA client renews every cycle on the core's thread, whose
    // steady state allocates nothing (LeaseInfo says readers copy what they keep).
    const m = h as { -readonly [K in keyof LeaseInfo]: LeaseInfo[K] };
    m.expiresAtMs = nowMs + ms;
    m.expiresAtCycle = this.#cycleDeadline(ms);
    m.expiresAtEpochMs = nowMs + this.#holderEpochOffsetMs + ms;
    this.#changed();
    return true;
  }

  release(id: string): boolean {
    const h = this.#holder;
    if (!h || h.id !== id) return false;
    this.#holder = null;
    this.#generation++;
    this.#changed();
    this.emit("released", h, "released");
    return true;
  }

  /** The emergency-stop latch (an immutable value, replaced on every change). */
  get estop(): EstopState {
    return this.#estop;
  }

  /** True while the emergency stop is latched (cheap; safe on the perform side). */
  get latched(): boolean {
    return this.#estop.latched;
  }

  /**
   * Latch the emergency stop and revoke the lease. Returns false when it was already latched (a
   * category-0 request still upgrades a category-1 stop that is settling). The body's runtime
   * does the stopping; this only keeps the latch.
   */
  engageEstop(category: StopCategory, source: string, reason: string | undefined): boolean {
    const cur = this.#estop;
    if (cur.latched) {
      if (category === 0 && cur.phase === "settling") this.#setEstop({ ...cur, category: 0, phase: "cut" });
      this.revoke();
      return false;
    }
    this.#setEstop({
      latched: true,
      reason: estopText(reason, "no reason given"),
      source: estopText(source, "unknown"),
      sinceEpochMs: this.#clock.epochMs(),
      category,
      phase: category === 0 ? "cut" : "settling",
    });
    this.revoke();
    return true;
  }

  /** The body reached its safe state (category 1 done) or faulted into category 0. */
  setEstopPhase(phase: Exclude<EstopPhase, "none">, category?: StopCategory): void {
    const cur = this.#estop;
    if (!cur.latched || (cur.phase === phase && (category === undefined || category === cur.category))) return;
    this.#setEstop({ ...cur, phase, category: category ?? cur.category });
  }

  /** Release the latch. Nothing moves after it until a client takes a lease and commands. Returns false when it was not latched. */
  resetEstop(req: EstopResetRequest): boolean {
    if (!this.#estop.latched) return false;
    this.#estop = ESTOP_CLEAR;
    this.#changed();
    this.emit("reset", ESTOP_CLEAR, { source: estopText(req.source, "unknown"), reason: estopText(req.reason, "no reason given") });
    return true;
  }

  #setEstop(s: EstopState): void {
    this.#estop = Object.freeze(s);
    this.#changed();
    this.emit("estop", this.#estop);
  }

  /** Take control away from whoever holds it (emergency stop, shutdown). */
  revoke(): void {
    const h = this.#holder;
    if (!h) return;
    this.#holder = null;
    this.#generation++;
    this.#changed();
    this.emit("released", h, "revoked");
  }
}

/**
 * The one place that says why `leaseId` may not command (every body and server uses it), or null
 * when it holds control. Order: the latch first (nobody commands while it holds), then someone
 * else's lease (named, with or without a lease id: that is what the client needs to know), then
 * no lease id, then an unknown or lapsed one.
 */
export function leaseError(authority: ControlAuthority, leaseId: string | null | undefined): BodylinkError | null {
  // The holder's command (every LoLA cycle) takes only this line: small enough to be inlined.
  if (!authority.latched && leaseId && authority.isHeld(leaseId)) return null;
  return leaseRefusal(authority, leaseId);
}

/** Why `leaseId` may not command now (leaseError's rare path, apart so its common one stays small; not latched, it is not held). */
function leaseRefusal(authority: ControlAuthority, leaseId: string | null | undefined): BodylinkError {
  if (authority.latched) return new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(authority.estop));
  const h = authority.holder();
  if (h) return new BodylinkError("BL_ERR_AUTH_HELD", `${h.owner} (${h.source})`, new Date(h.expiresAtEpochMs).toISOString());
  if (!leaseId) return new BodylinkError("BL_ERR_AUTH_REQUIRED");
  return new BodylinkError("BL_ERR_AUTH_UNKNOWN_LEASE", leaseId);
}

function clampLease(ms: number): number {
  if (!Number.isFinite(ms)) return DEFAULT_LEASE_MS;
  return Math.min(MAX_LEASE_MS, Math.max(MIN_LEASE_MS, ms));
}
