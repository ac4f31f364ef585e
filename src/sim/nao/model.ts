/**
 * The seam under the simulated chest board: the NAO's mechanics (joints, contacts, IMU, where the
 * robot is), behind one interface with two implementations.
 *
 * - `KinematicNaoModel` (here): joints follow their targets as a first-order lag whose speed
 *   scales with stiffness; the torso sways a little; the feet share the weight. Nothing falls.
 * - `MujocoNaoModel` (physics/mujoco-nao.ts): MuJoCo on the model generated from our tables.
 *
 * A model gives true values in SI units and LoLA's order and signs; SimNaoBody (body.ts) adds the
 * sensor noise, the thermal model, battery, sonar and head, and the chest board quantizes to counts.
 * Both step without allocating.
 */
import { isHand, LOLA_MAX_RAD, LOLA_MIN_RAD, REST_POSTURE_RAD } from "../../bodies/nao/joints.js";
import { NAO_TOTAL_MASS_KG } from "../../bodies/nao/masses.js";

import type { NaoSimKind, NaoSimPose } from "../../bodies/nao/sim-world.js";

export { NAO_SIM_KINDS, NAO_SIM_POSES, type NaoSimKind, type NaoSimPose } from "../../bodies/nao/sim-world.js";

export const GRAVITY_MPS2 = 9.81;
/** Joint lag of the kinematic model: time constant at stiffness 1, and top speed. */
const JOINT_TAU_S = 0.04;
const JOINT_MAX_SPEED_RADS = 6;

export interface NaoBodyModel {
  readonly kind: NaoSimKind;
  /** Measured joint positions, LoLA order, rad (hands: opening 0..1). */
  readonly positionRad: Float64Array;
  /** Joint velocities, LoLA order, rad/s. */
  readonly velocityRadS: Float64Array;
  /** Joint torques the motors apply, LoLA order, N·m (hands 0). */
  readonly torqueNm: Float64Array;
  /** Motor currents, LoLA order, A (before sensor noise). */
  readonly currentA: Float64Array;
  /** Force on each FSR, kg, LoLA's FSR order (LFoot FL, FR, RL, RR, then RFoot). */
  readonly fsrKg: Float64Array;
  /** Accelerometer as LoLA reports it (z ≈ −9.81 m/s² upright), torso frame. */
  readonly accelerometerMps2: Float64Array;
  /** Gyroscope, rad/s, torso frame. */
  readonly gyroscopeRadS: Float64Array;
  /** Inertial unit angles (x roll, y pitch), rad. */
  readonly anglesRad: Float64Array;
  /** Torso frame origin in the world, m (z up, the floor at z = 0). */
  readonly basePositionM: Float64Array;
  /** Torso orientation in the world, quaternion x, y, z, w. */
  readonly baseOrientationXyzw: Float64Array;
  /** Links that can touch the floor (`contactForceN`'s order). */
  readonly contactLinks: readonly string[];
  /** Net contact force between each link and the floor, N (0: no contact). */
  readonly contactForceN: Float64Array;
  /** Simulated time since power-on or the last reset, s. */
  readonly timeS: number;
  /** Whether the robot has fallen (see each model for its test). */
  readonly fallen: boolean;
  /** Advance by `dtUs` µs toward `targetRad` at `stiffness` (both LoLA order). Allocation-free. */
  stepUs(dtUs: number, targetRad: Float64Array, stiffness: Float64Array): void;
  /** Put the robot into `pose` at rest (joints there, stiffness as the next step sets it). */
  reset(pose: NaoSimPose): void;
}

/**
 * A first-order lag of joint `i` toward its target whose speed scales with its stiffness (hands,
 * and the kinematic model); the step is `f[dtSlot]` seconds. NOTE: only arrays and small integers
 * cross the call: V8 boxes a double passed to a call it does not inline.
 */
export function lagJoint(position: Float64Array, i: number, targetRad: Float64Array, stiffnessArr: Float64Array, f: Float64Array, dtSlot: number): void {
  const stiffness = stiffnessArr[i]!;
  const dtS = f[dtSlot]!;
  if (stiffness > 0) {
    const err = targetRad[i]! - position[i]!;
    const alpha = 1 - Math.exp(-(dtS * stiffness) / JOINT_TAU_S);
    const maxStep = JOINT_MAX_SPEED_RADS * stiffness * dtS;
    position[i]! += Math.max(-maxStep, Math.min(maxStep, err * alpha));
  }
  position[i] = Math.min(isHand(i) ? 1 : LOLA_MAX_RAD[i]!, Math.max(isHand(i) ? 0 : LOLA_MIN_RAD[i]!, position[i]!));
}

/** The arrays every model fills (NaoBodyModel's outputs), made once. */
export abstract class NaoModelOutputs {
  readonly positionRad = new Float64Array(25);
  readonly velocityRadS = new Float64Array(25);
  readonly torqueNm = new Float64Array(25);
  readonly currentA = new Float64Array(25);
  readonly fsrKg = new Float64Array(8);
  readonly accelerometerMps2 = new Float64Array(3);
  readonly gyroscopeRadS = new Float64Array(3);
  readonly anglesRad = new Float64Array(2);
  readonly basePositionM = new Float64Array(3);
  readonly baseOrientationXyzw = new Float64Array([0, 0, 0, 1]);
}

/** Torso height of the zero posture standing, m (the legs' lengths, kinematics.ts). */
const STAND_HEIGHT_M = 0.085 + 0.1 + 0.1029 + 0.04519;

/**
 * The kinematic NAO: a puppet that cannot fall. Joints lag their targets; current is
 * stiffness × (holding + tracking error); the torso sways (0.01 rad roll, 0.015 rad pitch); the
 * feet share the robot's weight with a slow sway of the centre of pressure.
 */
export class KinematicNaoModel extends NaoModelOutputs implements NaoBodyModel {
  readonly kind = "kinematic";
  readonly contactLinks: readonly string[] = ["LFoot", "RFoot"];
  readonly contactForceN = new Float64Array(2);
  readonly fallen = false;
  /** Time [0] and step [1], s: typed slots, never boxed. */
  readonly #f = new Float64Array(2);
  get timeS(): number {
    return this.#f[0]!;
  }

  constructor() {
    super();
    this.basePositionM[2] = STAND_HEIGHT_M;
    this.reset("stand");
  }

  reset(pose: NaoSimPose): void {
    this.#f[0] = 0;
    // "stand" is the zero posture (each joint at 0 clamped into its range); the model has no floor, so "lying" stands too.
    for (let i = 0; i < 25; i++) this.positionRad[i] = Math.min(LOLA_MAX_RAD[i]!, Math.max(LOLA_MIN_RAD[i]!, pose === "crouch" ? REST_POSTURE_RAD[i]! : 0));
    this.velocityRadS.fill(0);
  }

  stepUs(dtUs: number, targetRad: Float64Array, stiffness: Float64Array): void {
    const f = this.#f;
    f[1] = dtUs * 1e-6;
    f[0]! += f[1]!;
    const dtS = f[1]!;
    const t = f[0]!;
    for (let i = 0; i < 25; i++) {
      const before = this.positionRad[i]!;
      const s = stiffness[i]!;
      lagJoint(this.positionRad, i, targetRad, stiffness, f, 1);
      this.velocityRadS[i] = dtS > 0 ? (this.positionRad[i]! - before) / dtS : 0;
      const holding = i >= 7 && i <= 17 ? 0.25 : 0.05; // legs carry the body
      this.currentA[i] = s * (holding + 1.5 * Math.abs(targetRad[i]! - this.positionRad[i]!));
    }
    const roll = 0.01 * Math.sin(t * 0.7);
    const pitch = 0.015 * Math.sin(t * 0.5 + 1);
    this.anglesRad[0] = roll;
    this.anglesRad[1] = pitch;
    this.accelerometerMps2[0] = GRAVITY_MPS2 * Math.sin(pitch);
    this.accelerometerMps2[1] = -GRAVITY_MPS2 * Math.sin(roll) * Math.cos(pitch);
    this.accelerometerMps2[2] = -GRAVITY_MPS2 * Math.cos(roll) * Math.cos(pitch);
    const q = this.baseOrientationXyzw;
    q[0] = Math.sin(roll / 2) * Math.cos(pitch / 2);
    q[1] = Math.cos(roll / 2) * Math.sin(pitch / 2);
    q[2] = -Math.sin(roll / 2) * Math.sin(pitch / 2);
    q[3] = Math.cos(roll / 2) * Math.cos(pitch / 2);
    const leftShare = 0.5 + 0.15 * Math.sin(t * 0.7);
    const front = 0.5 + 0.2 * Math.sin(t * 0.5 + 1);
    for (let foot = 0; foot < 2; foot++) {
      const w = NAO_TOTAL_MASS_KG * (foot === 0 ? leftShare : 1 - leftShare);
      const base = foot * 4;
      this.fsrKg[base] = (w * front) / 2;
      this.fsrKg[base + 1] = (w * front) / 2;
      this.fsrKg[base + 2] = (w * (1 - front)) / 2;
      this.fsrKg[base + 3] = (w * (1 - front)) / 2;
      this.contactForceN[foot] = w * GRAVITY_MPS2;
    }
  }
}
