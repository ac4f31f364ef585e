/**
 * The TNY-360's servos (tny360.md §8: 12 × modified MG996R on the legs, 2 × SG90 on the ears):
 * their published figures, which the physics model's actuators are limited to, and the values
 * bodylink infers where nothing is published. Pure data.
 *
 * Published (TowerPro datasheets; 1 kgf·cm = 0.0980665 N·m):
 * - MG996R: stall torque 11 kgf·cm at 6 V (9.4 at 4.8 V), operating speed 0.14 s/60° at 6 V
 *   (0.17 at 4.8 V), 55 g. The 6 V figures: the firmware's 7 rad/s joint speed
 *   (`Joint::MAX_VELOCITY_RAD_S`) is within 6 V's 7.48 rad/s, not 4.8 V's 6.16.
 * - SG90: stall torque 1.8 kgf·cm and 0.1 s/60° at 4.8 V (its only rating), 9 g.
 */
import { JOINT_COUNT } from "../../wire/tny/constants.js";
import { JOINTS } from "./joints.js";

const KGF_CM_NM = 0.0980665;
const PER_60_DEG = Math.PI / 3;

export interface ServoFigures {
  /** Stall torque, N·m (published). */
  readonly stallTorqueNm: number;
  /** No-load speed, rad/s (published as s/60°). */
  readonly noLoadSpeedRadS: number;
  /** Mass, kg (published). */
  readonly massKg: number;
  /** Rotor inertia seen at the output through the gears, kg·m² *(inferred)*. */
  readonly armatureKgM2: number;
}

export const TNY360_SERVOS = Object.freeze({
  MG996R: Object.freeze({ stallTorqueNm: 11 * KGF_CM_NM, noLoadSpeedRadS: PER_60_DEG / 0.14, massKg: 0.055, armatureKgM2: 5e-4 }),
  SG90: Object.freeze({ stallTorqueNm: 1.8 * KGF_CM_NM, noLoadSpeedRadS: PER_60_DEG / 0.1, massKg: 0.009, armatureKgM2: 5e-5 }),
} satisfies Record<string, ServoFigures>);
export type ServoModel = keyof typeof TNY360_SERVOS;

/** Each joint's servo, index = JointId: MG996R on the legs, SG90 on the ears. */
export const TNY360_JOINT_SERVO: readonly ServoModel[] = JOINTS.map((j) => (j.part === "ear" ? "SG90" : "MG996R"));

/**
 * How the physics model's servos behave where no figure is published *(inferred)*:
 * - `stallErrorRad`: a servo pushes its stall torque at this position error (its gain is
 *   stall / error: 21.6 N·m/rad for the MG996R), as a hobby servo's proportional band of a few degrees;
 * - `frictionOfStall`: gear friction, this fraction of the stall torque (0.054 N·m for the
 *   MG996R): a limp leg folds under the body's weight, slowly;
 * - `dampingNmsPerRad`: viscous friction of the gears, N·m·s/rad.
 * The torque–speed line (stall torque at rest, none at the no-load speed) is applied by the
 * simulator each step: servos.ts's figures, nothing more.
 */
export const TNY360_SERVO = Object.freeze({ stallErrorRad: 0.05, frictionOfStall: 0.05, dampingNmsPerRad: 0.01 });

/** Stall torque per joint, N·m, index = JointId. */
export const TNY360_STALL_TORQUE_NM: Float64Array = Float64Array.from(TNY360_JOINT_SERVO, (s) => TNY360_SERVOS[s].stallTorqueNm);
/** No-load speed per joint, rad/s, index = JointId. */
export const TNY360_NO_LOAD_SPEED_RAD_S: Float64Array = Float64Array.from(TNY360_JOINT_SERVO, (s) => TNY360_SERVOS[s].noLoadSpeedRadS);

if (TNY360_JOINT_SERVO.length !== JOINT_COUNT) throw new Error("one servo per joint");
