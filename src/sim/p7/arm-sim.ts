/**
 * A simulated AIRBOT Arm-P7: the arm-side service a runtime reads every 4 ms. It produces what
 * the P7's service publishes (joint angles, velocities, efforts; motor temperatures and raw error
 * ids; IMU angular velocity and linear acceleration in its own frame, gravity included) from a
 * model of the arm's mechanics (model.ts: kinematic, or MuJoCo physics), and takes joint targets.
 *
 * The P7 speaks a closed gRPC/DDS protocol, so there are no bytes to mirror here: the simulator's
 * interface is the arm service's data model (`P7SimFrame`) and its motion verbs. The runtime
 * (src/runtime/p7-robot.ts) validates every command before calling in; the simulator still
 * clamps targets to the mechanical limits so a bug cannot drive it out of range.
 *
 * Per 4 ms step (docs/p7.md):
 * - the arm service's trajectory: each joint's set-point tracks its target with a trapezoidal
 *   velocity profile (speed and acceleration limited; moves are scaled so all joints arrive
 *   together); a joint with a nonzero error id, or told to stop, decelerates at its stop rate and
 *   then holds where it stopped;
 * - the mechanics (model.ts) take that set-point: the kinematic model is exactly there, with
 *   efforts from the point-mass model and the IMU from the second difference of its position;
 *   the physics model's servos track it in MuJoCo, which gives the positions, efforts and IMU;
 * - temperature: first order towards ambient + idle rise + rise-at-limit · (effort/limit)²;
 *   above `overTemperatureC` the motor latches `P7_SIM_ERROR.overTemperature`;
 * - sensor noise on the efforts and the IMU.
 * Deterministic: the same seed and the same calls give the same frames, bit for bit.
 *
 * Allocation: `step()`/`advance()`/`read()` and the motion verbs create no objects or arrays
 * (all state is in preallocated typed arrays); optimised code still boxes a few doubles at
 * non-inlined call boundaries (measured with the sampling heap profiler: ~30–50 B per step,
 * short-lived). `clearError` returns a small array; `setReportedLengths` allocates views once.
 */
import {
  P7_EFFORT_LIMIT_NM,
  P7_HOME_RAD,
  P7_JOINT_COUNT,
  P7_MAX_ACCEL_RAD_S2,
  P7_MAX_RAD,
  P7_MAX_SPEED_RAD_S,
  P7_MIN_RAD,
  P7_RAW_LIMIT_MARGIN_RAD,
  P7_STOP_DECEL_RAD_S2,
} from "../../bodies/p7/joints.js";
import { clampP7Target, P7_SNAP_RAD, p7MoveScales } from "../../bodies/p7/commands.js";
import { KinematicP7Model, type P7BodyModel } from "./model.js";
import { DEFAULT_P7_SIM_PARAMS, P7_SIM_ERROR, P7_SIM_MAX_CATCHUP_STEPS, P7_SIM_STEP_MS, type P7SimParams } from "./constants.js";
import { Rng } from "../random.js";

const N = P7_JOINT_COUNT;
const DT_S = P7_SIM_STEP_MS / 1000;
/** Closer than this to its target (rad) and slow enough to stop in one step, a joint snaps onto it. */
const SNAP_RAD = P7_SNAP_RAD;
/**
 * A halted physics arm brakes at this many times its stop rate (inferred): as hard as its servos can
 * follow without saturating (joint 2 braking at 64 rad/s² needs ~40 N·m of its 70; a 1 ms MuJoCo
 * step cannot integrate a saturated stop: it chatters).
 */
const BRAKE_FACTOR = 4;
/** Arrays can be reported one longer than the body, to simulate an upstream length mismatch. */
const JOINT_CAPACITY = N + 1;
const IMU_CAPACITY = 4;

/**
 * One published reading of the arm service. The arrays are views owned by the simulator and are
 * overwritten by the next step: copy what you keep. Lengths are the body's (7, 7, 3) unless a
 * test changed them with `setReportedLengths`.
 */
export interface P7SimFrame {
  /** Simulation steps since construction (one per 4 ms of simulated time). */
  readonly seq: number;
  /** rad, rad/s, N·m */
  readonly angles: Float64Array;
  readonly velocities: Float64Array;
  readonly efforts: Float64Array;
  /** °C */
  readonly temperatures: Float64Array;
  /** Raw integers, 0 = normal. */
  readonly errorIds: Float64Array;
  /** rad/s and m/s² in the arm_imu frame. */
  readonly angularVelocity: Float64Array;
  readonly linearAcceleration: Float64Array;
}

export interface P7SimOptions {
  /** Seed of the noise and of the motors' initial temperatures. Defaults to 1. */
  seed?: number;
  /** Model parameters to override. */
  params?: Partial<P7SimParams>;
  /** Starting joint angles, rad (inside the command limits). Defaults to `P7_HOME_RAD`. */
  initialAnglesRad?: ArrayLike<number>;
  /** The arm's mechanics (reset to the starting angles here). Defaults to a `KinematicP7Model`. */
  model?: P7BodyModel;
}

/** Each array of a frame: which reported length it takes (setReportedLengths). */
const FRAME_ARRAYS = {
  angles: "joints",
  velocities: "joints",
  efforts: "joints",
  temperatures: "motors",
  errorIds: "motors",
  angularVelocity: "imu",
  linearAcceleration: "imu",
} as const;
type FrameArray = keyof typeof FRAME_ARRAYS;
type ReportedLengths = Record<(typeof FRAME_ARRAYS)[FrameArray], number>;
const FRAME_KEYS = Object.keys(FRAME_ARRAYS) as FrameArray[];
const CAPACITY: ReportedLengths = { joints: JOINT_CAPACITY, motors: JOINT_CAPACITY, imu: IMU_CAPACITY };
const EMPTY = new Float64Array(0);

/** The published frame: its arrays at capacity (`full`, written each step) and the views it reports. */
class Frame implements P7SimFrame {
  seq = 0;
  readonly full = {} as Readonly<Record<FrameArray, Float64Array>>;
  angles = EMPTY;
  velocities = EMPTY;
  efforts = EMPTY;
  temperatures = EMPTY;
  errorIds = EMPTY;
  angularVelocity = EMPTY;
  linearAcceleration = EMPTY;

  constructor() {
    for (const k of FRAME_KEYS) (this.full as Record<FrameArray, Float64Array>)[k] = new Float64Array(CAPACITY[FRAME_ARRAYS[k]]);
    this.report({ joints: N, motors: N, imu: 3 });
  }

  /** Report views of these lengths (allocates them: prepare side). */
  report(lengths: ReportedLengths): void {
    for (const k of FRAME_KEYS) (this as Record<FrameArray, Float64Array>)[k] = this.full[k].subarray(0, lengths[FRAME_ARRAYS[k]]);
  }
}

function hasBit(value: number, bit: number): boolean {
  // Error ids may exceed 32 bits, so no bitwise operators.
  return Math.floor(value / bit) % 2 === 1;
}

export class P7Sim {
  readonly params: Readonly<P7SimParams>;
  /** The arm's mechanics under the trajectory (kinematic or physics). */
  readonly model: P7BodyModel;
  readonly #rng: Rng;

  // The trajectory's set-point (the kinematic model's arm is exactly here; the physics model's servos track it).
  readonly #q = new Float64Array(N);
  readonly #v = new Float64Array(N);
  readonly #acc = new Float64Array(N);
  readonly #target = new Float64Array(N);
  /** p7MoveScales' path speed and acceleration scales (moveTo). */
  readonly #scales = new Float64Array(2);
  readonly #vProfile = new Float64Array(N);
  readonly #aProfile = new Float64Array(N);
  readonly #stopping = new Uint8Array(N);
  /** Halted (category 0) on an arm that cannot stop at once (physics): braking at BRAKE_FACTOR × the stop rate. */
  readonly #braking = new Uint8Array(N);
  readonly #errorIds = new Float64Array(N);
  readonly #tempC = new Float64Array(N);
  readonly #thermalAlpha: number;

  readonly #frame: Frame;
  readonly #noise = new Float64Array(N + 6);
  #seq = 0;
  /** `#seq` at the last resetWorld (the world's time counts from there). */
  #resetSeq = 0;
  #pendingS = 0;
  #linkUp = true;

  constructor(opts: P7SimOptions = {}) {
    this.params = Object.freeze({ ...DEFAULT_P7_SIM_PARAMS, ...opts.params });
    this.#rng = new Rng(opts.seed ?? 1);
    this.#thermalAlpha = 1 - Math.exp(-DT_S / Math.max(1e-6, this.params.thermalTimeConstantS));
    const start = opts.initialAnglesRad ?? P7_HOME_RAD;
    this.#restAt(start, "initialAnglesRad");
    // Motors start near ambient, each a little different (seeded).
    for (let i = 0; i < N; i++) this.#tempC[i] = this.params.ambientC + (this.#rng.next() - 0.5);
    this.#frame = new Frame();
    this.model = opts.model ?? new KinematicP7Model(this.#q);
    if (opts.model) opts.model.reset(this.#q);
    this.#publish();
  }

  /** Simulated time since construction or the last `resetWorld`, s. */
  get timeS(): number {
    return (this.#seq - this.#resetSeq) * DT_S;
  }

  /**
   * Put the arm at rest at `anglesRad` (inside the joint limits): the trajectory there with no
   * motion, stop or brake left, the mechanics reset (MuJoCo: no contact, velocity or warm start
   * left over), time since reset 0. Motor temperatures and error ids stay: they are the motors',
   * not the world's. Prepare side (POST /v1/sim/reset).
   */
  resetWorld(anglesRad: ArrayLike<number>): void {
    this.#restAt(anglesRad, "anglesRad");
    this.#resetSeq = this.#seq;
    this.#pendingS = 0;
    this.model.reset(this.#q);
    this.#publish();
  }

  /** The trajectory at rest at `anglesRad` (checked against the joint limits). */
  #restAt(anglesRad: ArrayLike<number>, what: string): void {
    if (anglesRad.length !== N) throw new RangeError(`${what} needs ${N} values, got ${anglesRad.length}`);
    for (let i = 0; i < N; i++) {
      const a = anglesRad[i]!;
      if (!Number.isFinite(a) || a < P7_MIN_RAD[i]! || a > P7_MAX_RAD[i]!) throw new RangeError(`${what}[${i}] = ${a} is outside the joint limits`);
      this.#q[i] = a;
      this.#target[i] = a;
      this.#v[i] = 0;
      this.#acc[i] = 0;
      this.#vProfile[i] = P7_MAX_SPEED_RAD_S[i]!;
      this.#aProfile[i] = P7_MAX_ACCEL_RAD_S2[i]!;
    }
    this.#stopping.fill(0);
    this.#braking.fill(0);
  }
  /** False while the link is dropped (`dropLink`). */
  get linkUp(): boolean {
    return this.#linkUp;
  }

  /**
   * Let `dtS` seconds of simulated time pass: runs one 4 ms step per whole period accumulated
   * (the remainder carries over), at most `P7_SIM_MAX_CATCHUP_STEPS` per call. Returns the number
   * of steps run.
   */
  advance(dtS: number): number {
    if (!(dtS > 0)) return 0;
    this.#pendingS += dtS;
    let n = Math.floor((this.#pendingS + 1e-9) / DT_S);
    this.#pendingS -= n * DT_S;
    if (this.#pendingS < 0) this.#pendingS = 0;
    if (n > P7_SIM_MAX_CATCHUP_STEPS) n = P7_SIM_MAX_CATCHUP_STEPS; // fell far behind: drop time, don't burst
    for (let i = 0; i < n; i++) this.step();
    return n;
  }

  /** One 4 ms step of the dynamics, then publish. */
  step(): void {
    const q = this.#q,
      v = this.#v;
    for (let i = 0; i < N; i++) {
      const vOld = v[i]!;
      // NOTE: initialised as a number (not left undefined) so optimised code keeps it unboxed.
      let vNew = 0;
      if (this.#braking[i] === 1 || this.#errorIds[i] !== 0 || this.#stopping[i] === 1) {
        // Stop at the stop rate (braking: BRAKE_FACTOR times it), then hold where it stopped.
        const dv = (this.#braking[i] === 1 ? BRAKE_FACTOR : 1) * P7_STOP_DECEL_RAD_S2[i]! * DT_S;
        vNew = Math.abs(vOld) <= dv ? 0 : vOld - Math.sign(vOld) * dv;
        q[i] = q[i]! + vNew * DT_S;
        this.#target[i] = q[i]!;
        if (vNew === 0) {
          this.#stopping[i] = 0;
          this.#braking[i] = 0;
        }
      } else {
        const e = this.#target[i]! - q[i]!;
        const ae = Math.abs(e);
        const aFull = P7_MAX_ACCEL_RAD_S2[i]!;
        if (ae <= SNAP_RAD && Math.abs(vOld) <= aFull * DT_S) {
          q[i] = this.#target[i]!;
          vNew = 0;
        } else {
          const aProf = this.#aProfile[i]!;
          // Fastest speed v for this step that can still stop at the target decelerating at the
          // profile's rate in whole steps: after moving v·dt, braking from v covers
          // v²/(2a) − v·dt/2, so v²/(2a) + v·dt/2 ≤ e. (The continuous √(2ae) lags by one step and
          // overshoots.) Also capped by the profile speed and by not stepping past the target.
          const brakeCap = aProf * (Math.sqrt((DT_S * DT_S) / 4 + (2 * ae) / aProf) - DT_S / 2);
          const cap = Math.min(this.#vProfile[i]!, brakeCap, ae / DT_S);
          const vDes = e > 0 ? cap : -cap;
          const dvWanted = vDes - vOld;
          // Speed up at the profile's rate; slow down (or reverse) at the full rate.
          const aUse = vOld * dvWanted < 0 ? Math.max(aProf, aFull) : aProf;
          const dvMax = aUse * DT_S;
          vNew = vOld + Math.min(dvMax, Math.max(-dvMax, dvWanted));
          q[i] = q[i]! + vNew * DT_S;
        }
      }
      // Mechanical end stops: the command limits widened by the raw margin.
      const lo = P7_MIN_RAD[i]! - P7_RAW_LIMIT_MARGIN_RAD,
        hi = P7_MAX_RAD[i]! + P7_RAW_LIMIT_MARGIN_RAD;
      if (q[i]! < lo || q[i]! > hi) {
        q[i] = q[i]! < lo ? lo : hi;
        vNew = 0;
      }
      v[i] = vNew;
      this.#acc[i] = (vNew - vOld) / DT_S;
    }
    this.model.step(q, v, this.#acc);
    this.#updateThermal();
    this.#seq++;
    this.#publish();
  }

  /** The latest published frame, or null while the link is dropped. Views: copy what you keep. */
  read(): P7SimFrame | null {
    return this.#linkUp ? this.#frame : null;
  }

  /**
   * Point-to-point move: every joint without an error goes to its target, at most at
   * `speedRadS[i]` and the joint's acceleration limit, scaled so all arrive together (exactly so
   * when starting from rest). Joints with an error id keep holding. Returns the estimated
   * duration from rest, s. Targets are clamped to the command limits (the runtime refuses them before).
   */
  moveTo(targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>): number {
    const etaS = p7MoveScales(this.#q, targetsRad, speedRadS, this.#errorIds, this.#scales);
    const sv = this.#scales[0]!,
      sa = this.#scales[1]!;
    for (let i = 0; i < N; i++) {
      if (this.#errorIds[i] !== 0) continue;
      const t = this.#clampTarget(i, targetsRad[i]!);
      const ad = Math.abs(t - this.#q[i]!);
      this.#target[i] = t;
      this.#stopping[i] = 0;
      this.#braking[i] = 0;
      const vLim = Math.min(Math.max(0, speedRadS[i]!), P7_MAX_SPEED_RAD_S[i]!);
      this.#vProfile[i] = ad > SNAP_RAD && Number.isFinite(sv) ? Math.min(vLim, ad * sv) : vLim;
      this.#aProfile[i] = ad > SNAP_RAD && Number.isFinite(sa) ? Math.min(P7_MAX_ACCEL_RAD_S2[i]!, ad * sa) : P7_MAX_ACCEL_RAD_S2[i]!;
    }
    return etaS;
  }

  /**
   * Servo targets: each joint without an error tracks its new target independently at its maximum
   * speed and acceleration (stream targets close together; the limits are the safety cap).
   */
  servo(targetsRad: ArrayLike<number>): void {
    for (let i = 0; i < N; i++) {
      if (this.#errorIds[i] !== 0) continue;
      this.#target[i] = this.#clampTarget(i, targetsRad[i]!);
      this.#stopping[i] = 0;
      this.#braking[i] = 0;
      this.#vProfile[i] = P7_MAX_SPEED_RAD_S[i]!;
      this.#aProfile[i] = P7_MAX_ACCEL_RAD_S2[i]!;
    }
  }

  /** Stop one joint at its stop rate and hold where it comes to rest. */
  stopJoint(joint: number): void {
    checkJoint(joint);
    this.#stopping[joint] = 1;
  }

  /** Stop every joint at its stop rate and hold (emergency stop, lease lost, link lost). */
  stopAll(): void {
    this.#stopping.fill(1);
  }

  /**
   * Category-0 stop: every joint halts where it is now (a real arm's brakes), without the stop
   * rate's ramp. The kinematic arm stops at once. The physics arm cannot (mass, torque limits): its
   * set-point jumps onto the arm as it moves and brakes at BRAKE_FACTOR × the stop rate, then holds.
   */
  halt(): void {
    const physics = this.model.kind === "physics";
    for (let i = 0; i < N; i++) {
      this.#v[i] = physics ? this.model.velocityRadS[i]! : 0;
      this.#q[i] = this.model.positionRad[i]!; // the same place, kinematically
      this.#target[i] = this.#q[i]!;
    }
    this.#stopping.fill(0);
    this.#braking.fill(physics ? 1 : 0);
  }

  /** True when no joint is moving, stopping or braking. */
  get atRest(): boolean {
    for (let i = 0; i < N; i++) if (this.#v[i] !== 0 || this.#stopping[i] === 1 || this.#braking[i] === 1) return false;
    return true;
  }

  /** The current raw error id of `joint`. */
  errorId(joint: number): number {
    checkJoint(joint);
    return this.#errorIds[joint]!;
  }

  /**
   * Fault hook: set `joint`'s raw error id (a non-negative integer; 0 clears). A nonzero id stops
   * that joint until cleared, like a motor fault.
   */
  injectError(joint: number, errorId: number): void {
    checkJoint(joint);
    if (!Number.isSafeInteger(errorId) || errorId < 0) throw new RangeError(`error id must be a non-negative integer, got ${errorId}`);
    this.#errorIds[joint] = errorId;
    if (errorId !== 0) this.#stopping[joint] = 1;
    this.#publishErrors();
  }

  /**
   * Clear the error id of one joint, or of all when `joint` is omitted. The joint then holds the
   * position where it stopped. A condition that persists (a motor still over temperature) sets
   * its bit again on the next step. Returns the joints whose id was nonzero.
   */
  clearError(joint?: number): number[] {
    const cleared: number[] = [];
    for (let i = 0; i < N; i++) {
      if (joint !== undefined && i !== joint) continue;
      if (this.#errorIds[i] !== 0) cleared.push(i);
      this.#errorIds[i] = 0;
      // Hold where it is; if it is still coming to rest, finish the stop first.
      if (this.#v[i] !== 0) this.#stopping[i] = 1;
      else this.#target[i] = this.#q[i]!;
    }
    this.#publishErrors();
    return cleared;
  }

  /** Fault hook: the link drops; `read()` returns null and the arm's own watchdog stops it. */
  dropLink(): void {
    this.#linkUp = false;
    this.stopAll();
  }

  /** Fault hook: the link comes back; the arm keeps holding until it gets a new command. */
  restoreLink(): void {
    this.#linkUp = true;
  }

  /**
   * Fault hook: report arrays of other lengths than the body's (upstream arrays missing or
   * mismatched). `joints` sets angles/velocities/efforts (0..8), `motors` temperatures/errorIds
   * (0..8), `imu` both IMU vectors (0..4); omitted keys go back to the body's lengths.
   */
  setReportedLengths(lengths: { joints?: number; motors?: number; imu?: number }): void {
    const j = lengths.joints ?? N,
      m = lengths.motors ?? N,
      u = lengths.imu ?? 3;
    if (![j, m].every((n) => Number.isInteger(n) && n >= 0 && n <= JOINT_CAPACITY) || !Number.isInteger(u) || u < 0 || u > IMU_CAPACITY) {
      throw new RangeError(`reported lengths out of range: ${JSON.stringify(lengths)}`);
    }
    this.#frame.report({ joints: j, motors: m, imu: u });
  }

  /** Clamp to the command limits; a non-finite target (unreachable through the runtime) holds. */
  #clampTarget(i: number, t: number): number {
    return clampP7Target(i, t, this.#q[i]!);
  }

  #updateThermal(): void {
    const p = this.params;
    for (let i = 0; i < N; i++) {
      const load = this.model.effortNm[i]! / P7_EFFORT_LIMIT_NM[i]!;
      const steadyC = p.ambientC + p.idleRiseC + p.riseAtLimitC * load * load;
      this.#tempC[i] = this.#tempC[i]! + (steadyC - this.#tempC[i]!) * this.#thermalAlpha;
      if (this.#tempC[i]! > p.overTemperatureC && !hasBit(this.#errorIds[i]!, P7_SIM_ERROR.overTemperature)) {
        this.#errorIds[i] = this.#errorIds[i]! + P7_SIM_ERROR.overTemperature;
        this.#stopping[i] = 1;
      }
    }
  }

  #publishErrors(): void {
    this.#frame.full.errorIds.set(this.#errorIds);
  }

  #publish(): void {
    const f = this.#frame.full,
      p = this.params,
      m = this.model;
    // NOTE: one draw of standard normals, scaled here: passing a sigma (a double) to a call V8
    // does not inline boxes it, which allocated 16 bytes per call on every step.
    const z = this.#noise;
    this.#rng.fillGauss(z, N + 6);
    f.angles.set(m.positionRad);
    f.velocities.set(m.velocityRadS);
    for (let i = 0; i < N; i++) f.efforts[i] = m.effortNm[i]! + p.effortNoiseNm * z[i]!;
    f.temperatures.set(this.#tempC);
    f.errorIds.set(this.#errorIds);
    for (let k = 0; k < 3; k++) {
      f.angularVelocity[k] = m.gyroRadS[k]! + p.gyroNoiseRadS * z[N + k]!;
      f.linearAcceleration[k] = m.accelerometerMps2[k]! + p.accelNoiseMS2 * z[N + 3 + k]!;
    }
    this.#frame.seq = this.#seq;
  }
}

function checkJoint(joint: number): void {
  if (!Number.isInteger(joint) || joint < 0 || joint >= N) throw new RangeError(`joint must be an integer 0..${N - 1}, got ${joint}`);
}
