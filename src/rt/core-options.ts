/**
 * What each body's threaded core takes (src/rt/<body>-worker.ts; its host src/host/<body>-host.ts):
 * plain data, it crosses in workerData. The buffer's layout is every core's (core-shm.ts) with the
 * body's state region (src/bodies/<body>/layout.ts).
 */
import type { WakeCounts } from "../runtime/clock.js";
import type { SimResetResult } from "../runtime/robot.js";
import type { NaoSimKind } from "../bodies/nao/sim-world.js";
import type { SimKind } from "../bodies/sim-world.js";
import type { P7SimPose } from "../bodies/p7/joints.js";
import type { Tny360SimPose } from "../bodies/tny360/poses.js";
import type { CoreBaseOptions } from "./core-shm.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import type { P7ClearAccepted, P7CommandResult } from "../runtime/p7-robot.js";
import type { Tny360CommandResult, Tny360SmoothResult } from "../runtime/tny360-robot.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import type { BodylinkError } from "../errors.js";
import type { NaoSimPose } from "../bodies/nao/sim-world.js";

/**
 * The NAO core's lead (CoreBaseOptions.spinMs) when `serve --core-spin-ms` gives none: 0, no final
 * spin. Its cycle starts when the futex wakes, on the development VM 0.06 ms after the deadline at
 * p50 and 0.1–0.2 ms at p99 (against its 6 ms late bound; LoLA's own frames jitter more), and the
 * core's thread took 0.88–0.99× the CPU of the learned lead's spin side by side
 * (docs/performance.md, "third pass").
 */
export const NAO_CORE_SPIN_MS = 0;

export interface NaoCoreOptions extends CoreBaseOptions {
  seed: number;
  usb: boolean;
  acceptBoardVersions: readonly number[];
  /** The simulated body's mechanics (without --usb): the kinematic puppet or MuJoCo physics. */
  sim?: NaoSimKind;
  lola: { path: string; fallbackPath: string | null; readers: number; graceMs: number; group?: string } | null;
  /**
   * Run on top of the robot's own LoLA at `path` instead of the chest board (docs/lola.md, "On a
   * stock robot"): the core owns the upstream client, the driver and our LoLA server.
   */
  upstream?: { path: string; stallMs?: number } | null;
}

export interface P7CoreOptions extends CoreBaseOptions {
  seed: number;
  /** The simulated arm's mechanics: the kinematic model (the default) or MuJoCo physics. */
  sim?: SimKind;
}

export interface Tny360CoreOptions extends CoreBaseOptions {
  seed: number;
  /** The simulated body's mechanics (without a real robot): the kinematic model or MuJoCo physics. */
  sim?: SimKind;
  /** A real robot instead of the simulator. */
  remote: { host: string; port: number } | null;
  /**
   * The TNY-360 API server, when it runs on the core's thread (docs/architecture.md says why it
   * does by default): where it listens, the access rules (web-access.ts), and whether a taken port
   * falls back to a free one (no --tny-port given).
   */
  server: {
    host: string;
    port: number;
    fallbackToFreePort: boolean;
    token: string | null;
    allowHosts: string[];
    allowOrigins: string[];
  } | null;
}

// ---- each core's requests (its handlers implement them, its host calls them) and its `ready` facts ----

/** The NAO core's own requests: the commands whose answer is the body's (the smooth motions). */
export interface NaoRequests {
  smoothEnable(leaseId: string): { ok: true; estimatedS: number } | { ok: false; error: BodylinkError };
  smoothDisable(leaseId: string): { ok: true; estimatedS: number } | { ok: false; error: BodylinkError };
  motionActive(): boolean;
  /** The simulated body put back in a pose (docs/simulation.md). */
  simReset(leaseId: string, pose: NaoSimPose): SimResetResult;
}

/** What the NAO core says once ready. */
export interface NaoReady {
  readonly prefs: NaoPreferences | null;
  /** Why the body link never has preferences (an upstream LoLA), or null. */
  readonly prefsUnavailable: string | null;
  readonly boards: readonly BoardReport[];
  /** With an upstream LoLA: whether it was connected when the core became ready (null otherwise). */
  readonly upstreamConnected: boolean | null;
  /** Where our LoLA server listens (null: not serving). */
  readonly lolaPath: string | null;
}

/** The P7 core's own requests. */
export interface P7Requests {
  /** `joint` null: every joint (JSON has no undefined). */
  clearError(leaseId: string, joint: number | null): P7CommandResult<P7ClearAccepted>;
  /** The physics world put back in a pose (docs/simulation.md). */
  simReset(leaseId: string, pose: P7SimPose): SimResetResult;
  /** Test hook (a core started with testFaults): the simulated arm's link drops (true) or comes back (false). */
  testLinkLoss(lost: boolean): boolean;
}

/** What the P7 core says once ready: nothing of its own. */
export type P7Ready = Record<string, never>;

/** The TNY-360 core's own requests: the smooth sequences and a leg's foot (their answers need the body's state). */
export interface Tny360Requests {
  setLegPosition(leaseId: string, legId: number, xM: number, yM: number, zM: number, clearOverrides: boolean): Tny360CommandResult;
  enableSmooth(leaseId: string): Tny360SmoothResult;
  disableSmooth(leaseId: string): Tny360SmoothResult;
  /** The physics world put back in a pose (docs/simulation.md). */
  simReset(leaseId: string, pose: Tny360SimPose): SimResetResult;
  /** Test hook: `ms` of the stopped simulator's own ticks (false on a real robot). */
  testTicks(ms: number): boolean;
  /** Test hook: the core clock's blocking waits and gaps so far (MonotonicClock.wakeCounts; null on another clock). */
  testWakeCounts(): WakeCounts | null;
}

/** What the TNY-360 core says once ready. */
export interface Tny360Ready {
  readonly source: "sim" | "remote";
  readonly periodMs: number;
  /** The TNY-360 API server's port in the core (null: not serving). */
  readonly tnyPort: number | null;
}
