/**
 * The seam under the simulated TNY-360's firmware: the quadruped's mechanics (where the joints
 * are, which paws touch, the IMU, where the robot went), behind one interface with two
 * implementations.
 *
 * - `KinematicTnyModel` (physics.ts): ideal servos, the body rests on its lowest foot, planted
 *   feet never slip. Nothing falls.
 * - `MujocoTnyModel` (physics/mujoco-tny.ts): MuJoCo on models/tny360.xml, generated from our
 *   tables (bodies/tny360/mjcf.ts).
 *
 * A model runs the tick's physical stages, in order, on the firmware state it was built over
 * (firmware.ts): it reads the servos' set points (`fw.model`) and power (`fw.enabled`) and writes
 * the state's joints, IMU, odometry and paws in the protocol's units, the firmware's feedback
 * and estimates, and the ADC channels. Both allocate nothing per tick.
 */
import { JOINTS, PAW_ADC_CHANNELS } from "../../bodies/tny360/joints.js";
import type { Tny360SimPose } from "../../bodies/tny360/poses.js";
import { angleToFeedbackV, PAW_PRESSED_V, PAW_RELEASED_V } from "../../bodies/tny360/units.js";
import { JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";
import { CALIBRATION, DT_S, type Firmware, SOC } from "./firmware.js";

/** What drives the simulated body: MuJoCo, or the kinematic model. */
export const TNY360_SIM_KINDS = ["physics", "kinematic"] as const;
export type Tny360SimKind = (typeof TNY360_SIM_KINDS)[number];

/** Sensor noise (inferred): joint feedback (the potentiometers), the accelerometer. */
export const FEEDBACK_NOISE_RAD = 0.002;
export const ACCEL_NOISE_MS2 = 0.02;

/** The physics world a MuJoCo model adds (the state's `sim`). */
export interface Tny360SimWorld {
  /** Simulated time since the model was built or last reset, s. */
  readonly timeS: number;
  /** Body centre in the world, m (z up, the floor at z = 0). */
  readonly basePositionM: Float64Array;
  /** Body orientation in the world, quaternion x, y, z, w. */
  readonly baseOrientationXyzw: Float64Array;
  /** Whether the robot has fallen (see the model). */
  readonly fallen: boolean;
  /** Links that can touch the floor (`contactForceN`'s order). */
  readonly contactLinks: readonly string[];
  /** Net contact force between each link and the floor, N (0: no contact). */
  readonly contactForceN: Float64Array;
  /** Put the robot down in `pose` at the origin, limp, at rest; the world's time back to 0 (prepare side). */
  resetWorld(pose: Tny360SimPose): void;
}

export interface Tny360BodyModel {
  readonly kind: Tny360SimKind;
  /** Paws on the ground at this step (1/0 per leg). */
  readonly grounded: Uint8Array;
  /** The ADC channels (getAllChannels): joint feedback voltages and paw switches. */
  readonly adc: Float32Array;
  /** Body centre above the ground, m. */
  readonly heightM: number;
  /** The physics world, or null (the kinematic model has none). */
  readonly world: Tny360SimWorld | null;
  /** The firmware booted: noise restarts, odometry starts from here, the next step has no history. */
  reset(): void;
  /** First stage: the body and the paws (the physics: the servos' set points in, MuJoCo steps). */
  bodyPose(): void;
  /** Second stage: odometry and the IMU. */
  odometryImu(): void;
  /** Third stage: joint feedback, estimates, velocities, efforts. */
  jointSensors(): void;
  /** Last stage: power draw, battery, the ADC channels. */
  powerAdc(): void;
}

/** Builds a model over the simulator's firmware state (the simulator calls it once, at construction). */
export type Tny360ModelFactory = (fw: Firmware, seed: number) => Tny360BodyModel;

// Power model (inferred; docs/protocol/tny360.md): a 2S LiPo with internal resistance.
const BATTERY_CAPACITY_AH = 2.2;
const BATTERY_R_OHM = 0.1;
const ELECTRONICS_A = 0.45;

/**
 * Power draw and battery from the state's efforts and velocities (electronics + servos: holding
 * torque and motion), then the ADC channels from the firmware's feedback and the paws. Both models'
 * last stage. Allocation-free.
 */
export function powerAndAdc(fw: Firmware, grounded: Uint8Array, adc: Float32Array): void {
  const f = fw.f;
  const dtS = f[DT_S]!;
  const j = fw.state.joints;
  let amps = ELECTRONICS_A;
  for (let i = 0; i < JOINT_COUNT; i++) {
    if (!fw.enabled[i]) continue;
    amps += i < 12 ? 0.05 + 0.8 * Math.abs(j.effortNm[i]!) + 0.03 * Math.abs(j.velocityRadS[i]!) : 0.02 + 0.01 * Math.abs(j.velocityRadS[i]!);
  }
  f[SOC] = Math.max(0, f[SOC]! - (amps * dtS) / (BATTERY_CAPACITY_AH * 3600));
  const volts = 6.8 + 1.6 * f[SOC]! - BATTERY_R_OHM * amps;
  const pw = fw.state.power;
  pw.currentA = amps;
  pw.voltageV = volts;
  pw.powerW = volts * amps;
  for (let i = 0; i < 12; i++) adc[JOINTS[i]!.adcChannel!] = angleToFeedbackV(i, fw.feedback[i]!, CALIBRATION[i]!);
  for (let leg = 0; leg < LEG_COUNT; leg++) adc[PAW_ADC_CHANNELS[leg]!] = grounded[leg] ? PAW_PRESSED_V : PAW_RELEASED_V;
}
