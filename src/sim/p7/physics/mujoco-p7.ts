/**
 * The physics P7: MuJoCo stepping models/p7.xml (generated from our tables by bodies/p7/mjcf.ts)
 * behind the same seam as the kinematic arm (../model.ts). Runs in the thread that owns the
 * simulated arm (the real-time core's); every array is a live view into MuJoCo's memory, read and
 * written in place, so a step allocates nothing.
 *
 * - Servos: one position servo per joint (the MJCF's: gain = effort limit over
 *   P7_SERVO_STALL_ERROR_RAD, damping P7_SERVO_DAMPING_S × gain, force limited to the SDK's effort
 *   bound) tracks the arm service's set-point, with the feed-forwards an arm's servo has:
 *   ctrl = q_ref + (kv/kp)·q̇_ref + (τ_bias + M_ii·q̈_ref)/kp, so the servo's force is
 *   kp·(q_ref − q) + kv·(q̇_ref − q̇) + τ_bias + M_ii·q̈_ref: a joint moving at a steady speed does
 *   not lag by kv/kp × speed, a held pose does not sag by τ_gravity/kp, and one that accelerates
 *   or brakes gets the torque for it. τ_bias is MuJoCo's own gravity and Coriolis torque
 *   (qfrc_bias) and M_ii the diagonal of its joint-space inertia (armature included), both of the
 *   last substep; the force stays limited to the effort bound, so a load beyond it still sags.
 *   That ctrl may leave the command range, so MuJoCo's control clamping is off; the set-point
 *   itself never leaves it, and the joints' ranges stop the arm.
 * - Sensors, in the SDK's units: positions and velocities of the joints, efforts = the servos'
 *   torque (MuJoCo's actuator force: gravity, inertia, friction, all of it), the accelerometer
 *   (specific force, +g up at rest) and gyro at the arm_imu site, in its frame (link 7's axes);
 *   each link's net contact force with the floor or the base (the state's `sim.contacts`).
 * - Time: four 1 ms MuJoCo steps per 4 ms step of the arm.
 * - The base is bolted to the world: it never moves and nothing falls. The links collide with the
 *   floor, the base and each other (bodies/p7/mjcf.ts), so a move through them ends on them.
 */
import { P7_JOINT_COUNT } from "../../../bodies/p7/joints.js";
import { P7_SENSOR_ADR, P7_TIMESTEP_S, p7Mjcf } from "../../../bodies/p7/mjcf.js";
import { compiledModelCopy, LiveView, loadMujoco, type MjData, type MjModel, type Mujoco, readContactForces, ServoViews } from "../../physics/mujoco.js";
import { P7_SIM_STEP_MS } from "../constants.js";
import { type P7BodyModel, P7ModelOutputs } from "../model.js";

const N = P7_JOINT_COUNT;
/** MuJoCo steps per 4 ms step of the arm. */
const SUBSTEPS = Math.round(P7_SIM_STEP_MS / 1000 / P7_TIMESTEP_S);
const ZERO = new Float64Array(N);

export class MujocoP7Model extends P7ModelOutputs implements P7BodyModel {
  readonly kind = "physics";
  /** MuJoCo's own objects, for tests and tools (the physics is theirs to read, not to step). */
  readonly mj: Mujoco;
  readonly mjModel: MjModel;
  readonly mjData: MjData;

  /** Joint state, set points, servo parameters, torques and sensors (the NAO's and TNY-360's too). */
  readonly #views: ServoViews;
  readonly #qfrcBias: LiveView;
  /** MuJoCo's joint-space inertia, sparse (its diagonal at #massDiag). */
  readonly #mass: LiveView;
  readonly #massDiag = new Int32Array(N);
  /** Per servo: its damping over its gain, s (the velocity feed-forward's factor). */
  readonly #feedForwardS = new Float64Array(N);
  /** Per servo: 1 / its gain, rad per N·m (the gravity feed-forward's factor). */
  readonly #compliance = new Float64Array(N);
  /** [0] MuJoCo steps since the last reset. */
  readonly #f = new Float64Array(1);

  /** Load MuJoCo (once per thread) and build the arm at rest at `anglesRad`. */
  static async create(anglesRad: ArrayLike<number>): Promise<MujocoP7Model> {
    return new MujocoP7Model(await loadMujoco(), anglesRad);
  }

  constructor(mj: Mujoco, anglesRad: ArrayLike<number>) {
    super();
    this.mj = mj;
    const m = compiledModelCopy(mj, "p7", p7Mjcf);
    const d = new mj.MjData(m);
    this.mjModel = m;
    this.mjData = d;
    m.opt.disableflags = m.opt.disableflags | mj.mjtDisableBit.mjDSBL_CLAMPCTRL.value; // the feed-forward (above)
    this.#views = new ServoViews(m, d);
    this.#qfrcBias = new LiveView(() => d.qfrc_bias as Float64Array);
    this.#mass = new LiveView(() => d.M as Float64Array);
    // Each row of the sparse lower triangle ends on its diagonal.
    const rowAdr = m.M_rowadr as Int32Array,
      rowNnz = m.M_rownnz as Int32Array;
    for (let i = 0; i < N; i++) this.#massDiag[i] = rowAdr[i]! + rowNnz[i]! - 1;
    const gain = this.#views.gain.v;
    const bias = this.#views.bias.v;
    // A position servo's force is gain·ctrl + bias[1]·q + bias[2]·q̇, with bias = (0, −kp, −kv).
    for (let a = 0; a < N; a++) {
      this.#feedForwardS[a] = -bias[10 * a + 2]! / gain[10 * a]!;
      this.#compliance[a] = 1 / gain[10 * a]!;
    }
    this.reset(anglesRad);
  }

  get timeS(): number {
    return this.#f[0]! * P7_TIMESTEP_S;
  }

  reset(anglesRad: ArrayLike<number>): void {
    const { mj, mjModel: m, mjData: d } = this;
    mj.mj_resetData(m, d);
    const q = this.#views.qpos.v;
    for (let i = 0; i < N; i++) q[i] = anglesRad[i]!;
    this.#f[0] = 0;
    mj.mj_forward(m, d); // the pose's gravity torques, for the servos' feed-forward
    this.#command(q, ZERO, ZERO);
    mj.mj_forward(m, d); // the servos already hold it: the efforts from the first frame
    this.#read();
  }

  step(setpointRad: Float64Array, setpointRadS: Float64Array, setpointRadS2: Float64Array): void {
    for (let k = 0; k < SUBSTEPS; k++) {
      this.#command(setpointRad, setpointRadS, setpointRadS2);
      this.mj.mj_step(this.mjModel, this.mjData);
    }
    this.#f[0]! += SUBSTEPS;
    this.#read();
  }

  /** The servos' set-points with both feed-forwards (the module comment). */
  #command(setpointRad: ArrayLike<number>, setpointRadS: ArrayLike<number>, setpointRadS2: ArrayLike<number>): void {
    const ctrl = this.#views.ctrl.v;
    const bias = this.#qfrcBias.v;
    const mass = this.#mass.v;
    for (let a = 0; a < N; a++) {
      const torque = bias[a]! + mass[this.#massDiag[a]!]! * setpointRadS2[a]!;
      ctrl[a] = setpointRad[a]! + this.#feedForwardS[a]! * setpointRadS[a]! + this.#compliance[a]! * torque;
    }
  }

  /** Fill the outputs from MuJoCo's state and sensors. */
  #read(): void {
    const s = this.#views.sensor.v;
    const force = this.#views.actForce.v;
    for (let i = 0; i < N; i++) {
      this.positionRad[i] = s[P7_SENSOR_ADR.position + i]!;
      this.velocityRadS[i] = s[P7_SENSOR_ADR.velocity + i]!;
      this.effortNm[i] = force[i]!;
    }
    for (let k = 0; k < 3; k++) {
      this.accelerometerMps2[k] = s[P7_SENSOR_ADR.accelerometer + k]!;
      this.gyroRadS[k] = s[P7_SENSOR_ADR.gyro + k]!;
    }
    readContactForces(s, P7_SENSOR_ADR.contacts, P7_SENSOR_ADR.contactStride, this.contactForceN);
  }
}
