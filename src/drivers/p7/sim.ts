/**
 * The AIRBOT P7 driver: the body seam (../driver.ts) over the simulated arm. `write` takes the
 * core's command (bodies/p7/commands.ts: a move, servo targets, or the core's own hold or halt;
 * validated once before it got here), hands it to the arm and clears it, then lets the arm execute
 * for the time elapsed since the last write (at most 100 ms: a paused process must not lurch the
 * arm); `read` copies its frame into the state model by model, with the SDK's length checks.
 *
 * Besides the command, the driver answers what its caller needs now: `clearError` (which joints it
 * cleared), and the arm's link, rest and error ids. `apply` is `write` without the step: what the
 * core does before a request that must come after the pending command (clearError) or must not
 * wait for the next cycle (the e-stop).
 *
 * A real arm's driver would implement the same P7Driver over its SDK's transport.
 * Perform side (`read`, `write`, `apply`) allocates nothing.
 */
import { type P7Commands, P7_WRITE_KIND } from "../../bodies/p7/commands.js";
import { P7_HOME_RAD, P7_JOINT_COUNT } from "../../bodies/p7/joints.js";
import type { P7State } from "../../bodies/p7/state.js";
import { P7Sim, type P7SimFrame } from "../../sim/p7/arm-sim.js";
import type { P7SimParams } from "../../sim/p7/constants.js";
import type { P7BodyModel } from "../../sim/p7/model.js";
import { MujocoP7Model } from "../../sim/p7/physics/mujoco-p7.js";
import { type BodyDriver, IO } from "../driver.js";

/** Elapsed time beyond this between two writes is not simulated. */
export const P7_MAX_STEP_MS = 100;

export interface P7Driver extends BodyDriver<P7State, P7Commands> {
  /** True while the arm answers. */
  readonly linkUp: boolean;
  /** Hand the pending command (if any) to the arm now and clear it; `write` does this before its step. */
  apply(command: P7Commands): void;
  /** True when no joint is moving and none is stopping. */
  readonly atRest: boolean;
  errorId(joint: number): number;
  /** Clear one joint's error id (or all); returns the joints cleared. */
  clearError(joint?: number): number[];
  /** The newest frame without advancing (prepare side, e.g. after clearError), or null when the link is down. */
  peek(): P7SimFrame | null;
}

export interface P7SimDriverOptions {
  seed?: number;
  params?: Partial<P7SimParams>;
  initialAnglesRad?: ArrayLike<number>;
  /** The arm's mechanics (`physicsP7Model()` for `serve --sim physics`); defaults to the kinematic model. */
  model?: P7BodyModel;
}

/**
 * The MuJoCo P7 (`serve --body p7 --sim physics`), at rest in the home pose (the simulator resets
 * it to its start). Typed as the seam, so the published declarations never reach @mujoco/mujoco's.
 */
export function physicsP7Model(): Promise<P7BodyModel> {
  return MujocoP7Model.create(P7_HOME_RAD);
}

export class P7SimDriver implements P7Driver {
  readonly name = "sim";
  /** The simulated arm (fault hooks for tests). */
  readonly sim: P7Sim;
  #lastWriteMs = Number.NaN;
  /** The arm moved since the last read: there is a new frame. */
  #fresh = false;

  constructor(opts: P7SimDriverOptions = {}) {
    this.sim = new P7Sim({ seed: opts.seed ?? 1, params: opts.params, initialAnglesRad: opts.initialAnglesRad, ...(opts.model ? { model: opts.model } : {}) });
  }

  get linkUp(): boolean {
    return this.sim.linkUp;
  }

  async configure(): Promise<void> {}

  async activate(): Promise<void> {
    this.#lastWriteMs = Number.NaN; // time spent stopped is not simulated
  }

  write(nowMs: number, command: P7Commands): number {
    this.apply(command);
    const dtMs = Number.isNaN(this.#lastWriteMs) ? 0 : Math.min(P7_MAX_STEP_MS, Math.max(0, nowMs - this.#lastWriteMs));
    this.#lastWriteMs = nowMs;
    this.sim.advance(dtMs / 1000);
    this.#fresh = true;
    return IO.Sent;
  }

  read(_nowMs: number, s: P7State): number {
    if (!this.#fresh) return IO.None;
    this.#fresh = false;
    const f = this.sim.read();
    if (f === null) return IO.Failed;
    const n = P7_JOINT_COUNT;
    s.jointValid = f.angles.length === n && f.velocities.length === n && f.efforts.length === n;
    if (s.jointValid) {
      s.angles.set(f.angles);
      s.velocities.set(f.velocities);
      s.efforts.set(f.efforts);
    }
    s.motorValid = f.temperatures.length === n && f.errorIds.length === n;
    if (s.motorValid) {
      s.temperatures.set(f.temperatures);
      s.errorIds.set(f.errorIds);
    }
    s.imuValid = f.angularVelocity.length === 3 && f.linearAcceleration.length === 3;
    if (s.imuValid) {
      s.angularVelocity.set(f.angularVelocity);
      s.linearAcceleration.set(f.linearAcceleration);
    }
    return IO.Fresh;
  }

  async deactivate(): Promise<void> {
    this.sim.stopAll();
  }

  async close(): Promise<void> {}

  apply(c: P7Commands): void {
    const kind = c.header[0]!;
    if (kind === P7_WRITE_KIND.none) return;
    c.header[0] = P7_WRITE_KIND.none;
    if (kind === P7_WRITE_KIND.moveJoints) this.sim.moveTo(c.targetsRad, c.speedRadS);
    else if (kind === P7_WRITE_KIND.servoJoints) this.sim.servo(c.targetsRad);
    else if (kind === P7_WRITE_KIND.hold) this.sim.stopAll();
    else if (kind === P7_WRITE_KIND.halt) this.sim.halt();
    else throw new RangeError(`P7 command kind ${kind} is not one of P7_WRITE_KIND`); // a bug: the core writes only these
  }
  get atRest(): boolean {
    return this.sim.atRest;
  }
  errorId(joint: number): number {
    return this.sim.errorId(joint);
  }
  clearError(joint?: number): number[] {
    return this.sim.clearError(joint);
  }
  peek(): P7SimFrame | null {
    return this.sim.read();
  }
  /** The simulated world at rest at `anglesRad` (P7Sim.resetWorld); the next `read` copies its frame. Prepare side. */
  resetWorld(anglesRad: ArrayLike<number>): void {
    this.sim.resetWorld(anglesRad);
    this.#fresh = true;
  }
}
