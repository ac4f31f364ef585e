/**
 * TNY-360 named poses (`Body.cpp`, tny360.md §8): the same roll/pitch/knee for all four legs.
 * The poses cover the 12 leg joints only; the ears keep their angle. Pure data.
 */
import { LEG_COUNT } from "../../wire/tny/constants.js";
import { JOINT_MAX_RAD, JOINT_MIN_RAD, MAX_JOINT_VELOCITY_RAD_S } from "./joints.js";

const DEG = Math.PI / 180;

/**
 * Poses a physics TNY-360's world can be reset to (`POST /v1/sim/reset`), each on the floor at the
 * origin: `stand` as a smooth enable leaves it (every joint on, STAND, on four paws), `rest` as it
 * boots (leg joints off, REST, on its folded legs), `lying` on its back (leg joints off, REST: a fall).
 */
export const TNY360_SIM_POSES = ["stand", "rest", "lying"] as const;
export type Tny360SimPose = (typeof TNY360_SIM_POSES)[number];

export interface LegPose {
  readonly hipRollRad: number;
  readonly hipPitchRad: number;
  readonly kneeRad: number;
}

/** REST: 0°, −60°, 150° (folded; what smooth disable goes to). */
export const REST_LEG: LegPose = { hipRollRad: 0 * DEG, hipPitchRad: -60 * DEG, kneeRad: 150 * DEG };
/** STAND: 5°, −50°, 100° (what smooth enable ends in). */
export const STAND_LEG: LegPose = { hipRollRad: 5 * DEG, hipPitchRad: -50 * DEG, kneeRad: 100 * DEG };

/** The 12 leg joint targets of a pose, index = JointId 0–11. */
export function legPoseTargets(pose: LegPose): Float64Array {
  const out = new Float64Array(LEG_COUNT * 3);
  for (let leg = 0; leg < LEG_COUNT; leg++) {
    out[leg * 3] = pose.hipRollRad;
    out[leg * 3 + 1] = pose.hipPitchRad;
    out[leg * 3 + 2] = pose.kneeRad;
  }
  return out;
}

/** REST as 12 leg targets (rad, JointId order). */
export const REST_POSE_RAD: Float64Array = legPoseTargets(REST_LEG);
/** STAND as 12 leg targets (rad, JointId order). */
export const STAND_POSE_RAD: Float64Array = legPoseTargets(STAND_LEG);

/** Ear angle the simulator boots with (rad): upright, mid-range. */
export const EAR_DEFAULT_RAD = 90 * DEG;

// Both poses must sit inside the joint limits (checked once at load: a typo here is a bug).
for (const p of [REST_POSE_RAD, STAND_POSE_RAD]) {
  for (let i = 0; i < p.length; i++) {
    if (p[i]! < JOINT_MIN_RAD[i]! - 1e-12 || p[i]! > JOINT_MAX_RAD[i]! + 1e-12) throw new Error(`pose value for joint ${i} outside its limits`);
  }
}

/** Seconds to move every leg joint from `from` to `to` at `speedFraction` × 7 rad/s (slowest joint). */
export function poseMoveTimeS(from: ArrayLike<number>, to: ArrayLike<number>, speedFraction: number, enabled?: ArrayLike<number>): number {
  let worst = 0;
  for (let j = 0; j < LEG_COUNT * 3; j++) {
    if (enabled && !enabled[j]) continue; // a disabled joint does not move
    worst = Math.max(worst, Math.abs(to[j]! - from[j]!));
  }
  return worst / (MAX_JOINT_VELOCITY_RAD_S * speedFraction);
}

/** Speed fractions of the smooth sequences (`Body.cpp`). */
export const SMOOTH_ENABLE_REST_SPEED = 0.05;
export const SMOOTH_ENABLE_STAND_SPEED = 0.1;
export const SMOOTH_DISABLE_SPEED = 0.1;

/**
 * The estimate `body.enableSmooth` returns: from the current leg angles to REST at 5 % of the
 * maximum speed, then REST to STAND at 10 % (real distances, slowest joint of each phase).
 */
export function smoothEnableEstimateS(currentRad: ArrayLike<number>): number {
  return poseMoveTimeS(currentRad, REST_POSE_RAD, SMOOTH_ENABLE_REST_SPEED) + poseMoveTimeS(REST_POSE_RAD, STAND_POSE_RAD, SMOOTH_ENABLE_STAND_SPEED);
}

/** The estimate `body.disableSmooth` returns: the enabled leg joints to REST at 10 %. */
export function smoothDisableEstimateS(currentRad: ArrayLike<number>, enabled?: ArrayLike<number>): number {
  return poseMoveTimeS(currentRad, REST_POSE_RAD, SMOOTH_DISABLE_SPEED, enabled);
}
