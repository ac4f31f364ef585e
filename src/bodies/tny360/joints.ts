/**
 * TNY-360 joints in the firmware's order (`Joint::Id`, tny360.md §8): names, limits, servo
 * channels, legs. Every index here is a JointId (0–13); leg indices are `Leg::Id` (FL, BL, BR, FR).
 * Pure data, allocated once at load.
 */
import { JOINT_COUNT, JointId, type JointName, LEG_COUNT, LegId, type LegName } from "../../wire/tny/constants.js";

export { JOINT_COUNT, JointId, LEG_COUNT, LegId };
export type { JointName, LegName };

const DEG = Math.PI / 180;

export type JointPart = "hipRoll" | "hipPitch" | "knee" | "ear";

export interface Tny360Joint {
  readonly id: number;
  readonly name: JointName;
  readonly part: JointPart;
  /** Leg id (FL 0, BL 1, BR 2, FR 3), or null for the ears. */
  readonly leg: number | null;
  readonly minRad: number;
  readonly maxRad: number;
  /** Servo direction is inverted (ratio → 1 − ratio before the duty cycle). */
  readonly inverted: boolean;
  /** PCA9685 PWM channel. */
  readonly pwmChannel: number;
  /** Analog feedback channel, or null (the SG90 ear servos have no feedback). */
  readonly adcChannel: number | null;
}

function j(id: number, name: JointName, part: JointPart, leg: number | null, minDeg: number, maxDeg: number, inverted: boolean, pwmChannel: number, adcChannel: number | null): Tny360Joint {
  return { id, name, part, leg, minRad: minDeg * DEG, maxRad: maxDeg * DEG, inverted, pwmChannel, adcChannel };
}

/** The 14 joints, index = JointId. Limits and channels from `Body::Body()` (§8). */
export const JOINTS: readonly Tny360Joint[] = [
  j(0, "FrontLeftHipRoll", "hipRoll", 0, -45, 45, false, 2, 0),
  j(1, "FrontLeftHipPitch", "hipPitch", 0, -135, 45, true, 3, 1),
  j(2, "FrontLeftKneePitch", "knee", 0, 0, 150, false, 4, 2),
  j(3, "BackLeftHipRoll", "hipRoll", 1, -45, 45, true, 5, 4),
  j(4, "BackLeftHipPitch", "hipPitch", 1, -135, 45, true, 6, 5),
  j(5, "BackLeftKneePitch", "knee", 1, 0, 150, false, 7, 6),
  j(6, "BackRightHipRoll", "hipRoll", 2, -45, 45, false, 8, 8),
  j(7, "BackRightHipPitch", "hipPitch", 2, -135, 45, false, 9, 9),
  j(8, "BackRightKneePitch", "knee", 2, 0, 150, true, 10, 10),
  j(9, "FrontRightHipRoll", "hipRoll", 3, -45, 45, true, 11, 12),
  j(10, "FrontRightHipPitch", "hipPitch", 3, -135, 45, false, 12, 13),
  j(11, "FrontRightKneePitch", "knee", 3, 0, 150, true, 13, 14),
  j(12, "EarLeft", "ear", null, 0, 180, true, 1, null),
  j(13, "EarRight", "ear", null, 0, 180, false, 0, null),
];

/** Joint names, index = JointId. */
export const JOINT_NAMES: readonly JointName[] = JOINTS.map((x) => x.name);
/** Lower limits, rad, index = JointId (for allocation-free checks on the perform side). */
export const JOINT_MIN_RAD: Float64Array = Float64Array.from(JOINTS, (x) => x.minRad);
/** Upper limits, rad, index = JointId. */
export const JOINT_MAX_RAD: Float64Array = Float64Array.from(JOINTS, (x) => x.maxRad);

/** `Joint::MAX_VELOCITY_RAD_S`: the model angle moves toward its target at most this fast. */
export const MAX_JOINT_VELOCITY_RAD_S = 7.0;

/** Leg names, index = Leg id. */
export const LEG_NAMES: readonly LegName[] = ["FrontLeft", "BackLeft", "BackRight", "FrontRight"];
/** First JointId of each leg: roll = base, pitch = base + 1, knee = base + 2. */
export const LEG_JOINT_BASE = 3;
/** `y_inverted` per leg (FL, BL true): body IK negates y for these legs (§8, §10.2). */
export const LEG_Y_INVERTED: readonly boolean[] = [true, true, false, false];
/** Paw contact ADC channel per leg (§8). */
export const PAW_ADC_CHANNELS: readonly number[] = [3, 7, 11, 15];
/** Number of ADC channels on the analog multiplexer. */
export const ADC_CHANNEL_COUNT = 16;

/** Is `rad` within the limits of joint `id` (inclusive, with `toleranceRad` for rounding, 1e-9 by default)? */
export function withinLimits(id: number, rad: number, toleranceRad = 1e-9): boolean {
  return Number.isFinite(rad) && rad >= JOINT_MIN_RAD[id]! - toleranceRad && rad <= JOINT_MAX_RAD[id]! + toleranceRad;
}

/** JointId by name. */
export function jointIdOf(name: JointName): number {
  return JointId[name];
}
