/**
 * NAO v6 joints: names, the two orders, limits. Every index says which order it means.
 *
 * - LOLA_ORDER (25): LoLA's arrays (`Position`, `Stiffness`, …); the one HipYawPitch motor is
 *   LHipYawPitch at 7, the hands are last (lola.md §6.1).
 * - API_ORDER (26): NAOqi's "Body" chain order (Head, LArm, LLeg, RLeg, RArm, hands after wrists),
 *   with RHipYawPitch, which reads the same motor as LHipYawPitch (lola.md §6.2).
 *
 * Limits are Aldebaran's NAO v6 joint ranges in rad (hands 0..1, 0 closed).
 */

export const LOLA_ORDER = [
  "HeadYaw",
  "HeadPitch",
  "LShoulderPitch",
  "LShoulderRoll",
  "LElbowYaw",
  "LElbowRoll",
  "LWristYaw",
  "LHipYawPitch",
  "LHipRoll",
  "LHipPitch",
  "LKneePitch",
  "LAnklePitch",
  "LAnkleRoll",
  "RHipRoll",
  "RHipPitch",
  "RKneePitch",
  "RAnklePitch",
  "RAnkleRoll",
  "RShoulderPitch",
  "RShoulderRoll",
  "RElbowYaw",
  "RElbowRoll",
  "RWristYaw",
  "LHand",
  "RHand",
] as const;

export const API_ORDER = [
  "HeadYaw",
  "HeadPitch",
  "LShoulderPitch",
  "LShoulderRoll",
  "LElbowYaw",
  "LElbowRoll",
  "LWristYaw",
  "LHand",
  "LHipYawPitch",
  "LHipRoll",
  "LHipPitch",
  "LKneePitch",
  "LAnklePitch",
  "LAnkleRoll",
  "RHipYawPitch",
  "RHipRoll",
  "RHipPitch",
  "RKneePitch",
  "RAnklePitch",
  "RAnkleRoll",
  "RShoulderPitch",
  "RShoulderRoll",
  "RElbowYaw",
  "RElbowRoll",
  "RWristYaw",
  "RHand",
] as const;

export type LolaJoint = (typeof LOLA_ORDER)[number];
export type ApiJoint = (typeof API_ORDER)[number];
export const LOLA_JOINT_COUNT = 25;
export const API_JOINT_COUNT = 26;

/** Index of each joint in LoLA order. */
export const LOLA_INDEX: Readonly<Record<LolaJoint, number>> = Object.fromEntries(LOLA_ORDER.map((n, i) => [n, i])) as Record<LolaJoint, number>;

/** For each API index, the LoLA index it reads (RHipYawPitch reads LHipYawPitch, slot 7). */
export const API_TO_LOLA: Int8Array = Int8Array.from(API_ORDER, (n) => (n === "RHipYawPitch" ? LOLA_INDEX.LHipYawPitch : LOLA_INDEX[n as LolaJoint]));

export interface JointLimit {
  readonly minRad: number;
  readonly maxRad: number;
}

/** Limits by name (rad; the hands are 0..1, unitless opening). */
export const JOINT_LIMITS: Readonly<Record<ApiJoint, JointLimit>> = {
  HeadYaw: { minRad: -2.0857, maxRad: 2.0857 },
  HeadPitch: { minRad: -0.672, maxRad: 0.5149 },
  LShoulderPitch: { minRad: -2.0857, maxRad: 2.0857 },
  LShoulderRoll: { minRad: -0.3142, maxRad: 1.3265 },
  LElbowYaw: { minRad: -2.0857, maxRad: 2.0857 },
  LElbowRoll: { minRad: -1.5446, maxRad: -0.0349 },
  LWristYaw: { minRad: -1.8238, maxRad: 1.8238 },
  LHand: { minRad: 0, maxRad: 1 },
  LHipYawPitch: { minRad: -1.145303, maxRad: 0.74081 },
  LHipRoll: { minRad: -0.379472, maxRad: 0.790477 },
  LHipPitch: { minRad: -1.535889, maxRad: 0.48409 },
  LKneePitch: { minRad: -0.092346, maxRad: 2.112528 },
  LAnklePitch: { minRad: -1.189516, maxRad: 0.922747 },
  LAnkleRoll: { minRad: -0.39788, maxRad: 0.769001 },
  RHipYawPitch: { minRad: -1.145303, maxRad: 0.74081 },
  RHipRoll: { minRad: -0.790477, maxRad: 0.379472 },
  RHipPitch: { minRad: -1.535889, maxRad: 0.48409 },
  RKneePitch: { minRad: -0.103083, maxRad: 2.120198 },
  RAnklePitch: { minRad: -1.186448, maxRad: 0.932056 },
  RAnkleRoll: { minRad: -0.768992, maxRad: 0.397935 },
  RShoulderPitch: { minRad: -2.0857, maxRad: 2.0857 },
  RShoulderRoll: { minRad: -1.3265, maxRad: 0.3142 },
  RElbowYaw: { minRad: -2.0857, maxRad: 2.0857 },
  RElbowRoll: { minRad: 0.0349, maxRad: 1.5446 },
  RWristYaw: { minRad: -1.8238, maxRad: 1.8238 },
  RHand: { minRad: 0, maxRad: 1 },
};

/** Limits in LoLA order as flat arrays, for the perform side. */
/**
 * How far past a limit a value may read and still be at the limit, rad: far below one encoder
 * count (2π/16,384 ≈ 3.8e-4 rad), above the rounding a measured angle carries (the simulated
 * LElbowRoll reads −0.03489806 at its −0.0349 limit). Echoing the robot's own pose back is then
 * not clamping.
 */
export const LIMIT_TOLERANCE_RAD = 1e-5;

/** Whether `v` is beyond the joint's limits by more than LIMIT_TOLERANCE_RAD. */
export function pastLimit(limit: JointLimit, v: number): boolean {
  return v < limit.minRad - LIMIT_TOLERANCE_RAD || v > limit.maxRad + LIMIT_TOLERANCE_RAD;
}

export const LOLA_MIN_RAD: Float64Array = Float64Array.from(LOLA_ORDER, (n) => JOINT_LIMITS[n].minRad);
export const LOLA_MAX_RAD: Float64Array = Float64Array.from(LOLA_ORDER, (n) => JOINT_LIMITS[n].maxRad);

/** True for the two hands, whose "position" is an opening 0..1 rather than an angle. */
export function isHand(lolaIndex: number): boolean {
  return lolaIndex === LOLA_INDEX.LHand || lolaIndex === LOLA_INDEX.RHand;
}

const STAND: Partial<Record<LolaJoint, number>> = {
  LShoulderPitch: 1.5,
  LShoulderRoll: 0.15,
  LElbowYaw: -1.2,
  LElbowRoll: -0.5,
  LHand: 0.3,
  RShoulderPitch: 1.5,
  RShoulderRoll: -0.15,
  RElbowYaw: 1.2,
  RElbowRoll: 0.5,
  RHand: 0.3,
  LHipPitch: -0.45,
  LKneePitch: 0.9,
  LAnklePitch: -0.45,
  RHipPitch: -0.45,
  RKneePitch: 0.9,
  RAnklePitch: -0.45,
};
const REST: Partial<Record<LolaJoint, number>> = {
  HeadPitch: 0.2,
  LShoulderPitch: 1.5,
  LShoulderRoll: 0.1,
  LElbowYaw: -1.2,
  LElbowRoll: -0.4,
  RShoulderPitch: 1.5,
  RShoulderRoll: -0.1,
  RElbowYaw: 1.2,
  RElbowRoll: 0.4,
  LHipPitch: -0.9,
  LKneePitch: 2.1,
  LAnklePitch: -1.18,
  RHipPitch: -0.9,
  RKneePitch: 2.1,
  RAnklePitch: -1.18,
};

/** Standing posture (LoLA order, rad), the target of smooth enable. */
export const STAND_POSTURE_RAD: Float64Array = Float64Array.from(LOLA_ORDER, (n) => STAND[n] ?? 0);
/** Crouched rest posture (LoLA order, rad), the target of smooth disable before stiffness goes off. */
export const REST_POSTURE_RAD: Float64Array = Float64Array.from(LOLA_ORDER, (n) => REST[n] ?? 0);
