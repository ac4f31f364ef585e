/**
 * TNY-360 kinematics (tny360.md §10.1–§10.3): leg IK and FK, body IK, and the frames they use.
 * Pure; every function writes into caller-owned arrays and allocates nothing (perform side).
 *
 * Why `legIK` takes its target in a Float64Array: V8 passes arguments tagged, so a double handed
 * to a call it does not inline is boxed (a 16-byte heap number per argument per call), and
 * `legIK` is over V8's inlining budget. The small functions here take plain numbers: inlined.
 *
 * Frames (all metres, radians):
 * - **planner frame**: ground level under the body centre, x forward, y left, z up, yawed with the
 *   robot. The gait planner's feet and `leg.setPosition` live here (default FL foot (0.09, 0.10, 0)).
 * - **body frame**: the body centre; the posture (x, y, z, rx, ry, rz) places it in the planner
 *   frame: p_planner = R · p_body + t, with R = Rz(rz)·Ry(ry)·Rx(rx) (Euler XYZ as rotations about
 *   the fixed axes, roll first; inferred: the firmware builds a quaternion from "Euler XYZ").
 * - **leg frame**: origin at the hip, body axes, with y negated for the y-inverted legs (FL, BL),
 *   so every leg solves the same IK. The foot hangs at y = −h (the hip offset) when the roll is 0.
 *
 * IK refuses, never returns NaN: a target inside the hip-offset cylinder (y² + z² < h²), beyond the
 * leg's reach, at the hip itself, non-finite, or needing angles outside the joint limits gets a
 * non-zero status and leaves the output untouched.
 */
import { LEG_COUNT } from "../../wire/tny/constants.js";
import { JOINT_MAX_RAD, JOINT_MIN_RAD, LEG_Y_INVERTED, withinLimits } from "./joints.js";

/** `config.hpp` constants (§10.1). */
export const THIGH_LENGTH_M = 0.1;
export const CALF_LENGTH_M = 0.1;
export const HIP_OFFSET_M = 0.034;
export const HIP_POS_X_M = 0.086;
export const HIP_POS_Y_M = 0.052;
export const DEFAULT_BODY_HEIGHT_M = 0.12;
export const DEFAULT_FEET_SPREAD_X_M = 0.09;
export const DEFAULT_FEET_SPREAD_Y_M = 0.1;
/** Full reach of a leg (thigh + calf). */
export const LEG_REACH_M = THIGH_LENGTH_M + CALF_LENGTH_M;

/** Hip positions in the body frame, [x, y] per leg: FL (+,+), BL (−,+), BR (−,−), FR (+,−). */
export const HIP_POSITIONS_M: Float64Array = Float64Array.from([HIP_POS_X_M, HIP_POS_Y_M, -HIP_POS_X_M, HIP_POS_Y_M, -HIP_POS_X_M, -HIP_POS_Y_M, HIP_POS_X_M, -HIP_POS_Y_M]);
/** Default feet in the planner frame, [x, y, z] per leg. */
export const DEFAULT_FEET_M: Float64Array = Float64Array.from([
  DEFAULT_FEET_SPREAD_X_M,
  DEFAULT_FEET_SPREAD_Y_M,
  0,
  -DEFAULT_FEET_SPREAD_X_M,
  DEFAULT_FEET_SPREAD_Y_M,
  0,
  -DEFAULT_FEET_SPREAD_X_M,
  -DEFAULT_FEET_SPREAD_Y_M,
  0,
  DEFAULT_FEET_SPREAD_X_M,
  -DEFAULT_FEET_SPREAD_Y_M,
  0,
]);

/** IK outcome. 0 = solved; anything else = refused (output untouched). */
export const IkStatus = { Ok: 0, NonFinite: 1, InsideHipOffset: 2, OutOfReach: 3, AtHip: 4, JointLimits: 5 } as const;
export type IkStatusCode = (typeof IkStatus)[keyof typeof IkStatus];
export const IK_STATUS_NAMES: readonly string[] = ["ok", "non-finite target", "inside the hip offset", "out of reach", "at the hip", "outside the joint limits"];

const L1 = THIGH_LENGTH_M;
const L2 = CALF_LENGTH_M;
const H = HIP_OFFSET_M;
/** Rounding slack when the target sits exactly at full reach. */
const REACH_EPS_M = 1e-12;

/**
 * Leg IK (`computeLegIK`): foot target `target[0..2]` = (x, y, z) in the leg frame → hip roll,
 * hip pitch, knee (rad) written to `out[at..at+2]` (`out` may be `target`). With `checkLimits`
 * (default) the angles must be inside the leg's joint limits (those of FL, identical for all legs).
 */
export function legIK(target: Float64Array, out: Float64Array, at = 0, checkLimits = true): IkStatusCode {
  const x = target[0]!,
    y = target[1]!,
    z = target[2]!;
  if (!(Number.isFinite(x) && Number.isFinite(y) && Number.isFinite(z))) return IkStatus.NonFinite;
  const r2 = y * y + z * z - H * H;
  if (r2 < 0) return IkStatus.InsideHipOffset; // the firmware would take sqrt of a negative: NaN
  const dzy = Math.sqrt(r2);
  if (dzy > LEG_REACH_M + REACH_EPS_M) return IkStatus.OutOfReach;
  const d2 = dzy * dzy + x * x;
  const d = Math.sqrt(d2);
  if (d > LEG_REACH_M + REACH_EPS_M) return IkStatus.OutOfReach;
  if (d < 1e-9) return IkStatus.AtHip; // the thigh–foot angle is undefined
  const roll = wrapPi(Math.atan2(-y, -z) - Math.atan2(H, dzy));
  const cosA = clamp1((L1 * L1 + d2 - L2 * L2) / (2 * L1 * d));
  const pitch = Math.atan2(x, dzy) - Math.acos(cosA);
  const cosK = clamp1((L1 * L1 + L2 * L2 - d2) / (2 * L1 * L2));
  const knee = Math.PI - Math.acos(cosK); // 0 = fully extended
  if (!checkLimits) {
    out[at] = roll;
    out[at + 1] = pitch;
    out[at + 2] = knee;
    return IkStatus.Ok;
  }
  if (!legAnglesWithinLimits(roll, pitch, knee)) return IkStatus.JointLimits;
  // Within the tolerance but past a limit: the limit itself (rounding, not a different pose).
  out[at] = Math.min(Math.max(roll, JOINT_MIN_RAD[0]!), JOINT_MAX_RAD[0]!);
  out[at + 1] = Math.min(Math.max(pitch, JOINT_MIN_RAD[1]!), JOINT_MAX_RAD[1]!);
  out[at + 2] = Math.min(Math.max(knee, JOINT_MIN_RAD[2]!), JOINT_MAX_RAD[2]!);
  return IkStatus.Ok;
}

/**
 * How far past a joint limit an IK solution may land and still count as at the limit, rad. Near
 * full extension the knee comes out of `acos` with an error of about √ε ≈ 1.5e-8 rad (the FK is flat
 * there, so the target does not pin it down any better): a tolerance below that refused reachable
 * targets at the boundary. 1e-6 rad is three orders below a servo's resolution.
 */
export const IK_LIMIT_TOLERANCE_RAD = 1e-6;

/** Are (roll, pitch, knee) within the leg joint limits (IK_LIMIT_TOLERANCE_RAD tolerance)? */
export function legAnglesWithinLimits(roll: number, pitch: number, knee: number): boolean {
  const e = IK_LIMIT_TOLERANCE_RAD;
  return withinLimits(0, roll, e) && withinLimits(1, pitch, e) && withinLimits(2, knee, e);
}

/**
 * Leg FK (`computeFK`): in the sagittal plane knee = (L1 sin p, −L1 cos p), foot = knee +
 * L2 (sin(p+k), −cos(p+k)); lateral y = −h; then rotated about x by the roll (the sign that makes
 * FK the exact inverse of the IK above). Writes (x, y, z) in the leg frame to `out[at..at+2]`.
 */
export function legFK(roll: number, pitch: number, knee: number, out: Float64Array, at = 0): void {
  const sx = L1 * Math.sin(pitch) + L2 * Math.sin(pitch + knee);
  const sz = -(L1 * Math.cos(pitch) + L2 * Math.cos(pitch + knee));
  const c = Math.cos(roll);
  const s = Math.sin(roll);
  out[at] = sx;
  out[at + 1] = -H * c + sz * s;
  out[at + 2] = H * s + sz * c;
}

// ---------------------------------------------------------------------------------------------
// Rotations

/** R = Rz(rz)·Ry(ry)·Rx(rx) as a row-major 3×3 into `out[0..8]`. */
export function rotationXYZ(rx: number, ry: number, rz: number, out: Float64Array): void {
  const cx = Math.cos(rx),
    sx = Math.sin(rx);
  const cy = Math.cos(ry),
    sy = Math.sin(ry);
  const cz = Math.cos(rz),
    sz = Math.sin(rz);
  out[0] = cz * cy;
  out[1] = cz * sy * sx - sz * cx;
  out[2] = cz * sy * cx + sz * sx;
  out[3] = sz * cy;
  out[4] = sz * sy * sx + cz * cx;
  out[5] = sz * sy * cx - cz * sx;
  out[6] = -sy;
  out[7] = cy * sx;
  out[8] = cy * cx;
}

/** Euler XYZ (roll, pitch, yaw) of a row-major rotation matrix, the inverse of `rotationXYZ`. */
export function eulerXYZ(m: Float64Array, out: Float64Array, at = 0): void {
  out[at] = Math.atan2(m[7]!, m[8]!);
  out[at + 1] = Math.asin(clamp1(-m[6]!));
  out[at + 2] = Math.atan2(m[3]!, m[0]!);
}

// ---------------------------------------------------------------------------------------------
// Body IK and the way back

const rot = new Float64Array(9);
/** The leg-frame foot target of the leg being solved: [x, y, z] m. */
const legTarget = new Float64Array(3);

/**
 * Body IK (`computeBodyIK`, §10.2): for each leg, the planner-frame foot target is taken into the
 * body frame (R^T (p − t)), the hip position is subtracted, y is negated for y-inverted legs, and
 * the leg IK solves it. `posture` = [x, y, z, rx, ry, rz]; `feet` = 4 × [x, y, z]; `outAngles`
 * = 12 leg angles (JointId order); `status[leg]` = IkStatus. A refused leg keeps its old angles
 * (the firmware keeps the joints' old targets). Returns the number of refused legs.
 *
 * Float64Arrays only, by type: V8 keeps one compiled `bodyIK` per process, and once it had also
 * seen plain arrays (a test file that passed them, run earlier in the same worker) the
 * simulator's tick, which calls it, allocated 64 B a tick (measured; 0 with typed arrays only).
 */
export function bodyIK(posture: Float64Array, feet: Float64Array, outAngles: Float64Array, status: Uint8Array): number {
  rotationXYZ(posture[3]!, posture[4]!, posture[5]!, rot);
  let refused = 0;
  for (let leg = 0; leg < LEG_COUNT; leg++) {
    const st = footToLegFrame(leg, feet[leg * 3]! - posture[0]!, feet[leg * 3 + 1]! - posture[1]!, feet[leg * 3 + 2]! - posture[2]!, rot);
    const code = st === IkStatus.Ok ? legIK(legTarget, outAngles, leg * 3, true) : st; // refused: angles untouched
    status[leg] = code;
    if (code !== IkStatus.Ok) refused++;
  }
  return refused;
}

/** (dx, dy, dz) = foot − body position in the planner frame → leg frame in `legTarget`. Small: inlined. */
function footToLegFrame(leg: number, dx: number, dy: number, dz: number, r: Float64Array): IkStatusCode {
  if (!(Number.isFinite(dx) && Number.isFinite(dy) && Number.isFinite(dz))) return IkStatus.NonFinite;
  // R^T · d
  const bx = r[0]! * dx + r[3]! * dy + r[6]! * dz;
  const by = r[1]! * dx + r[4]! * dy + r[7]! * dz;
  const bz = r[2]! * dx + r[5]! * dy + r[8]! * dz;
  legTarget[0] = bx - HIP_POSITIONS_M[leg * 2]!;
  const ly = by - HIP_POSITIONS_M[leg * 2 + 1]!;
  legTarget[1] = LEG_Y_INVERTED[leg] ? -ly : ly;
  legTarget[2] = bz;
  return IkStatus.Ok;
}

/**
 * Foot of `leg` in the body frame from its three joint angles (the inverse of the body-IK steps
 * after the rotation): FK, un-negate y, add the hip. Writes (x, y, z) into `out[at..at+2]`.
 */
export function footInBody(leg: number, roll: number, pitch: number, knee: number, out: Float64Array, at = 0): void {
  legFK(roll, pitch, knee, out, at);
  if (LEG_Y_INVERTED[leg]) out[at + 1] = -out[at + 1]!;
  out[at] = out[at]! + HIP_POSITIONS_M[leg * 2]!;
  out[at + 1] = out[at + 1]! + HIP_POSITIONS_M[leg * 2 + 1]!;
}

/**
 * Foot of `leg` in the planner frame for the given joint angles and posture: R·footInBody + t.
 * `rotation` is the posture's row-major matrix (see `rotationXYZ`).
 */
export function footInPlanner(leg: number, roll: number, pitch: number, knee: number, rotation: Float64Array, tx: number, ty: number, tz: number, out: Float64Array, at = 0): void {
  footInBody(leg, roll, pitch, knee, out, at);
  const x = out[at]!,
    y = out[at + 1]!,
    z = out[at + 2]!;
  out[at] = rotation[0]! * x + rotation[1]! * y + rotation[2]! * z + tx;
  out[at + 1] = rotation[3]! * x + rotation[4]! * y + rotation[5]! * z + ty;
  out[at + 2] = rotation[6]! * x + rotation[7]! * y + rotation[8]! * z + tz;
}

function clamp1(v: number): number {
  return Math.min(1, Math.max(-1, v));
}

function wrapPi(a: number): number {
  if (a > Math.PI) return a - 2 * Math.PI;
  if (a <= -Math.PI) return a + 2 * Math.PI;
  return a;
}
