/**
 * The physics TNY-360: MuJoCo stepping the model generated from our tables
 * (bodies/tny360/mjcf.ts), behind the same seam as the kinematic model (../model.ts). Runs in the
 * thread that owns the simulator (the real-time core's); every array is a live view into MuJoCo's
 * memory, read and written in place, so a tick allocates nothing.
 *
 * - Servos: each joint's set point is the firmware's joint model (`fw.model`: the target moved at
 *   7 rad/s × the speed scale), its gain and torque limit on while the joint is enabled and off
 *   while it is not. Each physics step the torque limit follows the servo's torque–speed line
 *   (stall torque at rest, none at the no-load speed: servos.ts), so no joint outruns its servo.
 *   A disabled joint's model follows the joint (the firmware's estimate tracks its feedback), so
 *   enabling it never jumps.
 * - Sensors, in the protocol's units: joint feedback = MuJoCo's angle + potentiometer noise (the
 *   ears, without feedback, report the angle); velocities MuJoCo's; efforts the servo's torque
 *   (N·m, the joint's sign); the IMU MuJoCo's accelerometer (specific force: +9.81 on z at rest),
 *   gyro and orientation (Euler XYZ from the start heading); a paw is grounded when its contact
 *   force exceeds `PAW_SWITCH_N`.
 * - Odometry: the body's true planar motion since boot, in the start frame, from the physics
 *   (a real robot's would drift with slip); velocities in the heading frame, smoothed as the
 *   kinematic model's.
 * - Time: MuJoCo advances in 2.5 ms steps; a tick of any length runs the whole steps it covers
 *   and carries the rest, so simulated time never drifts from the clock that drives it.
 * - Fallen: the body more than 50° from upright. Resting on the belly (a smooth disable) is not.
 */
import { eulerXYZ } from "../../../bodies/tny360/kinematics.js";
import { ADC_CHANNEL_COUNT, JOINTS } from "../../../bodies/tny360/joints.js";
import { TNY360_CONTACT_LINKS, TNY360_SENSOR_ADR, TNY360_TIMESTEP_S, tny360Mjcf } from "../../../bodies/tny360/mjcf.js";
import { EAR_DEFAULT_RAD, REST_POSE_RAD, STAND_POSE_RAD, type Tny360SimPose } from "../../../bodies/tny360/poses.js";
import { TNY360_NO_LOAD_SPEED_RAD_S, TNY360_STALL_TORQUE_NM } from "../../../bodies/tny360/servos.js";
import { JOINT_COUNT, LEG_COUNT } from "../../../wire/tny/constants.js";
import { compiledModelCopy, loadMujoco, ServoViews, type MjData, type MjModel, type Mujoco, readContactForces } from "../../physics/mujoco.js";
import { Rng } from "../../random.js";
import { DT_S, type Firmware } from "../firmware.js";
import { ACCEL_NOISE_MS2, FEEDBACK_NOISE_RAD, powerAndAdc, type Tny360BodyModel, type Tny360ModelFactory, type Tny360SimWorld } from "../model.js";

/** A paw's contact switch closes above this force, N *(inferred: about 50 g)*. */
export const PAW_SWITCH_N = 0.5;
export type { Tny360SimPose } from "../../../bodies/tny360/poses.js";

/** cos 50°: a body tilted further than this from upright has fallen. */
const FALLEN_UP_Z = Math.cos((50 * Math.PI) / 180);
const TIMESTEP_US = Math.round(TNY360_TIMESTEP_S * 1e6);
/** Odometry velocity smoothing per tick (the kinematic model's). */
const VELOCITY_ALPHA = 0.1;

// Slots of #f (typed: never boxed).
const TIME_S = 0;
/** µs carried to the next tick. */
const CARRY_US = 1;
const FALLEN = 2;
/** The odometry's origin: x, y (m) and heading (rad) at boot. */
const X0 = 3;
const Y0 = 4;
const YAW0 = 5;
const SLOTS = 6;

export class MujocoTnyModel implements Tny360BodyModel, Tny360SimWorld {
  readonly kind = "physics";
  readonly grounded = new Uint8Array(LEG_COUNT);
  readonly adc = new Float32Array(ADC_CHANNEL_COUNT);
  readonly basePositionM = new Float64Array(3);
  readonly baseOrientationXyzw = new Float64Array([0, 0, 0, 1]);
  readonly contactLinks = TNY360_CONTACT_LINKS;
  readonly contactForceN = new Float64Array(TNY360_CONTACT_LINKS.length);
  /** MuJoCo's own objects, for tests and tools (the physics is theirs to read, not to step). */
  readonly mj: Mujoco;
  readonly mjModel: MjModel;
  readonly mjData: MjData;

  readonly #fw: Firmware;
  readonly #seed: number;
  #rand = new Rng(1);
  /** Standard normals drawn once per tick: 3 accelerometer axes, then one per joint. */
  readonly #z = new Float64Array(3 + JOINT_COUNT);
  /** MuJoCo's arrays this model reads and writes, in place. */
  readonly #v: ServoViews;
  readonly #kp = new Float64Array(JOINT_COUNT);
  readonly #kv = new Float64Array(JOINT_COUNT);
  readonly #ctrlMin = new Float64Array(JOINT_COUNT);
  readonly #ctrlMax = new Float64Array(JOINT_COUNT);
  /** The body's rotation in the start frame (row-major), and its Euler angles. */
  readonly #rot = new Float64Array(9);
  readonly #euler = new Float64Array(3);
  readonly #f = new Float64Array(SLOTS);

  constructor(mj: Mujoco, fw: Firmware, seed: number, pose: Tny360SimPose = "rest") {
    this.mj = mj;
    this.#fw = fw;
    this.#seed = seed;
    const m = compiledModelCopy(mj, "tny360", tny360Mjcf);
    const d = new mj.MjData(m);
    this.mjModel = m;
    this.mjData = d;
    this.#v = new ServoViews(m, d);
    const gain = this.#v.gain.v;
    const bias = this.#v.bias.v;
    const ctrlRange = m.actuator_ctrlrange as Float64Array;
    for (let a = 0; a < JOINT_COUNT; a++) {
      this.#kp[a] = gain[10 * a]!;
      this.#kv[a] = -bias[10 * a + 2]!;
      this.#ctrlMin[a] = ctrlRange[2 * a]!;
      this.#ctrlMax[a] = ctrlRange[2 * a + 1]!;
    }
    this.resetWorld(pose);
  }

  get heightM(): number {
    return this.basePositionM[2]!;
  }
  get world(): Tny360SimWorld {
    return this;
  }
  get timeS(): number {
    return this.#f[TIME_S]!;
  }
  get fallen(): boolean {
    return this.#f[FALLEN] === 1;
  }

  /**
   * Put the robot down in `pose` at the origin, at rest, limp: the joints there (`lying`: REST, on
   * its back), the lowest point on the floor, simulated time 0, no contact or warm start left over
   * (prepare side: allocates). The firmware's joint model follows the joints while they are off.
   */
  resetWorld(pose: Tny360SimPose): void {
    const { mj, mjModel: m, mjData: d } = this;
    mj.mj_resetData(m, d);
    const q = this.#v.qpos.v;
    const legs = pose === "stand" ? STAND_POSE_RAD : REST_POSE_RAD;
    // MuJoCo's free joint: position, then the quaternion w, x, y, z (on its back: half a turn about x).
    q.set(pose === "lying" ? [0, 0, 0, 0, 1, 0, 0] : [0, 0, 0, 1, 0, 0, 0]);
    for (let j = 0; j < JOINT_COUNT; j++) q[7 + j] = j < 12 ? legs[j]! : EAR_DEFAULT_RAD;
    mj.mj_kinematics(m, d);
    q[2] = 0.0005 - lowestPointM(m, d);
    const ctrl = this.#v.ctrl.v;
    for (let a = 0; a < JOINT_COUNT; a++) ctrl[a] = q[7 + a]!;
    this.#f[TIME_S] = 0;
    this.#f[CARRY_US] = 0;
    mj.mj_forward(m, d);
    this.#readWorld();
  }

  reset(): void {
    this.#rand = new Rng(this.#seed || 1);
    const q = this.#v.qpos.v;
    this.#f[X0] = q[0]!;
    this.#f[Y0] = q[1]!;
    this.#f[YAW0] = yawOf(q[3]!, q[4]!, q[5]!, q[6]!);
    const od = this.#fw.state.odometry;
    od.vxMS = od.vyMS = od.yawRateRadS = 0;
  }

  /** The servos' set points and power in, MuJoCo's steps, the world out. */
  bodyPose(): void {
    const fw = this.#fw;
    const f = this.#f;
    const q = this.#v.qpos.v;
    const ctrl = this.#v.ctrl.v;
    const gain = this.#v.gain.v;
    const bias = this.#v.bias.v;
    for (let a = 0; a < JOINT_COUNT; a++) {
      const on = fw.enabled[a] === 1;
      const kp = on ? this.#kp[a]! : 0;
      gain[10 * a] = kp;
      bias[10 * a + 1] = -kp;
      bias[10 * a + 2] = on ? -this.#kv[a]! : 0;
      if (!on) {
        ctrl[a] = q[7 + a]!;
        if (JOINTS[a]!.adcChannel !== null) fw.model[a] = q[7 + a]!; // the estimate follows the limp joint's feedback
        continue;
      }
      ctrl[a] = Math.min(this.#ctrlMax[a]!, Math.max(this.#ctrlMin[a]!, fw.model[a]!));
    }
    f[CARRY_US]! += Math.round(fw.f[DT_S]! * 1e6);
    while (f[CARRY_US]! >= TIMESTEP_US) {
      this.#torqueSpeedLimits();
      this.mj.mj_step(this.mjModel, this.mjData);
      f[CARRY_US]! -= TIMESTEP_US;
      f[TIME_S]! += TNY360_TIMESTEP_S;
    }
    this.#readWorld();
  }

  /** Odometry from the body's true motion, and the IMU. */
  odometryImu(): void {
    const fw = this.#fw;
    const f = this.#f;
    const q = this.#v.qpos.v;
    const v = this.#v.qvel.v;
    const s = this.#v.sensor.v;
    const r = this.#rot;
    // The body's rotation in the start frame: Rz(−yaw0) · R.
    quatToMatrix(q[3]!, q[4]!, q[5]!, q[6]!, r);
    const c0 = Math.cos(f[YAW0]!),
      s0 = Math.sin(f[YAW0]!);
    for (let col = 0; col < 3; col++) {
      const a = r[col]!,
        b = r[3 + col]!;
      r[col] = c0 * a + s0 * b;
      r[3 + col] = -s0 * a + c0 * b;
    }
    const od = fw.state.odometry;
    const dx = q[0]! - f[X0]!,
      dy = q[1]! - f[Y0]!;
    od.xM = c0 * dx + s0 * dy;
    od.yM = -s0 * dx + c0 * dy;
    const yaw = Math.atan2(r[3]!, r[0]!);
    od.yawRad = yaw;
    // velocities in the heading frame (free joint: world-frame linear, body-frame angular)
    const cy = Math.cos(yaw + f[YAW0]!),
      sy = Math.sin(yaw + f[YAW0]!);
    const vx = cy * v[0]! + sy * v[1]!;
    const vy = -sy * v[0]! + cy * v[1]!;
    const wz = r[6]! * v[3]! + r[7]! * v[4]! + r[8]! * v[5]!;
    od.vxMS += VELOCITY_ALPHA * (vx - od.vxMS);
    od.vyMS += VELOCITY_ALPHA * (vy - od.vyMS);
    od.yawRateRadS += VELOCITY_ALPHA * (wz - od.yawRateRadS);

    const imu = fw.state.imu;
    eulerXYZ(r, this.#euler);
    const z = this.#z;
    this.#rand.fillGauss(z, z.length);
    for (let k = 0; k < 3; k++) {
      imu.orientationRad[k] = this.#euler[k]!;
      imu.angularVelocityRadS[k] = s[TNY360_SENSOR_ADR.gyro + k]!;
      imu.linearAccelerationMS2[k] = s[TNY360_SENSOR_ADR.accelerometer + k]! + ACCEL_NOISE_MS2 * z[k]!;
      imu.down[k] = 0 - r[6 + k]!; // 0 − x, not −x: no −0 in the readings
    }
  }

  /** Joint feedback (angle + noise), estimates, velocities and the servos' torques. */
  jointSensors(): void {
    const fw = this.#fw;
    const q = this.#v.qpos.v;
    const v = this.#v.qvel.v;
    const force = this.#v.actForce.v;
    const z = this.#z;
    const j = fw.state.joints;
    const m = fw.model;
    for (let i = 0; i < JOINT_COUNT; i++) {
      const angle = q[7 + i]!;
      fw.feedback[i] = JOINTS[i]!.adcChannel !== null ? angle + FEEDBACK_NOISE_RAD * z[3 + i]! : angle;
      fw.estimated[i] = m[i]! + 0.25 * (fw.feedback[i]! - m[i]!);
      j.velocityRadS[i] = v[6 + i]!;
      j.effortNm[i] = fw.enabled[i] ? force[i]! : 0;
    }
  }

  powerAdc(): void {
    powerAndAdc(this.#fw, this.grounded, this.adc);
  }

  /** Each servo's torque limit on its torque–speed line at the joint's speed now. */
  #torqueSpeedLimits(): void {
    const v = this.#v.qvel.v;
    const range = this.#v.forceRange.v;
    const enabled = this.#fw.enabled;
    for (let a = 0; a < JOINT_COUNT; a++) {
      if (!enabled[a]) {
        range[2 * a] = 0;
        range[2 * a + 1] = 0;
        continue;
      }
      const stall = TNY360_STALL_TORQUE_NM[a]!;
      const w = v[6 + a]! / TNY360_NO_LOAD_SPEED_RAD_S[a]!;
      // driving along the motion the motor has stall × (1 − ω/ω₀) left; braking, all of it
      range[2 * a + 1] = w > 0 ? stall * Math.max(0, 1 - w) : stall;
      range[2 * a] = w < 0 ? -stall * Math.max(0, 1 + w) : -stall;
    }
  }

  /** Base pose, contacts, paws and the fall from MuJoCo's state. */
  #readWorld(): void {
    const q = this.#v.qpos.v;
    const s = this.#v.sensor.v;
    for (let k = 0; k < 3; k++) this.basePositionM[k] = q[k]!;
    const o = this.baseOrientationXyzw;
    o[0] = q[4]!;
    o[1] = q[5]!;
    o[2] = q[6]!;
    o[3] = q[3]!;
    readContactForces(s, TNY360_SENSOR_ADR.contacts, TNY360_SENSOR_ADR.contactStride, this.contactForceN);
    for (let leg = 0; leg < LEG_COUNT; leg++) this.grounded[leg] = this.contactForceN[1 + leg]! > PAW_SWITCH_N ? 1 : 0;
    const x = q[4]!,
      y = q[5]!;
    const upZ = 1 - 2 * (x * x + y * y); // the body's z axis against the world's
    this.#f[FALLEN] = upZ < FALLEN_UP_Z ? 1 : 0;
  }
}

/** A factory for the simulator (quadruped.ts's `model` option): loads MuJoCo once per thread. */
export async function mujocoTnyModelFactory(pose: Tny360SimPose = "rest"): Promise<Tny360ModelFactory> {
  const mj = await loadMujoco();
  return (fw, seed) => new MujocoTnyModel(mj, fw, seed, pose);
}

/** Row-major rotation matrix of the quaternion (w, x, y, z). */
function quatToMatrix(w: number, x: number, y: number, z: number, out: Float64Array): void {
  out[0] = 1 - 2 * (y * y + z * z);
  out[1] = 2 * (x * y - w * z);
  out[2] = 2 * (x * z + w * y);
  out[3] = 2 * (x * y + w * z);
  out[4] = 1 - 2 * (x * x + z * z);
  out[5] = 2 * (y * z - w * x);
  out[6] = 2 * (x * z - w * y);
  out[7] = 2 * (y * z + w * x);
  out[8] = 1 - 2 * (x * x + y * y);
}

/** Heading (rotation about the world's z) of the quaternion (w, x, y, z). */
function yawOf(w: number, x: number, y: number, z: number): number {
  return Math.atan2(2 * (x * y + w * z), 1 - 2 * (y * y + z * z));
}

/** The lowest point of any colliding geom above the floor, m (after mj_kinematics; prepare side). */
function lowestPointM(m: MjModel, d: MjData): number {
  const type = m.geom_type as Int32Array;
  const size = m.geom_size as Float64Array;
  const contype = m.geom_contype as Int32Array;
  const pos = d.geom_xpos as Float64Array;
  const mat = d.geom_xmat as Float64Array;
  let low = Number.POSITIVE_INFINITY;
  for (let g = 0; g < m.ngeom; g++) {
    if (contype[g] !== 2) continue; // the robot's colliding geoms (the floor is 1, visuals 0)
    const z = pos[3 * g + 2]!;
    const r = mat.subarray(9 * g + 6, 9 * g + 9); // the geom's axes' world z components
    const sz = size.subarray(3 * g, 3 * g + 3);
    const t = type[g];
    if (t === 2)
      low = Math.min(low, z - sz[0]!); // sphere
    else if (t === 3)
      low = Math.min(low, z - Math.abs(r[2]!) * sz[1]! - sz[0]!); // capsule: half length along its z
    else if (t === 6) low = Math.min(low, z - Math.abs(r[0]!) * sz[0]! - Math.abs(r[1]!) * sz[1]! - Math.abs(r[2]!) * sz[2]!); // box
  }
  return low;
}
