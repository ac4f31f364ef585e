/**
 * The simulated TNY-360: the firmware's behaviour (tny360.md §6–§10) on a kinematic quadruped.
 * Deterministic: time comes only from the `nowMs` the runtime passes to `cycle()`, noise from a
 * seeded generator, so the same commands on a `SimClock` give the same states.
 *
 * One `cycle(nowMs)` is one tick of the firmware's 200 Hz control loop (perform side, allocation-
 * free): decision tick (30 Hz: API requests → control intent) → control watchdog → smooth
 * enable/disable sequencer → gait planner → leg overrides → body IK → joint overrides → joint
 * models (7 rad/s, scaled) → physics (feet, height, contacts, odometry, IMU, efforts, power) →
 * RPC jobs → publish state.
 *
 * `handle(module, action, args)` answers a decoded request like the firmware's module handlers,
 * with the differences the reference asks for (§12): every request is answered, ids and ranges are
 * checked, refused targets keep the old ones, the IMU's acceleration and angular velocity are
 * served, yaw is reported. Handlers marked `rpc` in the table answer after the next tick, as on
 * the robot, so replies can overtake each other.
 *
 * The physical model (inferred, documented in docs/protocol/tny360.md): ideal servos (the joint
 * is where its velocity-limited model is), the body rests on its lowest foot (or on its belly),
 * planted feet do not slip, so odometry is the motion of the planted feet.
 *
 * NOTE: how the tick stays allocation-free. V8 passes arguments and keeps object fields tagged, so
 * a double handed to a call it does not inline, or kept in a field whose representation went
 * generic, is boxed: a 16-byte heap number each time. So the tick's scalars (time, step, speed
 * scale, battery charge, …) live in one Float64Array (`#f`, slots named below) and its stages take
 * no arguments; the stages are called through one table (`#stages`), a megamorphic call site, so
 * V8 compiles each on its own with its own inlining budget for the kinematics it calls (one large
 * tick overran the budget and boxed their arguments); the gait planner and the leg IK, too large
 * to inline, take their numbers in typed-array slots (`planner.input`, see gait.ts and
 * kinematics.ts).
 */
import { bodyIK, DEFAULT_BODY_HEIGHT_M, eulerXYZ, footInBody, IK_STATUS_NAMES, IkStatus, legFK, rotationXYZ } from "../../bodies/tny360/kinematics.js";
import { CREEP_MIN_DUTY, DUTY_FACTOR, GaitPlanner } from "../../bodies/tny360/gait.js";
import { ADC_CHANNEL_COUNT, JOINTS, LEG_NAMES, LEG_Y_INVERTED, MAX_JOINT_VELOCITY_RAD_S, PAW_ADC_CHANNELS, withinLimits } from "../../bodies/tny360/joints.js";
import {
  EAR_DEFAULT_RAD,
  REST_POSE_RAD,
  SMOOTH_DISABLE_SPEED,
  SMOOTH_ENABLE_REST_SPEED,
  SMOOTH_ENABLE_STAND_SPEED,
  STAND_POSE_RAD,
  smoothDisableEstimateS,
  smoothEnableEstimateS,
} from "../../bodies/tny360/poses.js";
import { NO_VALUES, type SmoothPhase, Tny360State, type TnyReply } from "../../bodies/tny360/state.js";
import { angleToDutyMs, angleToFeedbackV, defaultCalibration, PAW_PRESSED_V, PAW_RELEASED_V } from "../../bodies/tny360/units.js";
import { VelocityKeepAlive } from "../../bodies/tny360/velocity.js";
import {
  type ActionSpec,
  AutoLifeLevel,
  ErrorModuleId,
  ErrorSeverity,
  GaitType,
  JOINT_COUNT,
  LEG_COUNT,
  LogLevel,
  type LogLevelCode,
  MotorCalibrationState,
  MODULES,
  type ModuleSpec,
  Status,
  type StatusCode,
} from "../../wire/tny/constants.js";
import type { ActionKey, KeyDecodedArgs, KeyReturnTuple } from "../../wire/tny/types.js";
import { Rng } from "../random.js";
import { ErrorRing, LogRing } from "./rings.js";

export interface SimTny360Options {
  /** Seed of the sensor-noise generator. Defaults to 1. */
  seed?: number;
  /** Velocity keep-alive: not renewed for this long → decay. Defaults to 500 ms. */
  velocityTimeoutMs?: number;
  /** Velocity decay duration. Defaults to 250 ms. */
  velocityDecayMs?: number;
  /**
   * Current time for stamping commands between ticks (the runtime passes its clock). Defaults to
   * the time of the last tick.
   */
  nowMs?: () => number;
}

/** Control-loop tick (`CONTROL_LOOP_FREQ_HZ` = 200). */
export const SIM_PERIOD_MS = 5;
const DECISION_PERIOD_MS = 1000 / 30;
/** `CONTROL_INTENT_WATCHDOG_MS`. */
const CONTROL_WATCHDOG_MS = 500;
/** `RPC_QUEUE_SIZE`. */
const RPC_QUEUE_SIZE = 32;

// Physical model (inferred values; see the header).
const G = 9.81;
const BODY_MASS_KG = 1.8;
const BELLY_CLEARANCE_M = 0.035;
const CONTACT_M = 0.002;
const FEEDBACK_NOISE_RAD = 0.002;
const ACCEL_NOISE_MS2 = 0.02;
const POSTURE_SHIFT_RATE_MS = 0.5;
const POSTURE_ROTATION_RATE_RADS = 2.0;
const BATTERY_CAPACITY_AH = 2.2;
const BATTERY_R_OHM = 0.1;
const ELECTRONICS_A = 0.45;

/** Command limits (inferred from the web portal's sliders, tny360.md §3.3); beyond → InvalidParameters. */
export const SIM_LIMITS = {
  linearMS: 1.0,
  yawRadS: 4.0,
  postureShiftM: 0.1,
  postureMinZM: 0.05,
  postureMaxZM: 0.2,
  postureRotationRad: Math.PI / 4,
} as const;

/** Error ids this simulator records (0xMMSSCCVV, inferred codes; the firmware's list is not in the reference). */
export const SIM_ERROR_IDS = {
  /** Leg / kinematics / out of bounds / warning; payload [legId, IkStatus]. */
  legIkRefused: (ErrorModuleId.Leg << 24) | (0x01 << 16) | (0x01 << 8) | ErrorSeverity.Warning,
  /** Body / control / intent watchdog / warning. */
  intentWatchdog: (ErrorModuleId.Body << 24) | (0x02 << 16) | (0x01 << 8) | ErrorSeverity.Warning,
  /** System / RPC / queue full / error. */
  rpcQueueFull: (ErrorModuleId.System << 24) | (0x01 << 16) | (0x01 << 8) | ErrorSeverity.Error,
} as const;

type Handler<K extends ActionKey> = (args: KeyDecodedArgs<K>) => KeyReturnTuple<K> | StatusCode;
type Handlers = { [K in ActionKey]?: Handler<K> };
type UntypedHandler = (args: readonly unknown[]) => readonly unknown[] | StatusCode;

const Smooth = { Idle: 0, EnableRest: 1, EnableStand: 2, DisableRest: 3 } as const;
type SmoothStep = (typeof Smooth)[keyof typeof Smooth];

// Slots of `#f`, the tick's scalars (see the header).
/** This tick's time, ms. */
const NOW_MS = 0;
/** This tick's step, s. */
const DT_S = 1;
/** The previous tick's time, ms; NaN before the first tick after boot. */
const LAST_NOW_MS = 2;
const BOOT_MS = 3;
const NEXT_DECISION_MS = 4;
/** When the decision loop last refreshed the control intent, ms. */
const INTENT_STAMP_MS = 5;
/** Joint speed scale (1, or a smooth sequence's 5 % / 10 %). */
const SPEED_SCALE = 6;
/** Battery state of charge 0..1. */
const SOC = 7;
/** Body height at the previous physics step, m (NaN after boot). */
const HEIGHT_PREV_M = 8;
const SLOT_COUNT = 9;

interface RpcJob {
  run: () => TnyReply;
  resolve: (r: TnyReply) => void;
}

export class SimTny360 {
  readonly state = new Tny360State("sim");
  readonly periodMs = SIM_PERIOD_MS;
  readonly log = new LogRing();
  readonly errors = new ErrorRing();
  readonly planner = new GaitPlanner();

  readonly #keeper: VelocityKeepAlive;
  readonly #seed: number;
  readonly #nowMs: (() => number) | null;
  #rand = new Rng(1);
  /** Standard normals drawn once per physics step: 3 accelerometer axes, then one per joint. */
  readonly #z = new Float64Array(3 + JOINT_COUNT);

  // firmware state
  readonly #enabled = new Uint8Array(JOINT_COUNT);
  readonly #target = new Float64Array(JOINT_COUNT);
  readonly #model = new Float64Array(JOINT_COUNT);
  readonly #prevModel = new Float64Array(JOINT_COUNT);
  readonly #feedback = new Float64Array(JOINT_COUNT);
  readonly #estimated = new Float64Array(JOINT_COUNT);
  readonly #override = new Float64Array(JOINT_COUNT).fill(Number.NaN);
  readonly #legOverride = new Float64Array(LEG_COUNT * 3);
  readonly #legOverrideOn = new Uint8Array(LEG_COUNT);
  readonly #posture = new Float64Array(6);
  readonly #intentV = new Float64Array(3);
  #intentGait: number = GaitType.Walk;
  #gait: number = GaitType.Walk;
  #watchdogTripped = false;
  #smooth: SmoothStep = Smooth.Idle;
  #controlLoop = true;
  #decisionLoop = true;
  #autolife: number = AutoLifeLevel.Full;
  #rebootPending = false;
  /** The tick's scalars, by the slot constants above (typed: never boxed). */
  readonly #f = new Float64Array(SLOT_COUNT);
  readonly #rpc: RpcJob[] = [];

  // scratch and physical state
  readonly #feet = new Float64Array(LEG_COUNT * 3);
  readonly #ik = new Float64Array(LEG_COUNT * 3);
  readonly #ikStatus = new Uint8Array(LEG_COUNT);
  readonly #ikLogged = new Uint8Array(LEG_COUNT);
  readonly #realized = new Float64Array(6);
  readonly #rot = new Float64Array(9);
  readonly #rotW = new Float64Array(9);
  readonly #rotWPrev = new Float64Array(9);
  readonly #footBody = new Float64Array(LEG_COUNT * 3);
  readonly #footPlan = new Float64Array(LEG_COUNT * 3);
  readonly #footPlanPrev = new Float64Array(LEG_COUNT * 3);
  readonly #grounded = new Uint8Array(LEG_COUNT);
  readonly #groundedPrev = new Uint8Array(LEG_COUNT);
  readonly #velW = new Float64Array(3);
  readonly #velWPrev = new Float64Array(3);
  readonly #accW = new Float64Array(3);
  readonly #euler = new Float64Array(3);
  readonly #fk = new Float64Array(3);
  readonly #fkd = new Float64Array(3);
  readonly #adc = new Float32Array(ADC_CHANNEL_COUNT);
  /** Feet on the ground at this physics step. */
  #nGround = 0;
  #firstPhysics = true;

  /**
   * The tick, stage by stage (see the header): one call site for all of them, so none is inlined
   * into another.
   */
  readonly #stages: ReadonlyArray<() => void> = [
    () => this.#decide(),
    () => this.#controlIntent(),
    () => this.#controlJoints(),
    () => this.#bodyPose(),
    () => this.#odometryImu(),
    () => this.#jointSensors(),
    () => this.#powerAdc(),
    () => this.#publish(),
    () => this.#runRpc(),
  ];

  readonly #handlers: Handlers;
  /** The same handlers keyed by the table's action objects (no string keys per request). */
  readonly #byAction = new Map<ActionSpec, UntypedHandler>();

  constructor(opts: SimTny360Options = {}) {
    this.#keeper = new VelocityKeepAlive({ timeoutMs: opts.velocityTimeoutMs, decayMs: opts.velocityDecayMs });
    this.#seed = (opts.seed ?? 1) >>> 0;
    this.#nowMs = opts.nowMs ?? null;
    this.#handlers = this.#buildHandlers();
    for (const mod of MODULES as readonly ModuleSpec[]) {
      for (const act of mod.actions) {
        const h = this.#handlers[`${mod.name}.${act.name}` as ActionKey] as UntypedHandler | undefined;
        if (h) this.#byAction.set(act, h);
      }
    }
    this.#f[SOC] = 0.9;
    this.#f[NOW_MS] = 0;
    this.#boot();
  }

  /** The velocity keep-alive's timeout (ms). */
  get velocityTimeoutMs(): number {
    return this.#keeper.timeoutMs;
  }

  // -------------------------------------------------------------------------------------------
  // Requests

  /**
   * Answer one decoded request (arguments already checked against the table). Actions the
   * simulator does not serve answer their table status; `rpc` actions answer after the next tick.
   */
  handle(_module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | Promise<TnyReply> {
    if (!action.sim.served) return { status: action.sim.status, values: NO_VALUES };
    const h = this.#byAction.get(action);
    if (!h) return { status: Status.UnknownError, values: NO_VALUES }; // a served action without a handler: a bug, answered anyway
    if (!action.rpc) return toReply(h(args));
    if (this.#rpc.length >= RPC_QUEUE_SIZE) {
      // the firmware drops the job and never answers (§12 #13); bodylink answers
      this.#error(SIM_ERROR_IDS.rpcQueueFull, [this.#rpc.length]);
      return { status: Status.UnknownError, values: NO_VALUES };
    }
    return new Promise((resolve) => this.#rpc.push({ run: () => toReply(h(args)), resolve }));
  }

  /** Whether this simulator serves an action (else it answers the table's status). */
  serves(action: ActionSpec): boolean {
    return action.sim.served;
  }

  /**
   * Run a served action's handler now, without the RPC deferral (for the runtime's typed
   * commands, which answer synchronously). Not-served actions answer their table status.
   */
  handleNow(_module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply {
    if (!action.sim.served) return { status: action.sim.status, values: NO_VALUES };
    const h = this.#byAction.get(action);
    return h ? toReply(h(args)) : { status: Status.UnknownError, values: NO_VALUES };
  }

  /** Jobs waiting for the next tick. */
  get pendingRpc(): number {
    return this.#rpc.length;
  }

  /** Answer every waiting job with `status` (the loop is stopping). */
  failPending(status: StatusCode = Status.UnknownError): void {
    for (const job of this.#rpc.splice(0)) job.resolve({ status, values: NO_VALUES });
  }

  /** Zero the velocity at once (the commanding connection closed or lost control). */
  clearVelocity(): void {
    this.#keeper.clear();
  }

  /** Emergency stop: velocity zero now, smooth sequence and joint overrides cleared; joints keep holding. */
  emergencyStop(reason: string): void {
    this.#keeper.clear();
    this.#intentV.fill(0);
    this.#cancelSmooth("emergency stop");
    this.#override.fill(Number.NaN);
    this.#log(LogLevel.Error, "safety", `emergency stop: ${reason}`);
  }

  // -------------------------------------------------------------------------------------------
  // The control tick

  /**
   * One 5 ms firmware tick at `nowMs` (perform side, allocation-free except log/error entries and
   * RPC replies). Small, so callers inline it and `nowMs` goes straight into its slot.
   */
  cycle(nowMs: number): void {
    this.#f[NOW_MS] = nowMs;
    const stages = this.#stages;
    for (let i = 0; i < stages.length; i++) stages[i]!();
  }

  /** Reboot if asked, the step, the velocity keep-alive and the 30 Hz decision loop. */
  #decide(): void {
    const f = this.#f;
    if (this.#rebootPending) {
      this.#rebootPending = false;
      this.#boot();
    }
    const nowMs = f[NOW_MS]!;
    const last = f[LAST_NOW_MS]!;
    f[DT_S] = Number.isNaN(last) ? this.periodMs / 1000 : Math.min(0.05, Math.max(0, (nowMs - last) / 1000));
    f[LAST_NOW_MS] = nowMs;

    // bodylink's velocity keep-alive (the firmware has none): not renewed → decay to zero
    const wasDecaying = this.#keeper.decaying;
    this.#keeper.update(nowMs);
    if (this.#keeper.decaying && !wasDecaying) this.#log(LogLevel.Warning, "body", `velocity not renewed within ${this.#keeper.timeoutMs} ms: decaying to zero`);

    // decision loop, 30 Hz: merge requests into the control intent
    if (this.#decisionLoop && nowMs >= f[NEXT_DECISION_MS]!) {
      this.#intentV.set(this.#keeper.current);
      this.#intentGait = this.#gait;
      f[INTENT_STAMP_MS] = nowMs;
      f[NEXT_DECISION_MS] = Math.max(f[NEXT_DECISION_MS]! + DECISION_PERIOD_MS, nowMs);
    }
  }

  /** Control loop, first half: intent watchdog, smooth sequencer, gait planner. */
  #controlIntent(): void {
    if (!this.#controlLoop) return;
    const f = this.#f;
    const input = this.planner.input; // [dtS, vx, vy, wz]
    input[0] = f[DT_S]!;
    input[1] = this.#intentV[0]!;
    input[2] = this.#intentV[1]!;
    input[3] = this.#intentV[2]!;
    let gait = this.#intentGait;
    if (f[NOW_MS]! - f[INTENT_STAMP_MS]! > CONTROL_WATCHDOG_MS) {
      // a stalled decision loop: the firmware forces velocity 0 and the Walk gait
      input[1] = 0;
      input[2] = 0;
      input[3] = 0;
      gait = GaitType.Walk;
      if (!this.#watchdogTripped) {
        this.#watchdogTripped = true;
        this.#error(SIM_ERROR_IDS.intentWatchdog, []);
        this.#log(LogLevel.Warning, "control", "control intent older than 500 ms: velocity forced to 0");
      }
    } else this.#watchdogTripped = false;

    this.#smoothStep();

    this.planner.gait = gait;
    this.planner.advance();
  }

  /** Control loop, second half: leg overrides, body IK, joint overrides, joint models. */
  #controlJoints(): void {
    if (!this.#controlLoop) return;
    const feet = this.#feet;
    feet.set(this.planner.feet);
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      if (this.#legOverrideOn[leg]) for (let k = 0; k < 3; k++) feet[leg * 3 + k] = this.#legOverride[leg * 3 + k]!;
    }
    bodyIK(this.#posture, feet, this.#ik, this.#ikStatus);
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const st = this.#ikStatus[leg]!;
      if (st === IkStatus.Ok) {
        for (let k = 0; k < 3; k++) this.#target[leg * 3 + k] = this.#ik[leg * 3 + k]!;
        this.#ikLogged[leg] = 0;
      } else if (!this.#ikLogged[leg]) {
        // refused: the joints keep their old targets (firmware); recorded once per episode
        this.#ikLogged[leg] = 1;
        this.#error(SIM_ERROR_IDS.legIkRefused, [leg, st]);
        this.#log(LogLevel.Warning, "kinematics", `${LEG_NAMES[leg]} foot target refused: ${IK_STATUS_NAMES[st]}`);
      }
    }
    for (let j = 0; j < JOINT_COUNT; j++) {
      const o = this.#override[j]!;
      if (!Number.isNaN(o)) this.#target[j] = o;
    }
    const maxStep = MAX_JOINT_VELOCITY_RAD_S * this.#f[SPEED_SCALE]! * this.#f[DT_S]!;
    for (let j = 0; j < JOINT_COUNT; j++) {
      if (!this.#enabled[j]) continue;
      const d = this.#target[j]! - this.#model[j]!;
      this.#model[j] = Math.abs(d) <= maxStep ? this.#target[j]! : this.#model[j]! + Math.sign(d) * maxStep;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Smooth enable / disable (Body.cpp task, §6 body 0x06/0x07)

  #smoothStep(): void {
    switch (this.#smooth) {
      case Smooth.EnableRest:
        if (this.#legsAt(REST_POSE_RAD)) {
          this.#f[SPEED_SCALE] = SMOOTH_ENABLE_STAND_SPEED;
          this.#setLegOverrides(STAND_POSE_RAD);
          this.#smooth = Smooth.EnableStand;
        }
        return;
      case Smooth.EnableStand:
        if (this.#legsAt(STAND_POSE_RAD)) {
          this.#f[SPEED_SCALE] = 1;
          this.#override.fill(Number.NaN); // enableSmooth clears the joint overrides when it finishes
          this.#smooth = Smooth.Idle;
          this.#log(LogLevel.Success, "body", `smooth enable done at ${((this.#f[NOW_MS]! - this.#f[BOOT_MS]!) / 1000).toFixed(3)} s`);
        }
        return;
      case Smooth.DisableRest:
        if (this.#legsAt(REST_POSE_RAD)) {
          for (let j = 0; j < 12; j++) {
            this.#enabled[j] = 0;
            this.#override[j] = Number.NaN;
          }
          this.#f[SPEED_SCALE] = 1;
          this.#smooth = Smooth.Idle;
          this.#log(LogLevel.Success, "body", "smooth disable done: leg joints off");
        }
        return;
      default:
        return;
    }
  }

  /** Every enabled leg joint has reached its pose value (disabled joints cannot move: ignored). */
  #legsAt(pose: Float64Array): boolean {
    for (let j = 0; j < 12; j++) if (this.#enabled[j] && this.#model[j] !== pose[j]) return false;
    return true;
  }

  #setLegOverrides(pose: Float64Array): void {
    for (let j = 0; j < 12; j++) this.#override[j] = pose[j]!;
  }

  #cancelSmooth(why: string): void {
    if (this.#smooth === Smooth.Idle) return;
    this.#smooth = Smooth.Idle;
    this.#f[SPEED_SCALE] = 1;
    this.#log(LogLevel.Warning, "body", `smooth sequence cancelled: ${why}`);
  }

  enableSmooth(): number {
    if (!this.#controlLoop) return -1; // nothing moves with the control loop stopped
    for (let j = 0; j < JOINT_COUNT; j++) this.#enable(j, true);
    const estimate = smoothEnableEstimateS(this.#model);
    this.#f[SPEED_SCALE] = SMOOTH_ENABLE_REST_SPEED;
    this.#setLegOverrides(REST_POSE_RAD);
    this.#smooth = Smooth.EnableRest;
    this.#log(LogLevel.Info, "body", `smooth enable: REST at 5 %, then STAND at 10 %, about ${estimate.toFixed(2)} s`);
    return estimate;
  }

  disableSmooth(): number {
    if (!this.#controlLoop) return -1;
    const estimate = smoothDisableEstimateS(this.#model, this.#enabled);
    this.#f[SPEED_SCALE] = SMOOTH_DISABLE_SPEED;
    this.#setLegOverrides(REST_POSE_RAD);
    this.#smooth = Smooth.DisableRest;
    this.#log(LogLevel.Info, "body", `smooth disable: REST at 10 %, then leg joints off, about ${estimate.toFixed(2)} s`);
    return estimate;
  }

  /** Power a joint on or off. The model already sits where the joint is (ideal servo), so enabling never jumps. */
  #enable(j: number, on: boolean): void {
    this.#enabled[j] = on ? 1 : 0;
  }

  // -------------------------------------------------------------------------------------------
  // Physics and sensors

  /** Physics, first part: the realized posture, the feet under it, body height and paw contacts. */
  #bodyPose(): void {
    const dtS = this.#f[DT_S]!;
    const m = this.#model;
    const legsOn = (this.#enabledMask() & 0x0fff) === 0x0fff && this.#controlLoop;
    // the body follows the requested shift and rotation only while all 12 leg joints hold it
    for (let n = 0; n < POSTURE_FOLLOW.length; n++) {
      const k = POSTURE_FOLLOW[n]!;
      const goal = legsOn ? this.#posture[k]! : 0;
      const rate = k < 2 ? POSTURE_SHIFT_RATE_MS : POSTURE_ROTATION_RATE_RADS;
      const d = goal - this.#realized[k]!;
      const stepMax = rate * dtS;
      this.#realized[k] = Math.abs(d) <= stepMax ? goal : this.#realized[k]! + Math.sign(d) * stepMax;
    }
    rotationXYZ(this.#realized[3]!, this.#realized[4]!, this.#realized[5]!, this.#rot);
    const r = this.#rot;
    let minZ = Number.POSITIVE_INFINITY;
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const i = leg * 3;
      footInBody(leg, m[i]!, m[i + 1]!, m[i + 2]!, this.#footBody, i);
      const z = r[6]! * this.#footBody[i]! + r[7]! * this.#footBody[i + 1]! + r[8]! * this.#footBody[i + 2]!;
      if (z < minZ) minZ = z;
    }
    const height = Math.max(BELLY_CLEARANCE_M, -minZ); // resting on the lowest foot, or on the belly
    this.#realized[2] = height;
    this.#footPlanPrev.set(this.#footPlan);
    this.#groundedPrev.set(this.#grounded);
    let nGround = 0;
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const i = leg * 3;
      const bx = this.#footBody[i]!, by = this.#footBody[i + 1]!, bz = this.#footBody[i + 2]!;
      this.#footPlan[i] = r[0]! * bx + r[1]! * by + r[2]! * bz + this.#realized[0]!;
      this.#footPlan[i + 1] = r[3]! * bx + r[4]! * by + r[5]! * bz + this.#realized[1]!;
      this.#footPlan[i + 2] = r[6]! * bx + r[7]! * by + r[8]! * bz + height;
      this.#grounded[leg] = this.#footPlan[i + 2]! <= CONTACT_M ? 1 : 0;
      nGround += this.#grounded[leg]!;
    }
    this.#nGround = nGround;
    if (this.#firstPhysics) {
      this.#footPlanPrev.set(this.#footPlan);
      this.#groundedPrev.set(this.#grounded);
    }
  }

  /** Physics, second part: odometry from the planted feet, the IMU, this step's noise. */
  #odometryImu(): void {
    const f = this.#f;
    const dtS = f[DT_S]!;
    const r = this.#rot;
    const height = this.#realized[2]!;
    // odometry: the body moves opposite to its planted feet (no slip)
    const od = this.state.odometry;
    let dx = 0, dy = 0, dth = 0;
    if (this.planner.active && dtS > 0) {
      let n = 0, mx = 0, my = 0, px = 0, py = 0;
      for (let leg = 0; leg < LEG_COUNT; leg++) {
        if (!this.#grounded[leg] || !this.#groundedPrev[leg]) continue;
        const i = leg * 3;
        mx += this.#footPlan[i]! - this.#footPlanPrev[i]!;
        my += this.#footPlan[i + 1]! - this.#footPlanPrev[i + 1]!;
        px += this.#footPlan[i]!;
        py += this.#footPlan[i + 1]!;
        n++;
      }
      if (n > 0) {
        mx /= n; my /= n; px /= n; py /= n;
        dx = -mx;
        dy = -my;
        if (n >= 2) {
          let num = 0, den = 0;
          for (let leg = 0; leg < LEG_COUNT; leg++) {
            if (!this.#grounded[leg] || !this.#groundedPrev[leg]) continue;
            const i = leg * 3;
            const rx = this.#footPlan[i]! - px, ry = this.#footPlan[i + 1]! - py;
            const ddx = this.#footPlan[i]! - this.#footPlanPrev[i]! - mx, ddy = this.#footPlan[i + 1]! - this.#footPlanPrev[i + 1]! - my;
            num += rx * ddy - ry * ddx;
            den += rx * rx + ry * ry;
          }
          if (den > 1e-9) dth = -num / den;
        }
      }
    }
    const yawMid = od.yawRad + dth / 2;
    const c = Math.cos(yawMid), s = Math.sin(yawMid);
    od.xM += c * dx - s * dy;
    od.yM += s * dx + c * dy;
    od.yawRad = wrapPi(od.yawRad + dth);
    const alpha = 0.1; // reported velocities are smoothed; the integration above is not
    if (dtS > 0) {
      od.vxMS += alpha * (dx / dtS - od.vxMS);
      od.vyMS += alpha * (dy / dtS - od.vyMS);
      od.yawRateRadS += alpha * (dth / dtS - od.yawRateRadS);
    }

    // IMU: world rotation = yaw of the odometry frame × the body's realized rotation
    const cy = Math.cos(od.yawRad), sy = Math.sin(od.yawRad);
    const w = this.#rotW;
    this.#rotWPrev.set(w);
    for (let col = 0; col < 3; col++) {
      w[col] = cy * r[col]! - sy * r[3 + col]!;
      w[3 + col] = sy * r[col]! + cy * r[3 + col]!;
      w[6 + col] = r[6 + col]!;
    }
    if (this.#firstPhysics) this.#rotWPrev.set(w);
    eulerXYZ(w, this.#euler);
    const imu = this.state.imu;
    for (let k = 0; k < 3; k++) imu.orientationRad[k] = this.#euler[k]!;
    const p = this.#rotWPrev;
    if (dtS > 0) {
      // body-frame rates from Rprev^T · R ≈ I + [ω]× dt (skew part)
      const m01 = p[0]! * w[1]! + p[3]! * w[4]! + p[6]! * w[7]!;
      const m10 = p[1]! * w[0]! + p[4]! * w[3]! + p[7]! * w[6]!;
      const m02 = p[0]! * w[2]! + p[3]! * w[5]! + p[6]! * w[8]!;
      const m20 = p[2]! * w[0]! + p[5]! * w[3]! + p[8]! * w[6]!;
      const m12 = p[1]! * w[2]! + p[4]! * w[5]! + p[7]! * w[8]!;
      const m21 = p[2]! * w[1]! + p[5]! * w[4]! + p[8]! * w[7]!;
      imu.angularVelocityRadS[0] = (m21 - m12) / (2 * dtS);
      imu.angularVelocityRadS[1] = (m02 - m20) / (2 * dtS);
      imu.angularVelocityRadS[2] = (m10 - m01) / (2 * dtS);
      // world velocity of the body, then a smoothed acceleration
      this.#velWPrev.set(this.#velW);
      this.#velW[0] = (cy * dx - sy * dy) / dtS;
      this.#velW[1] = (sy * dx + cy * dy) / dtS;
      const heightPrev = f[HEIGHT_PREV_M]!;
      this.#velW[2] = Number.isNaN(heightPrev) ? 0 : (height - heightPrev) / dtS;
      if (this.#firstPhysics) this.#velWPrev.set(this.#velW);
      for (let k = 0; k < 3; k++) this.#accW[k] = this.#accW[k]! + 0.2 * ((this.#velW[k]! - this.#velWPrev[k]!) / dtS - this.#accW[k]!);
    }
    f[HEIGHT_PREV_M] = height;
    const fx = this.#accW[0]!, fy = this.#accW[1]!, fz = this.#accW[2]! + G;
    // all of this step's noise in one call (a double returned from a call is boxed too)
    const z = this.#z;
    this.#rand.fillGauss(z, z.length);
    for (let k = 0; k < 3; k++) {
      // specific force and gravity direction in the body frame: R^T · v
      imu.linearAccelerationMS2[k] = w[k]! * fx + w[3 + k]! * fy + w[6 + k]! * fz + ACCEL_NOISE_MS2 * z[k]!;
      imu.down[k] = 0 - w[6 + k]!; // 0 − x, not −x: no −0 in the readings
    }
  }

  /** Physics, third part: joint feedback, estimates, velocities, and holding torques. */
  #jointSensors(): void {
    const dtS = this.#f[DT_S]!;
    const m = this.#model;
    const z = this.#z;
    const w = this.#rotW;
    // joints: ideal servos; feedback = angle + noise, estimate = model nudged toward feedback
    const j = this.state.joints;
    for (let i = 0; i < JOINT_COUNT; i++) {
      const hasFeedback = JOINTS[i]!.adcChannel !== null;
      this.#feedback[i] = hasFeedback ? m[i]! + FEEDBACK_NOISE_RAD * z[3 + i]! : m[i]!;
      this.#estimated[i] = m[i]! + 0.25 * (this.#feedback[i]! - m[i]!);
      j.velocityRadS[i] = dtS > 0 && !this.#firstPhysics ? (m[i]! - this.#prevModel[i]!) / dtS : 0;
      j.effortNm[i] = 0;
    }
    this.#prevModel.set(m);

    // efforts: the weight shared by the planted feet, through each leg's Jacobian (J^T F)
    const nGround = this.#nGround;
    if (nGround > 0) {
      const f = (BODY_MASS_KG * G) / nGround;
      for (let leg = 0; leg < LEG_COUNT; leg++) {
        if (!this.#grounded[leg]) continue;
        const i = leg * 3;
        // ground reaction in the leg frame: R^T (0, 0, f), y negated for the y-inverted legs
        const fbx = w[6]! * f, fby = (LEG_Y_INVERTED[leg] ? -1 : 1) * w[7]! * f, fbz = w[8]! * f;
        legFK(m[i]!, m[i + 1]!, m[i + 2]!, this.#fk);
        for (let k = 0; k < 3; k++) {
          const eps = 1e-6;
          legFK(m[i]! + (k === 0 ? eps : 0), m[i + 1]! + (k === 1 ? eps : 0), m[i + 2]! + (k === 2 ? eps : 0), this.#fkd);
          const jx = (this.#fkd[0]! - this.#fk[0]!) / eps, jy = (this.#fkd[1]! - this.#fk[1]!) / eps, jz = (this.#fkd[2]! - this.#fk[2]!) / eps;
          // holding torque the servo applies against the ground reaction
          j.effortNm[i + k] = this.#enabled[i + k] ? -(jx * fbx + jy * fby + jz * fbz) : 0;
        }
      }
    }
  }

  /** Physics, last part: power draw and battery, the ADC channels. */
  #powerAdc(): void {
    const f = this.#f;
    const dtS = f[DT_S]!;
    const j = this.state.joints;
    // power: electronics + servos (holding torque and motion), a 2S LiPo with internal resistance
    let amps = ELECTRONICS_A;
    for (let i = 0; i < JOINT_COUNT; i++) {
      if (!this.#enabled[i]) continue;
      amps += i < 12 ? 0.05 + 0.8 * Math.abs(j.effortNm[i]!) + 0.03 * Math.abs(j.velocityRadS[i]!) : 0.02 + 0.01 * Math.abs(j.velocityRadS[i]!);
    }
    f[SOC] = Math.max(0, f[SOC]! - (amps * dtS) / (BATTERY_CAPACITY_AH * 3600));
    const volts = 6.8 + 1.6 * f[SOC]! - BATTERY_R_OHM * amps;
    const pw = this.state.power;
    pw.currentA = amps;
    pw.voltageV = volts;
    pw.powerW = volts * amps;

    // ADC: joint feedback voltages and paw switches (getAllChannels)
    for (let i = 0; i < 12; i++) this.#adc[JOINTS[i]!.adcChannel!] = angleToFeedbackV(i, this.#feedback[i]!, CALIBRATION[i]!);
    for (let leg = 0; leg < LEG_COUNT; leg++) this.#adc[PAW_ADC_CHANNELS[leg]!] = this.#grounded[leg] ? PAW_PRESSED_V : PAW_RELEASED_V;

    this.#firstPhysics = false;
  }

  #publish(): void {
    const s = this.state;
    s.seq++;
    s.timestampMs = this.#f[NOW_MS]!;
    s.valid = true;
    s.link = "ok";
    const j = s.joints;
    for (let i = 0; i < JOINT_COUNT; i++) {
      j.positionRad[i] = this.#feedback[i]!;
      j.targetRad[i] = this.#target[i]!;
      j.enabled[i] = this.#enabled[i]!;
    }
    s.paws.grounded.set(this.#grounded);
    s.body.targetVelocity.set(this.#controlLoop && !this.#watchdogTripped ? this.#intentV : ZERO3);
    for (let k = 0; k < 3; k++) {
      s.body.posturePositionM[k] = this.#posture[k]!;
      s.body.postureRotationRad[k] = this.#posture[3 + k]!;
    }
    s.body.heightM = this.#realized[2]!;
    s.body.gait = this.#gait;
    s.body.enabledMask = this.#enabledMask();
    s.body.smooth = SMOOTH_PHASES[this.#smooth]!;
    const last = this.errors.latest();
    s.errors.count = this.errors.count;
    s.errors.lastEventId = last ? last.eventId : -1;
    s.errors.lastErrorId = last ? ((last.module << 24) | (last.subsystem << 16) | (last.code << 8) | last.severity) >>> 0 : 0;
    s.system.controlLoopEnabled = this.#controlLoop;
    s.system.decisionLoopEnabled = this.#decisionLoop;
    s.system.chipTemperatureC = this.#chipTemperatureC();
  }

  /** Set the epoch time shown in the state (the runtime calls this with its clock's epoch). */
  stampEpoch(epochMs: number): void {
    this.state.epochMs = epochMs;
  }

  // -------------------------------------------------------------------------------------------
  // Boot / reset

  #runRpc(): void {
    // RPC jobs run at the end of the tick, on the control core (RPC::Process_Core1)
    if (this.#rpc.length > 0) for (const job of this.#rpc.splice(0)) job.resolve(job.run());
  }

  /** Restart at the time in the NOW_MS slot. */
  #boot(): void {
    const f = this.#f;
    const nowMs = f[NOW_MS]!;
    f[BOOT_MS] = nowMs;
    this.#rand = new Rng(this.#seed || 1);
    this.#enabled.fill(0);
    for (let j = 0; j < 12; j++) this.#model[j] = REST_POSE_RAD[j]!;
    this.#model[12] = EAR_DEFAULT_RAD;
    this.#model[13] = EAR_DEFAULT_RAD;
    this.#target.set(this.#model);
    this.#prevModel.set(this.#model);
    this.#feedback.set(this.#model);
    this.#estimated.set(this.#model);
    this.#override.fill(Number.NaN);
    this.#legOverride.fill(0);
    this.#legOverrideOn.fill(0);
    this.#posture.set([0, 0, DEFAULT_BODY_HEIGHT_M, 0, 0, 0]);
    this.#realized.fill(0);
    this.#keeper.clear();
    this.#intentV.fill(0);
    this.#gait = GaitType.Walk;
    this.#intentGait = GaitType.Walk;
    f[INTENT_STAMP_MS] = nowMs;
    f[NEXT_DECISION_MS] = nowMs;
    this.#watchdogTripped = false;
    f[SPEED_SCALE] = 1;
    this.#smooth = Smooth.Idle;
    this.#controlLoop = true;
    this.#decisionLoop = true;
    this.#autolife = AutoLifeLevel.Full;
    this.#ikLogged.fill(0);
    this.planner.reset();
    const od = this.state.odometry;
    od.xM = od.yM = od.yawRad = od.vxMS = od.vyMS = od.yawRateRadS = 0;
    this.#accW.fill(0);
    this.#velW.fill(0);
    f[HEIGHT_PREV_M] = Number.NaN;
    this.#firstPhysics = true;
    f[LAST_NOW_MS] = Number.NaN;
    this.log.clear();
    this.errors.clear();
    this.#log(LogLevel.Info, "system", "TNY-360 simulator booted (bodylink); joints off, REST pose");
    f[DT_S] = 0;
    this.#bodyPose();
    this.#odometryImu();
    this.#jointSensors();
    this.#powerAdc();
    this.#publish();
  }

  // -------------------------------------------------------------------------------------------
  // Helpers

  #now(): number {
    if (this.#nowMs) return this.#nowMs();
    const last = this.#f[LAST_NOW_MS]!;
    return Number.isNaN(last) ? this.#f[BOOT_MS]! : last;
  }

  #enabledMask(): number {
    let mask = 0;
    for (let j = 0; j < JOINT_COUNT; j++) if (this.#enabled[j]) mask |= 1 << j;
    return mask;
  }

  #log(level: LogLevelCode, tag: string, message: string): void {
    this.log.add(this.#f[LAST_NOW_MS]! - this.#f[BOOT_MS]! || 0, level, tag, message);
  }

  /** Log a line from outside (the TNY server records refused commands here). */
  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.#log(level, tag, message);
  }

  #error(errorId: number, payload: ArrayLike<number>): void {
    this.errors.add(this.#f[LAST_NOW_MS]! - this.#f[BOOT_MS]! || 0, errorId, payload);
  }

  #chipTemperatureC(): number {
    return 42 + 1.5 * this.state.power.currentA;
  }

  #clearJointOverrides(): void {
    this.#override.fill(Number.NaN);
  }

  // -------------------------------------------------------------------------------------------
  // Module handlers (one per served action; the table says which are served)

  #buildHandlers(): Handlers {
    const leg3 = (leg: number, flags: number): void => {
      for (let k = 0; k < 3; k++) this.#enable(leg * 3 + k, (flags & (1 << k)) !== 0);
    };
    const anyOverrideWrite = (why: string): void => this.#cancelSmooth(why);
    const handlers: Handlers = {
      // system
      "system.ping": () => [],
      "system.reboot": () => {
        this.#rebootPending = true; // reply first, then restart (next tick)
        return [];
      },
      "system.setAutolifeLevel": ([level]) => {
        this.#autolife = level;
        return [];
      },
      "system.getAutolifeLevel": () => [this.#autolife],
      "system.getStatistics": () => {
        const core1 = this.#controlLoop ? (this.planner.active ? 38 : 31) : 4;
        return [this.#chipTemperatureC(), 9.5, core1, 327_680, 181_248 + 96 * this.log.count, 8_388_608, 1_310_720];
      },
      "system.getNbLogLines": () => [this.log.count],
      "system.getLogLine": ([index]) => {
        const line = this.log.at(index);
        if (!line) return Status.InvalidParameters;
        return [line.timestampMs, line.level, line.indent, line.tag, line.message];
      },
      "system.setControlLoopEnabled": ([on]) => {
        if (this.#controlLoop !== on) this.#log(LogLevel.Info, "system", `control loop ${on ? "started" : "stopped"}`);
        this.#controlLoop = on;
        if (!on) this.#cancelSmooth("control loop stopped");
        return [];
      },
      "system.getControlLoopEnabled": () => [this.#controlLoop],
      "system.setDecisionLoopEnabled": ([on]) => {
        if (this.#decisionLoop !== on) this.#log(LogLevel.Info, "system", `decision loop ${on ? "started" : "stopped"}`);
        this.#decisionLoop = on;
        return [];
      },
      "system.getDecisionLoopEnabled": () => [this.#decisionLoop],
      // gait
      "gait.setType": ([gait]) => {
        this.#gait = gait;
        if (gait === GaitType.Creep && DUTY_FACTOR < CREEP_MIN_DUTY) this.#log(LogLevel.Warning, "gait", `Creep with duty factor ${DUTY_FACTOR} < ${CREEP_MIN_DUTY}`);
        return [];
      },
      "gait.getType": () => [this.#gait],
      // body
      "body.setEnabled": ([mask]) => {
        anyOverrideWrite("enable bits changed");
        for (let j = 0; j < JOINT_COUNT; j++) this.#enable(j, (mask & (1 << j)) !== 0);
        return [];
      },
      "body.getEnabled": () => [this.#enabledMask()],
      "body.setVelocity": ([x, y, z, clear]) => {
        if (Math.abs(x) > SIM_LIMITS.linearMS || Math.abs(y) > SIM_LIMITS.linearMS || Math.abs(z) > SIM_LIMITS.yawRadS) return Status.InvalidParameters;
        this.#keeper.command(x, y, z, this.#now());
        if (clear) {
          anyOverrideWrite("setVelocity cleared the joint overrides");
          this.#clearJointOverrides();
        }
        return [];
      },
      "body.getTargetVelocity": () => [{ x: this.#keeper.current[0]!, y: this.#keeper.current[1]!, z: this.#keeper.current[2]! }],
      "body.setPosture": ([x, y, z, rx, ry, rz, clear]) => {
        const L = SIM_LIMITS;
        if (Math.abs(x) > L.postureShiftM || Math.abs(y) > L.postureShiftM || z < L.postureMinZM || z > L.postureMaxZM) return Status.InvalidParameters;
        if (Math.abs(rx) > L.postureRotationRad || Math.abs(ry) > L.postureRotationRad || Math.abs(rz) > L.postureRotationRad) return Status.InvalidParameters;
        this.#posture.set([x, y, z, rx, ry, rz]);
        if (clear) {
          anyOverrideWrite("setPosture cleared the joint overrides");
          this.#clearJointOverrides();
        }
        return [];
      },
      "body.getPosture": () => {
        const p = this.#posture;
        return [{ x: p[0]!, y: p[1]!, z: p[2]! }, { x: p[3]!, y: p[4]!, z: p[5]! }];
      },
      "body.enableSmooth": () => [this.enableSmooth()],
      "body.disableSmooth": () => [this.disableSmooth()],
      // leg
      "leg.setEnabled": ([leg, flags]) => {
        anyOverrideWrite("leg enable bits changed");
        leg3(leg, flags);
        return [];
      },
      "leg.getEnabled": ([leg]) => [(this.#enabled[leg * 3]! ? 1 : 0) | (this.#enabled[leg * 3 + 1]! ? 2 : 0) | (this.#enabled[leg * 3 + 2]! ? 4 : 0)],
      "leg.setPosition": ([leg, x, y, z, clear]) => {
        // refuse a foot the leg cannot reach under the current posture (the firmware would log an
        // error every tick and keep the old joint targets)
        const feet = this.#feet;
        feet.set(this.planner.feet);
        feet[leg * 3] = x;
        feet[leg * 3 + 1] = y;
        feet[leg * 3 + 2] = z;
        bodyIK(this.#posture, feet, this.#ik, this.#ikStatus);
        if (this.#ikStatus[leg] !== IkStatus.Ok) return Status.InvalidParameters;
        this.#legOverride[leg * 3] = x;
        this.#legOverride[leg * 3 + 1] = y;
        this.#legOverride[leg * 3 + 2] = z;
        this.#legOverrideOn[leg] = 1;
        if (clear) {
          anyOverrideWrite("leg override set");
          for (let k = 0; k < 3; k++) this.#override[leg * 3 + k] = Number.NaN;
        }
        return [];
      },
      "leg.getTargetPosition": ([leg]) => [{ x: this.#legOverride[leg * 3]!, y: this.#legOverride[leg * 3 + 1]!, z: this.#legOverride[leg * 3 + 2]! }],
      "leg.getGrounded": ([leg]) => [this.#adc[PAW_ADC_CHANNELS[leg]!]! < 2.0],
      // joint
      "joint.setEnabled": ([id, on]) => {
        anyOverrideWrite("joint enable changed");
        this.#enable(id, on);
        return [];
      },
      "joint.getEnabled": ([id]) => [this.#enabled[id] === 1],
      "joint.setAngle": ([id, rad]) => {
        if (!withinLimits(id, rad)) return Status.InvalidParameters; // the old target is kept
        anyOverrideWrite("joint override set");
        this.#override[id] = rad;
        return [];
      },
      "joint.getTargetAngle": ([id]) => [this.#target[id]!],
      "joint.getFeedbackAngle": ([id]) => [this.#feedback[id]!],
      "joint.getModelAngle": ([id]) => [this.#model[id]!],
      "joint.getEstimatedAngle": ([id]) => [this.#estimated[id]!],
      "joint.setJointAngles": ([angles]) => {
        for (let i = 0; i < JOINT_COUNT; i++) if (!withinLimits(i, angles[i]!)) return Status.InvalidParameters; // all or nothing
        anyOverrideWrite("joint overrides set");
        for (let i = 0; i < JOINT_COUNT; i++) this.#override[i] = angles[i]!;
        return [];
      },
      "joint.getJointAngles": () => [Float32Array.from(this.#feedback)],
      // motor (read-only views of the ideal servos)
      "motor.getDutyCycle": ([id]) => [this.#enabled[id] ? angleToDutyMs(id, this.#model[id]!, CALIBRATION[id]!) : 0],
      "motor.getCalibrationState": () => [MotorCalibrationState.Calibrated],
      "motor.getCalibrationData": ([id]) => [CALIBRATION[id]!],
      // imu
      "imu.getAcceleration": () => [vec(this.state.imu.linearAccelerationMS2)],
      "imu.getAngularVelocity": () => [vec(this.state.imu.angularVelocityRadS)],
      "imu.getDownVector": () => [vec(this.state.imu.down)],
      "imu.getOrientation": () => [vec(this.state.imu.orientationRad)],
      // power
      "power.getVoltage": () => [this.state.power.voltageV],
      "power.getCurrent": () => [this.state.power.currentA],
      "power.getPower": () => [this.state.power.powerW],
      // i2c: nothing is attached to the simulated extension bus
      "i2c.pingDevice": () => [false],
      // adc
      "adc.getAllChannels": () => [Float32Array.from(this.#adc)],
      // error
      "error.getErrorCount": () => [this.errors.count],
      "error.getErrorEventByIndex": ([index]) => {
        const ev = this.errors.at(index);
        return ev ? [ev] : Status.InvalidParameters;
      },
      "error.getErrorEventById": ([id]) => {
        const ev = this.errors.byId(id);
        return ev ? [ev] : Status.NotFound;
      },
      "error.clearErrorEvents": () => {
        this.errors.clear();
        return [];
      },
      // diagnostic
      "diagnostic.isEnabled": () => [false],
      "diagnostic.checkIMU": () => [0],
      "diagnostic.checkPower": () => [0],
      "diagnostic.checkMotorDriver": () => [0],
      "diagnostic.checkAnalogReader": () => [0],
      "diagnostic.checkControlLoop": () => [this.#controlLoop ? 0 : 1],
      "diagnostic.checkDecisionLoop": () => [this.#decisionLoop ? 0 : 1],
    };
    return handlers;
  }

  /** Keys of the actions this simulator has a handler for (tests compare them with the table). */
  handlerKeys(): string[] {
    return Object.keys(this.#handlers);
  }
}

const ZERO3 = new Float64Array(3);
/** Posture components the body follows by rate limit (z is the measured height). */
const POSTURE_FOLLOW: readonly number[] = [0, 1, 3, 4, 5];
const SMOOTH_PHASES: readonly SmoothPhase[] = ["idle", "enabling", "enabling", "disabling"];
const CALIBRATION = JOINTS.map((j) => defaultCalibration(j.id));

function toReply(r: readonly unknown[] | StatusCode): TnyReply {
  return typeof r === "number" ? { status: r, values: NO_VALUES } : { status: Status.Ok, values: r };
}

function vec(a: Float32Array): { x: number; y: number; z: number } {
  return { x: a[0]!, y: a[1]!, z: a[2]! };
}

function wrapPi(a: number): number {
  if (a > Math.PI) return a - 2 * Math.PI;
  if (a <= -Math.PI) return a + 2 * Math.PI;
  return a;
}
