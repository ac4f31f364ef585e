/**
 * The NAO as the robot API's adapter, the stream and the CLI use it: one declared surface that
 * both the in-thread robot (NaoRobot) and the core's host on the main thread (NaoHost,
 * src/host/nao-host.ts) implement, checked by the compiler (`implements NaoBody`), so the API never
 * takes one for the other by a cast.
 *
 * State reads are synchronous (NaoHost copies the core's newest state out of shared memory before
 * every cycle listener runs). A joint/LED/sonar command answers at once with what validation found
 * (NaoHost validates on its thread and posts it to the core's mailbox); smooth motions may answer
 * asynchronously.
 */
import type { NaoSimPose } from "../bodies/nao/sim-world.js";
import type { CommandProblem, NaoCommandUpdate } from "../bodies/nao/commands.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import type { NaoState } from "../bodies/nao/state.js";
import type { BodylinkError } from "../errors.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import type { Awaitable } from "./authority.js";
import type { BodyRuntime, SimResetResult } from "./robot.js";

export type NaoRefusal = { readonly ok: false; readonly error: BodylinkError };

export interface NaoBody extends BodyRuntime {
  readonly kind: "nao";
  readonly periodMs: number;
  /** The newest state (on a host: refreshed before every cycle listener runs). */
  readonly state: NaoState;
  /** The body's preferences, once configured (null before). */
  readonly prefs: NaoPreferences | null;
  /** Why the body link never has preferences (an upstream LoLA), or null. */
  readonly prefsUnavailable: string | null;
  /** The motor-board handshake's result per board, once configured. */
  readonly boards: readonly BoardReport[];
  /** Validate and apply a partial command (LoLA keys, order and units). Cancels a smooth motion. */
  command(leaseId: string, update: NaoCommandUpdate): { ok: true; problems: CommandProblem[] } | NaoRefusal;
  /** Stiffness up and into the stand posture; the estimated duration in seconds. */
  smoothEnable(leaseId: string): Awaitable<{ ok: true; estimatedS: number } | NaoRefusal>;
  /** Into the rest posture, then stiffness off; the estimated duration in seconds. */
  smoothDisable(leaseId: string): Awaitable<{ ok: true; estimatedS: number } | NaoRefusal>;
  /** Put the simulated world into `pose` (refused on a real body); the simulated time after it, s. */
  simReset(leaseId: string, pose: NaoSimPose): Awaitable<SimResetResult>;
}
