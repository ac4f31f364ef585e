/**
 * The AIRBOT P7 driver: the body seam (../driver.ts) over the simulated arm. The arm holds
 * set-points (point-to-point moves, servo targets) that the core hands it on the prepare side
 * (`moveTo`, `servo`, `stopAll`, `clearError`); `write` lets it execute them for the time elapsed
 * since the last write (at most 100 ms: a paused process must not lurch the arm); `read` copies its
 * frame into the state model by model, with the SDK's length checks.
 *
 * A real arm's driver would implement the same P7Driver over its SDK's transport.
 * Perform side (`read`, `write`) allocates nothing.
 */
import { P7_JOINT_COUNT } from "../../bodies/p7/joints.js";
import type { P7State } from "../../bodies/p7/state.js";
import { P7Sim, type P7SimFrame } from "../../sim/p7/arm-sim.js";
import type { P7SimParams } from "../../sim/p7/constants.js";
import { type BodyDriver, IO } from "../driver.js";

/** Elapsed time beyond this between two writes is not simulated. */
export const P7_MAX_STEP_MS = 100;

export interface P7Driver extends BodyDriver<P7State, null> {
  /** True while the arm answers. */
  readonly linkUp: boolean;
  /** Point-to-point move; returns the estimated duration, s. */
  moveTo(targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>): number;
  servo(targetsRad: ArrayLike<number>): void;
  /** Every joint decelerates at its stop rate and holds. */
  stopAll(): void;
  /** Every joint stops where it is, now (category-0 emergency stop). */
  halt(): void;
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
}

export class P7SimDriver implements P7Driver {
  readonly name = "sim";
  /** The simulated arm (fault hooks for tests). */
  readonly sim: P7Sim;
  #lastWriteMs = Number.NaN;
  /** The arm moved since the last read: there is a new frame. */
  #fresh = false;

  constructor(opts: P7SimDriverOptions = {}) {
    this.sim = new P7Sim({ seed: opts.seed ?? 1, params: opts.params, initialAnglesRad: opts.initialAnglesRad });
  }

  get linkUp(): boolean {
    return this.sim.linkUp;
  }

  async configure(): Promise<void> {}

  async activate(): Promise<void> {
    this.#lastWriteMs = Number.NaN; // time spent stopped is not simulated
  }

  write(nowMs: number): number {
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

  moveTo(targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>): number {
    return this.sim.moveTo(targetsRad, speedRadS);
  }
  servo(targetsRad: ArrayLike<number>): void {
    this.sim.servo(targetsRad);
  }
  stopAll(): void {
    this.sim.stopAll();
  }
  halt(): void {
    this.sim.halt();
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
}
