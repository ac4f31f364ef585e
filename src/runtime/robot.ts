/**
 * What every body's runtime object has in common. Servers (robot API, LoLA, TNY-360) and the CLI
 * work against this plus the body-specific surface (NaoRobot, P7Robot, Tny360Robot).
 */
import type { Authority, Awaitable, ControlAuthority } from "./authority.js";
import type { Clock } from "./clock.js";
import type { EstopRequest, EstopResetRequest, EstopState, StopCategory } from "./estop.js";
import type { CycleLoop } from "./loop.js";
import type { SimHealth } from "./sim-time.js";
import type { ThreadStatsSnapshot } from "./thread-stats.js";
import type { TimingSummary } from "./timing.js";

import type { LinkStatus } from "../bodies/link.js";
import type { BodylinkError } from "../errors.js";
import type { SafetyCode } from "../bodies/safety.js";
import type { BodyKind } from "../bodies/registry.js";

export type { BodyKind };

export interface RobotHealth {
  readonly body: BodyKind;
  /** "ok" while the link answers; "degraded" on sporadic errors; "lost" when it stopped answering. */
  readonly link: LinkStatus;
  /** Why the body is in (or on its way to) its safe state; "none" when commands flow. */
  readonly safety: SafetyCode;
  /** The same in words, with the details; null when commands flow. */
  readonly safetyReason: string | null;
  /** `core`: the thread that runs the cycle (a worker core's own thread, else the main thread). */
  readonly cycle: TimingSummary & { readonly nominalPeriodMs: number; readonly core: ThreadStatsSnapshot };
  readonly errors: Readonly<Record<string, number>>;
  readonly control: { readonly owner: string; readonly source: string; readonly expiresAtEpochMs: number } | null;
  readonly estop: EstopState;
  /** A simulated body's time and real-time factor (runtime/sim-time.ts); null on a real body. */
  readonly sim: SimHealth | null;
}

export interface HealthOptions {
  readonly windowCycles?: number;
}

/**
 * A body as the servers (robot API, fleet bridge, safety log, the stop path) use it, whether its
 * robot runs on this thread (NaoRobot, P7Robot, Tny360Robot: answers at once) or in a core
 * (its host, e.g. NaoHost: reads answer at once from shared memory, changes and health answer asynchronously
 * with a bounded timeout). Callers `await` the Awaitable members.
 */
export interface BodyRuntime {
  readonly kind: BodyKind;
  readonly clock: Clock;
  readonly authority: ControlAuthority;
  /** Configure the link and start the cycle. */
  start(): Promise<void>;
  /** Go to a safe state, stop the cycle, release the link. Idempotent. */
  stop(): Promise<void>;
  /** `windowCycles`: the cycle percentiles describe only that many of the latest cycles (default: all the ring holds). */
  health(opts?: HealthOptions): Awaitable<RobotHealth>;
  /** The category an e-stop request without one gets (documented per body). */
  readonly defaultStopCategory: StopCategory;
  /** Emergency stop: no lease needed; latched until `resetEstop` (estop.ts). */
  estop(req: EstopRequest): Awaitable<EstopState>;
  /** Shorthand for `estop({ source: "local", reason })` with the default category. */
  emergencyStop(reason: string, category?: StopCategory): Awaitable<EstopState>;
  resetEstop(req: EstopResetRequest): Awaitable<EstopState>;
  /** The latch as known now (never waits). */
  estopState(): EstopState;
  /** After every body cycle (perform side of the thread that runs it: keep listeners cheap). */
  onCycle(listener: (seq: number, nowMs: number) => void): () => void;
  /**
   * Optional: every `periodMs` of this thread's own timer, when the body ran a cycle since the last
   * call (a host whose core cycles in another thread: CoreHost.onSample). A consumer that samples
   * (the 20 Hz stream) then wakes at its rate, not at the body's; without it, it decimates onCycle.
   */
  onSample?(periodMs: number, listener: (seq: number, nowMs: number) => void): () => void;
  /**
   * Optional, never waits: the late cycles so far and a count of link status changes (a host whose
   * core publishes them in shared memory: CoreHost). The safety log's once-a-second look reads
   * these and asks for `health` only when the link changed; without it, it asks every time.
   */
  safetyCounters?(): SafetyCounters;
}

/** See BodyRuntime.safetyCounters. */
export interface SafetyCounters {
  readonly lateCycles: number;
  /** Moves whenever the link status (health's `link`) changes; its value means nothing by itself. */
  readonly linkChanges: number;
}

/** A robot on this thread (an in-thread robot): everything answers at once, and its loop is here. */
export interface RobotBase extends BodyRuntime {
  readonly authority: Authority;
  readonly loop: CycleLoop;
  health(opts?: HealthOptions): RobotHealth;
  estop(req: EstopRequest): EstopState;
  emergencyStop(reason: string, category?: StopCategory): EstopState;
  resetEstop(req: EstopResetRequest): EstopState;
}

/**
 * The answer to `POST /v1/sim/reset` on any body: the world's simulated time after it (0: a reset
 * restarts the world's clock, `sim.time_s` and health's alike), or why it was refused.
 */
export type SimResetResult = { readonly ok: true; readonly timeS: number } | { readonly ok: false; readonly error: BodylinkError };
