/**
 * TNY-360 gait planner (`GaitPlanner.cpp`, tny360.md §10.4): foot targets in the planner frame
 * from a body velocity command. Perform side: `advance()` reads its step and velocity from the
 * `input` slots and writes into preallocated arrays; it allocates nothing.
 *
 * Why slots: V8 passes arguments tagged, so a double handed to a call it does not inline is boxed
 * (a 16-byte heap number per argument per call), and `advance()` is over V8's inlining budget.
 * `step(dtS, vx, vy, wz)` is a small (inlinable) wrapper that fills the slots and advances.
 *
 * - Step frequency 2 Hz, duty factor 0.6, step height 0.02 m, stance depth 0.
 * - Leg phase = (global phase + offset) mod 1; stance while phase < duty, swing after.
 * - Stance: the foot moves linearly against the leg's velocity (v − ω × p), so the body moves at
 *   the commanded velocity; yaw adds (−ω·yᵢ, +ω·xᵢ) per leg, with (xᵢ, yᵢ) the default foot.
 * - Swing: x and y follow a cycloid from lift-off to the next touchdown (default + v·T_stance/2,
 *   so the stance is centred on the default foot); z = h·sin(πτ).
 *
 * Deliberate difference from the firmware: with a zero velocity the firmware snaps every foot to
 * its default position, which drags planted feet across the ground. Here the planner keeps
 * stepping with a zero stride until each foot has swung back to its default position, then stops
 * (feet planted, phase reset). The stop takes at most one gait cycle (0.5 s at 2 Hz).
 */
import { GaitType, LEG_COUNT } from "../../wire/tny/constants.js";
import { DEFAULT_FEET_M } from "./kinematics.js";

export const STEP_FREQUENCY_HZ = 2;
export const DUTY_FACTOR = 0.6;
export const STEP_HEIGHT_M = 0.02;
/** The firmware warns when Creep runs with a duty factor below this. */
export const CREEP_MIN_DUTY = 0.75;

/** Phase offsets per gait, legs FL, BL, BR, FR (§10.4). Unknown values use Walk's (firmware). */
export const GAIT_PHASE_OFFSETS: Readonly<Record<number, readonly number[]>> = {
  [GaitType.Creep]: [0, 0.5, 0.25, 0.75],
  [GaitType.Walk]: [0, 0.5, 0, 0.5],
  [GaitType.Run]: [0, 0.5, 0.5, 0],
};

export interface GaitParams {
  readonly stepFrequencyHz: number;
  readonly dutyFactor: number;
  readonly stepHeightM: number;
}

export const DEFAULT_GAIT_PARAMS: GaitParams = { stepFrequencyHz: STEP_FREQUENCY_HZ, dutyFactor: DUTY_FACTOR, stepHeightM: STEP_HEIGHT_M };

const TWO_PI = 2 * Math.PI;

export class GaitPlanner {
  /** Foot targets, planner frame, 4 × [x, y, z] m (leg order FL, BL, BR, FR). */
  readonly feet: Float64Array = Float64Array.from(DEFAULT_FEET_M);
  /** 1 while the leg is in stance. */
  readonly stance: Uint8Array = new Uint8Array(LEG_COUNT).fill(1);
  readonly params: GaitParams;
  /** Inputs of the next `advance()`: [dtS, vx m/s, vy m/s, wz rad/s], planner frame. */
  readonly input: Float64Array = new Float64Array(4);
  gait: number = GaitType.Walk;
  /** False when planted and idle (no velocity and every foot at its default). */
  active = false;
  /** [0] = global phase 0..1 (a slot: a double field is boxed once its representation goes generic). */
  readonly #phase = new Float64Array(1);
  readonly #liftoff = new Float64Array(LEG_COUNT * 3);
  readonly #touchdown = new Float64Array(LEG_COUNT * 3);

  constructor(params: GaitParams = DEFAULT_GAIT_PARAMS) {
    this.params = params;
  }

  /** Global phase 0..1. */
  get phase(): number {
    return this.#phase[0]!;
  }

  /** Planted at the default feet, idle. */
  reset(): void {
    this.feet.set(DEFAULT_FEET_M);
    this.stance.fill(1);
    this.#phase[0] = 0;
    this.active = false;
  }

  /** Advance by `dtS` with body velocity (vx, vy) m/s and yaw rate wz rad/s in the planner frame. */
  step(dtS: number, vx: number, vy: number, wz: number): void {
    const input = this.input;
    input[0] = dtS;
    input[1] = vx;
    input[2] = vy;
    input[3] = wz;
    if (!this.idle) this.advance();
  }

  /**
   * True when `advance()` would do nothing: planted, idle, and `input` commands no velocity. Small
   * enough to inline: a hot caller asks this first (standing still is the usual tick), because
   * `advance()` itself is boxed-read territory until V8 optimises it — unoptimised, each of its
   * slot reads allocates a 16-byte heap number, and a function that returns at once takes V8
   * 6,000-8,000 calls (30-40 s of 5 ms ticks) to optimise again after any deopt.
   */
  get idle(): boolean {
    const input = this.input;
    return !this.active && input[1] === 0 && input[2] === 0 && input[3] === 0;
  }

  /** Advance by the step and velocity in `input` (see `step`). Allocation-free once optimised. */
  advance(): void {
    if (this.idle) return;
    const input = this.input;
    const dtS = input[0]!,
      vx = input[1]!,
      vy = input[2]!,
      wz = input[3]!;
    const moving = vx !== 0 || vy !== 0 || wz !== 0;
    this.active = true;
    const { stepFrequencyHz: freq, dutyFactor: duty, stepHeightM: height } = this.params;
    const offsets = GAIT_PHASE_OFFSETS[this.gait] ?? GAIT_PHASE_OFFSETS[GaitType.Walk]!;
    const stanceS = duty / freq;
    const phase = (this.#phase[0]! + freq * dtS) % 1;
    this.#phase[0] = phase;
    const feet = this.feet;
    let settled = !moving;
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const i = leg * 3;
      const dx = DEFAULT_FEET_M[i]!;
      const dy = DEFAULT_FEET_M[i + 1]!;
      const lvx = vx - wz * dy;
      const lvy = vy + wz * dx;
      const legPhase = (phase + offsets[leg]!) % 1;
      // Where this leg's next touchdown is: stance centred on the default foot.
      const tx = dx + (lvx * stanceS) / 2;
      const ty = dy + (lvy * stanceS) / 2;
      if (legPhase < duty) {
        if (!this.stance[leg]) {
          // touchdown: land exactly where the swing aimed (the last swing tick is short of τ = 1)
          feet[i] = this.#touchdown[i]!;
          feet[i + 1] = this.#touchdown[i + 1]!;
        }
        feet[i] = feet[i]! - lvx * dtS;
        feet[i + 1] = feet[i + 1]! - lvy * dtS;
        feet[i + 2] = 0;
        this.stance[leg] = 1;
      } else {
        if (this.stance[leg]) {
          this.#liftoff[i] = feet[i]!;
          this.#liftoff[i + 1] = feet[i + 1]!;
          this.stance[leg] = 0;
        }
        const tau = (legPhase - duty) / (1 - duty);
        const s = tau - Math.sin(TWO_PI * tau) / TWO_PI; // cycloid 0 → 1 with zero speed at both ends
        const lx = this.#liftoff[i]!;
        const ly = this.#liftoff[i + 1]!;
        feet[i] = lx + (tx - lx) * s;
        feet[i + 1] = ly + (ty - ly) * s;
        feet[i + 2] = height * Math.sin(Math.PI * tau);
        this.#touchdown[i] = tx;
        this.#touchdown[i + 1] = ty;
      }
      if (settled && (!this.stance[leg] || Math.abs(feet[i]! - dx) > 1e-9 || Math.abs(feet[i + 1]! - dy) > 1e-9)) settled = false;
    }
    if (settled) {
      this.feet.set(DEFAULT_FEET_M);
      this.#phase[0] = 0;
      this.active = false;
    }
  }
}
