/**
 * The gait planner and body IK as the simulator's 5 ms tick runs them: the same arithmetic as
 * `GaitPlanner.step` (bodies/tny360/gait.ts) and `bodyIK`/`legIK` (bodies/tny360/kinematics.ts),
 * step for step, with their per-step numbers passed in Float64Array slots instead of arguments.
 * Perform side; allocates nothing.
 *
 * Why a second copy: V8 passes arguments tagged, so a double handed to a call it does not inline is
 * boxed (a 16-byte heap number per argument per call). `GaitPlanner.step` (820 bytes of bytecode)
 * and `legIK` (603) are over V8's 460-byte inlining limit, so every planner step and every leg's IK
 * allocated. test/tny/tick-kinematics.test.ts checks that both copies give bit-identical results.
 * TODO: give the shared planner and leg IK slot-based entry points and drop this copy.
 */
import { CALF_LENGTH_M, DEFAULT_FEET_M, HIP_OFFSET_M, HIP_POSITIONS_M, IkStatus, type IkStatusCode, LEG_REACH_M, legAnglesWithinLimits, rotationXYZ, THIGH_LENGTH_M } from "../../bodies/tny360/kinematics.js";
import { DEFAULT_GAIT_PARAMS, GAIT_PHASE_OFFSETS, type GaitParams } from "../../bodies/tny360/gait.js";
import { LEG_Y_INVERTED } from "../../bodies/tny360/joints.js";
import { GaitType, LEG_COUNT } from "../../wire/tny/constants.js";

const TWO_PI = 2 * Math.PI;

/** `GaitPlanner` with `advance()` reading its inputs from `input` (same fields, same behaviour). */
export class TickGaitPlanner {
  /** Foot targets, planner frame, 4 × [x, y, z] m (leg order FL, BL, BR, FR). */
  readonly feet: Float64Array = Float64Array.from(DEFAULT_FEET_M);
  /** 1 while the leg is in stance. */
  readonly stance: Uint8Array = new Uint8Array(LEG_COUNT).fill(1);
  readonly params: GaitParams;
  /** Inputs of the next `advance()`: [dtS, vx m/s, vy m/s, wz rad/s], planner frame. */
  readonly input = new Float64Array(4);
  gait: number = GaitType.Walk;
  /** False when planted and idle (no velocity and every foot at its default). */
  active = false;
  /** [0] = global phase 0..1. */
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

  /** `GaitPlanner.step(dtS, vx, vy, wz)` for tests and prepare-side callers. */
  step(dtS: number, vx: number, vy: number, wz: number): void {
    const i = this.input;
    i[0] = dtS;
    i[1] = vx;
    i[2] = vy;
    i[3] = wz;
    this.advance();
  }

  /** Advance by `input` (see `GaitPlanner.step`). */
  advance(): void {
    const input = this.input;
    const dtS = input[0]!, vx = input[1]!, vy = input[2]!, wz = input[3]!;
    const moving = vx !== 0 || vy !== 0 || wz !== 0;
    if (!moving && !this.active) return;
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
      const tx = dx + (lvx * stanceS) / 2;
      const ty = dy + (lvy * stanceS) / 2;
      if (legPhase < duty) {
        if (!this.stance[leg]) {
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
        const s = tau - Math.sin(TWO_PI * tau) / TWO_PI;
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

const L1 = THIGH_LENGTH_M;
const L2 = CALF_LENGTH_M;
const H = HIP_OFFSET_M;
/** kinematics.ts's rounding slack at full reach. */
const REACH_EPS_M = 1e-12;
const rot = new Float64Array(9);
/** The leg-frame foot target of the leg being solved: [x, y, z] m. */
const target = new Float64Array(3);

/** `bodyIK(posture, feet, outAngles, status)`: same inputs, outputs and return value. */
export function tickBodyIK(posture: Float64Array, feet: Float64Array, outAngles: Float64Array, status: Uint8Array): number {
  rotationXYZ(posture[3]!, posture[4]!, posture[5]!, rot);
  let refused = 0;
  for (let leg = 0; leg < LEG_COUNT; leg++) {
    const code = footToLegFrame(leg, feet[leg * 3]! - posture[0]!, feet[leg * 3 + 1]! - posture[1]!, feet[leg * 3 + 2]! - posture[2]!) ? solveLeg(outAngles, leg * 3) : IkStatus.NonFinite;
    status[leg] = code;
    if (code !== IkStatus.Ok) refused++;
  }
  return refused;
}

/** kinematics.ts `footToLegFrame` into `target`; false for a non-finite offset. Small: inlined. */
function footToLegFrame(leg: number, dx: number, dy: number, dz: number): boolean {
  if (!(Number.isFinite(dx) && Number.isFinite(dy) && Number.isFinite(dz))) return false;
  const r = rot;
  const bx = r[0]! * dx + r[3]! * dy + r[6]! * dz;
  const by = r[1]! * dx + r[4]! * dy + r[7]! * dz;
  const bz = r[2]! * dx + r[5]! * dy + r[8]! * dz;
  target[0] = bx - HIP_POSITIONS_M[leg * 2]!;
  const ly = by - HIP_POSITIONS_M[leg * 2 + 1]!;
  target[1] = LEG_Y_INVERTED[leg] ? -ly : ly;
  target[2] = bz;
  return true;
}

/** kinematics.ts `legIK(target…, out, at)` with the limits checked; angles untouched when refused. */
function solveLeg(out: Float64Array, at: number): IkStatusCode {
  const x = target[0]!, y = target[1]!, z = target[2]!;
  if (!(Number.isFinite(x) && Number.isFinite(y) && Number.isFinite(z))) return IkStatus.NonFinite;
  const r2 = y * y + z * z - H * H;
  if (r2 < 0) return IkStatus.InsideHipOffset;
  const dzy = Math.sqrt(r2);
  if (dzy > LEG_REACH_M + REACH_EPS_M) return IkStatus.OutOfReach;
  const d2 = dzy * dzy + x * x;
  const d = Math.sqrt(d2);
  if (d > LEG_REACH_M + REACH_EPS_M) return IkStatus.OutOfReach;
  if (d < 1e-9) return IkStatus.AtHip;
  const roll = wrapPi(Math.atan2(-y, -z) - Math.atan2(H, dzy));
  const cosA = clamp1((L1 * L1 + d2 - L2 * L2) / (2 * L1 * d));
  const pitch = Math.atan2(x, dzy) - Math.acos(cosA);
  const cosK = clamp1((L1 * L1 + L2 * L2 - d2) / (2 * L1 * L2));
  const knee = Math.PI - Math.acos(cosK);
  if (!legAnglesWithinLimits(roll, pitch, knee)) return IkStatus.JointLimits;
  out[at] = roll;
  out[at + 1] = pitch;
  out[at + 2] = knee;
  return IkStatus.Ok;
}

function clamp1(v: number): number {
  return Math.min(1, Math.max(-1, v));
}

function wrapPi(a: number): number {
  if (a > Math.PI) return a - 2 * Math.PI;
  if (a <= -Math.PI) return a + 2 * Math.PI;
  return a;
}
