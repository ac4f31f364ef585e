/**
 * The seam under the simulated P7 (arm-sim.ts): the arm's mechanics behind one interface with two
 * implementations. The arm service above it (arm-sim.ts) keeps what the real arm's service does:
 * the trajectory (trapezoidal profiles, stops, end stops), error ids, the thermal model, sensor
 * noise. Each 4 ms step it hands the model that trajectory's set-point (position, velocity,
 * acceleration); the model says where the arm really is and what its motors do.
 *
 * - `KinematicP7Model` (here): the arm is exactly at the set-point; efforts from the point-mass
 *   model (diagonal inertia · acceleration + viscous friction · velocity + gravity, saturated at
 *   the effort limit); the IMU from the second difference of its position. Nothing can sag.
 * - `MujocoP7Model` (physics/mujoco-p7.ts): MuJoCo on models/p7.xml, position servos tracking the
 *   set-point; positions, velocities, efforts and the IMU from the physics.
 *
 * A model gives true values in SI units and the SDK's order (J1..J7), before sensor noise. Both
 * step without allocating.
 */
import type { SimKind, SimWorldPose } from "../../bodies/sim-world.js";
import { GRAVITY_M_S2, P7_EFFORT_LIMIT_NM, P7_IMU_MOUNT, P7_JOINT_COUNT, P7_VISCOUS_NM_S_RAD } from "../../bodies/p7/joints.js";
import { P7Kinematics } from "../../bodies/p7/kinematics.js";
import { P7_CONTACT_LINKS } from "../../bodies/p7/mjcf.js";
import { P7_SIM_STEP_MS } from "./constants.js";

const N = P7_JOINT_COUNT;
const DT_S = P7_SIM_STEP_MS / 1000;
const IMU_ROTATION_OFFSET = 9 * (P7_IMU_MOUNT.link - 1);

/** The arm's base is bolted to the world's origin, upright (`SimWorldPose`): it never moves or falls. */
export interface P7BodyModel extends SimWorldPose {
  readonly kind: SimKind;
  /** Joint positions, rad, J1..J7. */
  readonly positionRad: Float64Array;
  /** Joint velocities, rad/s. */
  readonly velocityRadS: Float64Array;
  /** Motor torques, N·m, positive about each joint's positive direction. */
  readonly effortNm: Float64Array;
  /** IMU angular velocity, rad/s, arm_imu frame. */
  readonly gyroRadS: Float64Array;
  /** IMU specific force (acceleration minus gravity), m/s², arm_imu frame: at rest |a| = g. */
  readonly accelerometerMps2: Float64Array;
  /** Simulated time since construction or the last reset, s. */
  readonly timeS: number;
  /** Net contact force between each link (P7_CONTACT_LINKS) and the world's floor or base, N (0: none; always 0 on the kinematic arm). */
  readonly contactForceN: Float64Array;
  /**
   * One 4 ms step toward the arm service's set-point: position (rad), velocity (rad/s) and
   * acceleration (rad/s²) per joint. Allocation-free.
   */
  step(setpointRad: Float64Array, setpointRadS: Float64Array, setpointRadS2: Float64Array): void;
  /** Put the arm at rest at `anglesRad` (time back to 0). */
  reset(anglesRad: ArrayLike<number>): void;
}

/** The outputs every model fills, made once. */
export abstract class P7ModelOutputs {
  readonly basePositionM: ArrayLike<number> = Object.freeze([0, 0, 0]);
  readonly baseOrientationXyzw: ArrayLike<number> = Object.freeze([0, 0, 0, 1]);
  readonly fallen = false;
  readonly positionRad = new Float64Array(N);
  readonly velocityRadS = new Float64Array(N);
  readonly effortNm = new Float64Array(N);
  readonly gyroRadS = new Float64Array(3);
  readonly accelerometerMps2 = new Float64Array(3);
  readonly contactForceN = new Float64Array(P7_CONTACT_LINKS.length);
}

/**
 * The kinematic P7: the arm is where the trajectory says, and the point-mass model (kinematics.ts)
 * gives the torques; the IMU's acceleration is the second difference of its position over steps.
 */
export class KinematicP7Model extends P7ModelOutputs implements P7BodyModel {
  readonly kind = "kinematic";
  readonly #kin = new P7Kinematics();
  readonly #gravity = new Float64Array(N);
  readonly #inertia = new Float64Array(N);
  // IMU history (world frame) for the second difference.
  readonly #imuPrevM = new Float64Array(3);
  readonly #imuPrevVel = new Float64Array(3);
  /** [0] steps since reset. */
  readonly #f = new Float64Array(1);

  constructor(anglesRad: ArrayLike<number>) {
    super();
    this.reset(anglesRad);
  }

  get timeS(): number {
    return this.#f[0]! * DT_S;
  }

  reset(anglesRad: ArrayLike<number>): void {
    for (let i = 0; i < N; i++) this.positionRad[i] = anglesRad[i]!;
    this.velocityRadS.fill(0);
    this.#f[0] = 0;
    this.#kin.update(this.positionRad);
    this.#imuPrevM.set(this.#kin.imuM);
    this.#imuPrevVel.fill(0);
    this.#efforts(this.velocityRadS);
    this.#imu(false);
  }

  step(setpointRad: Float64Array, setpointRadS: Float64Array, setpointRadS2: Float64Array): void {
    this.positionRad.set(setpointRad);
    this.velocityRadS.set(setpointRadS);
    this.#kin.update(setpointRad);
    this.#efforts(setpointRadS2);
    this.#imu(true);
    this.#f[0]! += 1;
  }

  /** effort = I(q)·q̈ + b·q̇ + τ_gravity(q), saturated at the effort limit (`acc`: q̈). */
  #efforts(acc: Float64Array): void {
    this.#kin.gravityTorquesNm(this.#gravity);
    this.#kin.inertiaDiagKgM2(this.#inertia);
    for (let i = 0; i < N; i++) {
      const e = this.#inertia[i]! * acc[i]! + P7_VISCOUS_NM_S_RAD[i]! * this.velocityRadS[i]! + this.#gravity[i]!;
      const lim = P7_EFFORT_LIMIT_NM[i]!;
      this.effortNm[i] = Math.min(lim, Math.max(-lim, e));
    }
  }

  /** IMU specific force and rate in the IMU frame (link 7's axes). `moved` = a step happened. */
  #imu(moved: boolean): void {
    const k = this.#kin;
    const p = k.imuM;
    // World-frame IMU velocity and acceleration by finite differences of its position.
    let ax = 0,
      ay = 0,
      az = 0;
    if (moved) {
      const vx = (p[0]! - this.#imuPrevM[0]!) / DT_S,
        vy = (p[1]! - this.#imuPrevM[1]!) / DT_S,
        vz = (p[2]! - this.#imuPrevM[2]!) / DT_S;
      ax = (vx - this.#imuPrevVel[0]!) / DT_S;
      ay = (vy - this.#imuPrevVel[1]!) / DT_S;
      az = (vz - this.#imuPrevVel[2]!) / DT_S;
      this.#imuPrevVel[0] = vx;
      this.#imuPrevVel[1] = vy;
      this.#imuPrevVel[2] = vz;
      this.#imuPrevM.set(p);
    }
    // Specific force f = a − g with g = (0, 0, −g0).
    const fx = ax,
      fy = ay,
      fz = az + GRAVITY_M_S2;
    let wx = 0,
      wy = 0,
      wz = 0;
    for (let i = 0; i < N; i++) {
      const qd = this.velocityRadS[i]!;
      wx += qd * k.axis[3 * i]!;
      wy += qd * k.axis[3 * i + 1]!;
      wz += qd * k.axis[3 * i + 2]!;
    }
    // Into the IMU frame: Rᵀ·x with R = the rotation of the IMU's link (row-major, 9 per link).
    const R = k.rotation,
      o = IMU_ROTATION_OFFSET;
    const a = this.accelerometerMps2,
      g = this.gyroRadS;
    a[0] = R[o]! * fx + R[o + 3]! * fy + R[o + 6]! * fz;
    a[1] = R[o + 1]! * fx + R[o + 4]! * fy + R[o + 7]! * fz;
    a[2] = R[o + 2]! * fx + R[o + 5]! * fy + R[o + 8]! * fz;
    g[0] = R[o]! * wx + R[o + 3]! * wy + R[o + 6]! * wz;
    g[1] = R[o + 1]! * wx + R[o + 4]! * wy + R[o + 7]! * wz;
    g[2] = R[o + 2]! * wx + R[o + 5]! * wy + R[o + 8]! * wz;
  }
}
