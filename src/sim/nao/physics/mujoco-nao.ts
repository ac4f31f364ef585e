/**
 * The physics NAO: MuJoCo stepping the model generated from our tables (bodies/nao/mjcf.ts),
 * behind the same body-model seam as the kinematic puppet (../model.ts). Runs in the thread that
 * owns the chest board (the real-time core's); every array is a live view into MuJoCo's memory,
 * read and written in place, so a step allocates nothing.
 *
 * - Servos: LoLA's stiffness (0..1) scales each position servo's gain and torque limit; the
 *   servo's set point moves toward the target no faster than the joint's no-load speed
 *   (motors.ts). At stiffness 0 the set point follows the joint, and only the gears' damping and
 *   friction hold it. The hands keep the kinematic lag (the model has no fingers).
 * - Sensors, in LoLA's units: FSRs are the touch force in each quarter of the sole over g (kg);
 *   the accelerometer is MuJoCo's at the IMU site, negated (LoLA: z ≈ −9.81 m/s² upright); the
 *   gyroscope MuJoCo's; the angles the torso's roll and pitch; currents |τ| times the motor's
 *   A per N·m (motors.ts, inferred).
 * - Time: MuJoCo advances in 3 ms steps; a cycle of any length runs the whole steps it covers
 *   and carries the rest, so simulated time never drifts from the clock that drives it.
 * - Fallen: the torso more than 50° from upright, or the torso or head touching the floor.
 */
import { LOLA_INDEX, type LOLA_ORDER, REST_POSTURE_RAD } from "../../../bodies/nao/joints.js";
import { groundedBasePose, NAO_CONTACT_LINKS, NAO_MJCF_JOINTS, NAO_SENSOR_ADR, NAO_TIMESTEP_S, naoMjcf } from "../../../bodies/nao/mjcf.js";
import { NAO_DRIVEN_JOINTS, NAO_JOINT_DRIVES } from "../../../bodies/nao/motors.js";
import { compiledModelCopy, loadMujoco, readContactForces, ServoViews, type MjData, type MjModel, type Mujoco } from "../../physics/mujoco.js";
import { GRAVITY_MPS2, lagJoint, type NaoBodyModel, NaoModelOutputs, type NaoSimPose } from "../model.js";

/**
 * The pose a physics NAO starts in: crouched, as a NAO is put down before it is switched on. Limp
 * (every stiffness 0 until a client commands), the crouch rests on the joints' limits and stays;
 * standing limp, it would fall before any client could hold it.
 */
export const PHYSICS_START_POSE: NaoSimPose = "crouch";

const NU = NAO_DRIVEN_JOINTS.length;
const NJ = NAO_MJCF_JOINTS.length;
/** cos 50°: a torso tilted further than this from upright has fallen. */
const FALLEN_UP_Z = Math.cos((50 * Math.PI) / 180);
const TIMESTEP_US = Math.round(NAO_TIMESTEP_S * 1e6);
/** Torso and Head: touching the floor with these is a fall. */
const FALL_LINKS = ["Torso", "Head"].map((l) => NAO_CONTACT_LINKS.indexOf(l));

export class MujocoNaoModel extends NaoModelOutputs implements NaoBodyModel {
  readonly kind = "physics";
  readonly contactLinks = NAO_CONTACT_LINKS;
  readonly contactForceN = new Float64Array(NAO_CONTACT_LINKS.length);
  /** MuJoCo's own objects, for tests and tools (the physics is theirs to read, not to step). */
  readonly mj: Mujoco;
  readonly mjModel: MjModel;
  readonly mjData: MjData;

  /** MuJoCo's arrays this model reads and writes, in place. */
  readonly #v: ServoViews;
  /** Per actuator: its LoLA index, qpos address, gain and torque limit at stiffness 1, top speed. */
  readonly #actLola = Int32Array.from(NAO_DRIVEN_JOINTS, (n) => LOLA_INDEX[n]);
  readonly #actQpos = Int32Array.from(NAO_DRIVEN_JOINTS, (n) => 7 + NAO_MJCF_JOINTS.indexOf(n));
  readonly #kp = new Float64Array(NU);
  readonly #torqueMax = new Float64Array(NU);
  readonly #speedMax = Float64Array.from(NAO_DRIVEN_JOINTS, (n) => NAO_JOINT_DRIVES[n].noLoadSpeedRadS);
  readonly #ampsPerNm = Float64Array.from(NAO_DRIVEN_JOINTS, (n) => NAO_JOINT_DRIVES[n].currentAPerNm);
  readonly #ctrlMin = new Float64Array(NU);
  readonly #ctrlMax = new Float64Array(NU);
  /** [0] time s, [1] µs carried to the next step, [2] step s, [3] fallen (0/1). */
  readonly #f = new Float64Array(4);

  /** Load MuJoCo (once per thread) and build the NAO in the `pose` it starts in. */
  static async create(pose: NaoSimPose = "stand"): Promise<MujocoNaoModel> {
    return new MujocoNaoModel(await loadMujoco(), pose);
  }

  constructor(mj: Mujoco, pose: NaoSimPose = "stand") {
    super();
    this.mj = mj;
    const m = compiledModelCopy(mj, "nao", naoMjcf);
    const d = new mj.MjData(m);
    this.mjModel = m;
    this.mjData = d;
    this.#v = new ServoViews(m, d);
    const gain = this.#v.gain.v;
    const range = this.#v.forceRange.v;
    const ctrlRange = m.actuator_ctrlrange as Float64Array;
    for (let a = 0; a < NU; a++) {
      this.#kp[a] = gain[10 * a]!;
      this.#torqueMax[a] = range[2 * a + 1]!;
      this.#ctrlMin[a] = ctrlRange[2 * a]!;
      this.#ctrlMax[a] = ctrlRange[2 * a + 1]!;
    }
    this.reset(pose);
  }

  get timeS(): number {
    return this.#f[0]!;
  }
  get fallen(): boolean {
    return this.#f[3] === 1;
  }

  reset(pose: NaoSimPose): void {
    const { mj, mjModel: m, mjData: d } = this;
    mj.mj_resetData(m, d);
    const posture = pose === "crouch" ? REST_POSTURE_RAD : ZERO;
    const q = this.#v.qpos.v;
    const base = pose === "lying" ? LYING_BASE : groundedBasePose(posture);
    for (let i = 0; i < 7; i++) q[i] = base[i]!;
    for (let j = 0; j < NJ; j++) q[7 + j] = posture[LOLA_INDEX[lolaName(NAO_MJCF_JOINTS[j]!)]]!;
    const ctrl = this.#v.ctrl.v;
    for (let a = 0; a < NU; a++) ctrl[a] = q[this.#actQpos[a]!]!;
    for (const h of [LOLA_INDEX.LHand, LOLA_INDEX.RHand]) this.positionRad[h] = posture[h]!;
    this.#f.fill(0);
    mj.mj_forward(m, d);
    this.#read();
  }

  stepUs(dtUs: number, targetRad: Float64Array, stiffness: Float64Array): void {
    const f = this.#f;
    f[2] = dtUs * 1e-6;
    const dtS = f[2]!;
    const q = this.#v.qpos.v;
    const ctrl = this.#v.ctrl.v;
    const gain = this.#v.gain.v;
    const bias = this.#v.bias.v;
    const range = this.#v.forceRange.v;
    for (let a = 0; a < NU; a++) {
      const li = this.#actLola[a]!;
      const s = Math.min(1, Math.max(0, stiffness[li]!));
      const kp = this.#kp[a]! * s;
      gain[10 * a] = kp;
      bias[10 * a + 1] = -kp;
      range[2 * a] = -this.#torqueMax[a]! * s;
      range[2 * a + 1] = this.#torqueMax[a]! * s;
      if (s === 0) {
        ctrl[a] = q[this.#actQpos[a]!]!;
        continue;
      }
      const maxStep = this.#speedMax[a]! * dtS;
      const next = ctrl[a]! + Math.max(-maxStep, Math.min(maxStep, targetRad[li]! - ctrl[a]!));
      ctrl[a] = Math.min(this.#ctrlMax[a]!, Math.max(this.#ctrlMin[a]!, next));
    }
    lagJoint(this.positionRad, LOLA_INDEX.LHand, targetRad, stiffness, f, 2);
    lagJoint(this.positionRad, LOLA_INDEX.RHand, targetRad, stiffness, f, 2);
    f[1]! += dtUs;
    while (f[1]! >= TIMESTEP_US) {
      this.mj.mj_step(this.mjModel, this.mjData);
      f[1]! -= TIMESTEP_US;
      f[0]! += NAO_TIMESTEP_S;
    }
    this.#read();
  }

  /** Fill the outputs from MuJoCo's state and sensors. */
  #read(): void {
    const q = this.#v.qpos.v;
    const v = this.#v.qvel.v;
    const s = this.#v.sensor.v;
    const force = this.#v.actForce.v;
    for (let a = 0; a < NU; a++) {
      const li = this.#actLola[a]!;
      const qa = this.#actQpos[a]!;
      this.positionRad[li] = q[qa]!;
      this.velocityRadS[li] = v[qa - 1]!;
      const tau = force[a]!;
      this.torqueNm[li] = tau;
      this.currentA[li] = Math.abs(tau) * this.#ampsPerNm[a]!;
    }
    for (let i = 0; i < 8; i++) this.fsrKg[i] = s[NAO_SENSOR_ADR.fsr + i]! / GRAVITY_MPS2;
    for (let k = 0; k < 3; k++) {
      this.accelerometerMps2[k] = -s[NAO_SENSOR_ADR.accelerometer + k]!;
      this.gyroscopeRadS[k] = s[NAO_SENSOR_ADR.gyro + k]!;
      this.basePositionM[k] = q[k]!;
    }
    const w = q[3]!;
    const x = q[4]!;
    const y = q[5]!;
    const z = q[6]!;
    const o = this.baseOrientationXyzw;
    o[0] = x;
    o[1] = y;
    o[2] = z;
    o[3] = w;
    // Rotation matrix row 3 (the world's up axis in torso coordinates): roll and pitch from it.
    const r20 = 2 * (x * z - w * y);
    const r21 = 2 * (y * z + w * x);
    const r22 = 1 - 2 * (x * x + y * y);
    this.anglesRad[0] = Math.atan2(r21, r22);
    this.anglesRad[1] = Math.atan2(-r20, Math.sqrt(r21 * r21 + r22 * r22));
    readContactForces(s, NAO_SENSOR_ADR.contacts, NAO_SENSOR_ADR.contactStride, this.contactForceN);
    const touching = this.contactForceN[FALL_LINKS[0]!]! > 0 || this.contactForceN[FALL_LINKS[1]!]! > 0;
    this.#f[3] = r22 < FALLEN_UP_Z || touching ? 1 : 0;
  }
}

const ZERO = new Float64Array(25);
/** On its back: the torso's x axis up, resting on the back of the torso box and head. */
const LYING_BASE = [0, 0, 0.07, Math.SQRT1_2, 0, -Math.SQRT1_2, 0] as const;
const lolaName = (n: string): (typeof LOLA_ORDER)[number] => (n === "RHipYawPitch" ? "LHipYawPitch" : n) as (typeof LOLA_ORDER)[number];
