/**
 * NAO joint motors: which motor and gear each joint has, and what that gives at the joint.
 *
 * Source: Aldebaran's NAO H25 "Motors" pages (doc.aldebaran.com/1-14/family/nao_h25/
 * motors_h25_v32.html; the V3.3 and V4 pages list the same two motors and ratios):
 * - RE-Max 24 (legs): no-load speed 8,000 rpm, stall torque 59.5 mN·m; ratio A 201.3
 *   (HipYawPitch, HipRoll, AnkleRoll), ratio B 130.85 (HipPitch, KneePitch, AnklePitch).
 * - RE-Max 17 (head, arms): 11,900 rpm, 15.1 mN·m; ratio A 150.27 (HeadYaw, ShoulderPitch,
 *   ElbowYaw), ratio B 173.22 (HeadPitch, ShoulderRoll, ElbowRoll), ratio C 50.61 (WristYaw,
 *   the V3.3 page's motor-1 type C).
 * Joint figures are the motor's times the ratio, "without the ratio efficiency" as Aldebaran
 * prints them (e.g. ratio B: 7.78 N·m stall, 366.83 °/s no load).
 *
 * Current per torque *(inferred)*: Aldebaran publishes no torque constant. We take the motor's
 * stall torque at 4 A (the ceiling the chest board's current field reaches in the kinematic
 * simulator): Kt = 14.9 mN·m/A (RE-Max 24) and 3.78 mN·m/A (RE-Max 17), so a joint draws
 * |τ| / (Kt · ratio): 0.51 A per N·m at the knee, 0.33 at the hip roll, 1.76 at the shoulder pitch.
 *
 * Pure data, browser-safe. LoLA order (joints.ts); the hands (opening, not an angle) have no
 * entry in the physics model and are simulated as before.
 */
import { LOLA_ORDER, type LolaJoint } from "./joints.js";

export interface MotorSpec {
  readonly model: "RE-Max 24" | "RE-Max 17";
  readonly noLoadRpm: number;
  readonly stallTorqueNm: number;
  /** Torque constant, N·m/A *(inferred, see the module comment)*. */
  readonly torqueConstantNmPerA: number;
}

const STALL_CURRENT_A = 4;
const motor = (model: MotorSpec["model"], noLoadRpm: number, stallTorqueNm: number): MotorSpec =>
  Object.freeze({ model, noLoadRpm, stallTorqueNm, torqueConstantNmPerA: stallTorqueNm / STALL_CURRENT_A });

export const NAO_MOTORS = Object.freeze({
  reMax24: motor("RE-Max 24", 8000, 0.0595),
  reMax17: motor("RE-Max 17", 11_900, 0.0151),
});

export interface JointDrive {
  readonly motor: MotorSpec;
  readonly ratio: number;
  /** Stall torque at the joint, N·m (motor × ratio). */
  readonly stallTorqueNm: number;
  /** No-load speed at the joint, rad/s. */
  readonly noLoadSpeedRadS: number;
  /** Motor current per joint torque, A per N·m *(inferred)*. */
  readonly currentAPerNm: number;
}

const RATIO = { legA: 201.3, legB: 130.85, armA: 150.27, armB: 173.22, wrist: 50.61 } as const;
type Ratio = keyof typeof RATIO;

const BY_JOINT: Readonly<Record<Exclude<LolaJoint, "LHand" | "RHand">, Ratio>> = {
  HeadYaw: "armA",
  HeadPitch: "armB",
  LShoulderPitch: "armA",
  LShoulderRoll: "armB",
  LElbowYaw: "armA",
  LElbowRoll: "armB",
  LWristYaw: "wrist",
  LHipYawPitch: "legA",
  LHipRoll: "legA",
  LHipPitch: "legB",
  LKneePitch: "legB",
  LAnklePitch: "legB",
  LAnkleRoll: "legA",
  RHipRoll: "legA",
  RHipPitch: "legB",
  RKneePitch: "legB",
  RAnklePitch: "legB",
  RAnkleRoll: "legA",
  RShoulderPitch: "armA",
  RShoulderRoll: "armB",
  RElbowYaw: "armA",
  RElbowRoll: "armB",
  RWristYaw: "wrist",
};

function drive(r: Ratio): JointDrive {
  const m = r.startsWith("leg") ? NAO_MOTORS.reMax24 : NAO_MOTORS.reMax17;
  const ratio = RATIO[r];
  return Object.freeze({
    motor: m,
    ratio,
    stallTorqueNm: m.stallTorqueNm * ratio,
    noLoadSpeedRadS: (m.noLoadRpm * 2 * Math.PI) / 60 / ratio,
    currentAPerNm: 1 / (m.torqueConstantNmPerA * ratio),
  });
}

/** The joints the physics model drives: LoLA order without the hands (23). */
export const NAO_DRIVEN_JOINTS = LOLA_ORDER.filter((n) => n !== "LHand" && n !== "RHand") as ReadonlyArray<Exclude<LolaJoint, "LHand" | "RHand">>;

/** Per driven joint (NAO_DRIVEN_JOINTS order), its drive. */
export const NAO_JOINT_DRIVES: Readonly<Record<Exclude<LolaJoint, "LHand" | "RHand">, JointDrive>> = Object.freeze(
  Object.fromEntries(NAO_DRIVEN_JOINTS.map((n) => [n, drive(BY_JOINT[n])])) as Record<Exclude<LolaJoint, "LHand" | "RHand">, JointDrive>,
);
