/**
 * The simulated TNY-360: the firmware's behaviour (tny360.md §6–§10) on a kinematic quadruped.
 * Deterministic: time comes only from the `nowMs` the runtime passes to `cycle()`, noise from a
 * seeded generator, so the same commands on a `SimClock` give the same states.
 *
 * One `cycle(nowMs)` is one tick of the firmware's 200 Hz control loop (perform side, allocation-
 * free): decision tick (30 Hz: API requests → control intent) → control watchdog → smooth
 * enable/disable sequencer → gait planner → leg overrides → body IK → joint overrides → joint
 * models (7 rad/s, scaled) → physics (feet, height, contacts, odometry, IMU, efforts, power) →
 * RPC jobs → publish state. Its parts: the firmware state they share (firmware.ts), the control
 * stages (controller.ts), the physical model (physics.ts) and the module handlers (handlers.ts).
 *
 * `handle(module, action, args)` answers a decoded request like the firmware's module handlers,
 * with the differences the reference asks for (§12): every request is answered, ids and ranges are
 * checked, refused targets keep the old ones, the IMU's acceleration and angular velocity are
 * served, yaw is reported. Handlers marked `rpc` in the table answer after the next tick, as on
 * the robot, so replies can overtake each other.
 *
 * NOTE: how the tick stays allocation-free. V8 passes arguments and keeps object fields tagged, so
 * a double handed to a call it does not inline, or kept in a field whose representation went
 * generic, is boxed: a 16-byte heap number each time. So the tick's scalars (time, step, speed
 * scale, battery charge, …) live in one Float64Array (`Firmware.f`, slots named in firmware.ts)
 * and its stages take no arguments; the stages are called through one table (`#stages`), a
 * megamorphic call site, so V8 compiles each on its own with its own inlining budget for the
 * kinematics it calls (one large tick overran the budget and boxed their arguments); the gait
 * planner and the leg IK, too large to inline, take their numbers in typed-array slots
 * (`planner.input`, see gait.ts and kinematics.ts).
 */
import { writeSimWorld } from "../../bodies/sim-world.js";
import { DEFAULT_BODY_HEIGHT_M } from "../../bodies/tny360/kinematics.js";
import { EAR_DEFAULT_RAD, REST_POSE_RAD, STAND_POSE_RAD, type Tny360SimPose } from "../../bodies/tny360/poses.js";
import type { GaitPlanner } from "../../bodies/tny360/gait.js";
import { NO_VALUES, OK_EMPTY, type Tny360State, type TnyReply } from "../../bodies/tny360/state.js";
import { VelocityKeepAlive } from "../../bodies/tny360/velocity.js";
import { type ActionSpec, AutoLifeLevel, GaitType, JOINT_COUNT, LogLevel, type LogLevelCode, MODULES, type ModuleSpec, Status, type StatusCode } from "../../wire/tny/constants.js";
import type { ActionKey, KeyDecodedArgs } from "../../wire/tny/types.js";
import { Controller } from "./controller.js";
import { BOOT_MS, DT_S, Firmware, INTENT_STAMP_MS, LAST_NOW_MS, NEXT_DECISION_MS, NOW_MS, REQUEST_MS, SIM_ERROR_IDS, SIM_PERIOD_MS, SOC, SPEED_SCALE } from "./firmware.js";
import { buildHandlers, DONE, type Handlers } from "./handlers.js";
import type { Tny360BodyModel, Tny360ModelFactory } from "./model.js";
import { KinematicTnyModel } from "./physics.js";
import type { ErrorRing, LogRing } from "./rings.js";

export { SIM_ERROR_IDS, SIM_LIMITS, SIM_PERIOD_MS } from "./firmware.js";

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
  /**
   * The body under the firmware (model.ts): builds it over the firmware state. Defaults to the
   * kinematic model; `drivers/tny360` makes MuJoCo's (`tny360PhysicsModel()`).
   */
  model?: Tny360ModelFactory;
}

/** `RPC_QUEUE_SIZE`. */
const RPC_QUEUE_SIZE = 32;

type UntypedHandler = (args: readonly unknown[]) => readonly unknown[] | StatusCode;

interface RpcJob {
  run: () => TnyReply;
  resolve: (r: TnyReply) => void;
}

export class SimTny360 {
  readonly periodMs = SIM_PERIOD_MS;
  readonly #fw: Firmware;
  readonly #ctl: Controller;
  readonly #physics: Tny360BodyModel;
  readonly #rpc: RpcJob[] = [];
  /** Simulated time since boot, s (a typed slot: never boxed). */
  readonly #simTimeS = new Float64Array(1);

  /**
   * The tick, stage by stage (see the header): one call site for all of them, so none is inlined
   * into another.
   */
  readonly #stages: ReadonlyArray<() => void> = [
    () => this.#decide(),
    () => this.#ctl.controlIntent(),
    () => this.#ctl.controlJoints(),
    () => this.#physics.bodyPose(),
    () => this.#physics.odometryImu(),
    () => this.#physics.jointSensors(),
    () => this.#physics.powerAdc(),
    () => this.#publish(),
    () => this.#runRpc(),
  ];

  readonly #handlers: Handlers;
  /** The same handlers keyed by the table's action objects (no string keys per request). */
  readonly #byAction = new Map<ActionSpec, UntypedHandler>();

  constructor(opts: SimTny360Options = {}) {
    const keeper = new VelocityKeepAlive({ timeoutMs: opts.velocityTimeoutMs, decayMs: opts.velocityDecayMs });
    this.#fw = new Firmware(keeper, opts.nowMs ?? null);
    this.#ctl = new Controller(this.#fw);
    const seed = (opts.seed ?? 1) >>> 0;
    this.#physics = opts.model ? opts.model(this.#fw, seed) : new KinematicTnyModel(this.#fw, seed);
    this.#handlers = buildHandlers(this.#fw, this.#ctl, this.#physics);
    for (const mod of MODULES as readonly ModuleSpec[]) {
      for (const act of mod.actions) {
        const h = this.#handlers[`${mod.name}.${act.name}` as ActionKey] as UntypedHandler | undefined;
        if (h) this.#byAction.set(act, h);
      }
    }
    this.#fw.f[SOC] = 0.9;
    this.#fw.f[NOW_MS] = 0;
    this.#boot();
  }

  /** The body under the firmware (model.ts): its kind, and the physics world when it has one. */
  get model(): Tny360BodyModel {
    return this.#physics;
  }

  /** The published state (updated at the end of each tick). */
  get state(): Tny360State {
    return this.#fw.state;
  }
  get log(): LogRing {
    return this.#fw.log;
  }
  get errors(): ErrorRing {
    return this.#fw.errors;
  }
  get planner(): GaitPlanner {
    return this.#fw.planner;
  }

  /** The velocity keep-alive's timeout (ms). */
  get velocityTimeoutMs(): number {
    return this.#fw.keeper.timeoutMs;
  }

  // -------------------------------------------------------------------------------------------
  // Requests

  /**
   * Answer one decoded request (arguments already checked against the table). Actions the
   * simulator does not serve answer their table status; `rpc` actions answer after the next tick.
   * `nowMs`: the request's time on the runtime's clock, read once where it arrived (a command is
   * stamped with it); omitted, the handler reads the clock.
   */
  handle(_module: ModuleSpec, action: ActionSpec, args: readonly unknown[], nowMs = Number.NaN): TnyReply | Promise<TnyReply> {
    if (!action.sim.served) return { status: action.sim.status, values: NO_VALUES };
    const h = this.#byAction.get(action);
    if (!h) return { status: Status.UnknownError, values: NO_VALUES }; // a served action without a handler: a bug, answered anyway
    if (!action.rpc) {
      const f = this.#fw.f;
      f[REQUEST_MS] = nowMs;
      try {
        return toReply(h(args));
      } finally {
        f[REQUEST_MS] = Number.NaN;
      }
    }
    if (this.#rpc.length >= RPC_QUEUE_SIZE) {
      // the firmware drops the job and never answers (§12 #13); bodylink answers
      this.#fw.error(SIM_ERROR_IDS.rpcQueueFull, [this.#rpc.length]);
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

  /**
   * Run a served action's handler now with its typed arguments (the driver applying a validated
   * command; no RPC deferral): the reply. Perform side for the set* commands: the handlers write
   * into the firmware's state and return a shared empty tuple.
   */
  run<K extends ActionKey>(key: K, args: KeyDecodedArgs<K>): TnyReply {
    const h = this.#handlers[key] as ((a: KeyDecodedArgs<K>) => readonly unknown[] | StatusCode) | undefined;
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
    this.#fw.keeper.clear();
  }

  /** Emergency stop: velocity zero now, smooth sequence and joint overrides cleared; joints keep holding. */
  emergencyStop(reason: string): void {
    this.#fw.keeper.clear();
    this.#fw.intentV.fill(0);
    this.#ctl.cancelSmooth("emergency stop");
    this.#fw.clearJointOverrides();
    this.#fw.logLine(LogLevel.Error, "safety", `emergency stop: ${reason}`);
  }

  /** Start a smooth enable (REST at 5 %, then STAND at 10 %); returns its estimated duration (s), −1 with the control loop stopped. */
  enableSmooth(): number {
    return this.#ctl.enableSmooth();
  }

  /** Start a smooth disable (REST at 10 %, then leg joints off); returns its estimated duration (s), −1 with the control loop stopped. */
  disableSmooth(): number {
    return this.#ctl.disableSmooth();
  }

  // -------------------------------------------------------------------------------------------
  // The control tick

  /**
   * One 5 ms firmware tick at `nowMs` (perform side, allocation-free except log/error entries and
   * RPC replies). Small, so callers inline it and `nowMs` goes straight into its slot.
   */
  cycle(nowMs: number): void {
    this.#fw.f[NOW_MS] = nowMs;
    const stages = this.#stages;
    for (let i = 0; i < stages.length; i++) stages[i]!();
    this.#simTimeS[0]! += this.#fw.f[DT_S]!;
  }

  /** Simulated time since the last boot, s: the ticks' steps summed (a stall longer than 50 ms loses the rest). */
  get timeS(): number {
    return this.#simTimeS[0]!;
  }

  /**
   * Put a physics body's world into `pose` (POST /v1/sim/reset; docs/simulation.md): the robot at
   * the origin, at rest, and the firmware as that pose leaves it: `stand` as a smooth enable does
   * (every joint on, holding STAND), `rest` and `lying` as a smooth disable does (leg joints off);
   * no smooth sequence, override, velocity or posture offset left, the gait planner at its start,
   * odometry from here, the world's time and this simulator's back to 0. False (nothing changed)
   * on the kinematic body, which has no world. Prepare side.
   */
  resetWorld(pose: Tny360SimPose): boolean {
    const world = this.#physics.world;
    if (!world) return false;
    const fw = this.#fw;
    const f = fw.f;
    this.#ctl.reset();
    f[SPEED_SCALE] = 1;
    this.#clearIntent();
    fw.planner.reset();
    const stand = pose === "stand";
    const legs = stand ? STAND_POSE_RAD : REST_POSE_RAD;
    for (let j = 0; j < JOINT_COUNT; j++) {
      const a = j < 12 ? legs[j]! : EAR_DEFAULT_RAD;
      fw.model[j] = fw.target[j] = fw.feedback[j] = fw.estimated[j] = a;
      if (stand) fw.enabled[j] = 1;
      else if (j < 12) fw.enabled[j] = 0;
    }
    world.resetWorld(pose);
    this.#physics.reset();
    const od = fw.state.odometry;
    od.xM = od.yM = od.yawRad = 0;
    this.#simTimeS[0] = 0;
    fw.logLine(LogLevel.Info, "system", `simulation reset to ${pose}`);
    const dt = f[DT_S]!;
    this.#publishAsIs();
    f[DT_S] = dt;
    return true;
  }

  /** Reboot if asked, then the decision stage. */
  #decide(): void {
    if (this.#fw.rebootPending) {
      this.#fw.rebootPending = false;
      this.#boot();
    }
    this.#ctl.decide();
  }

  #publish(): void {
    const fw = this.#fw;
    const s = fw.state;
    s.seq++;
    s.timestampMs = fw.f[NOW_MS]!;
    s.valid = true;
    s.link = "ok";
    const j = s.joints;
    for (let i = 0; i < JOINT_COUNT; i++) {
      j.positionRad[i] = fw.feedback[i]!;
      j.targetRad[i] = fw.target[i]!;
      j.enabled[i] = fw.enabled[i]!;
    }
    s.paws.grounded.set(this.#physics.grounded);
    s.body.targetVelocity.set(fw.controlLoop && !fw.watchdogTripped ? fw.intentV : ZERO3);
    for (let k = 0; k < 3; k++) {
      s.body.posturePositionM[k] = fw.posture[k]!;
      s.body.postureRotationRad[k] = fw.posture[3 + k]!;
    }
    s.body.heightM = this.#physics.heightM;
    s.body.gait = fw.gait;
    s.body.enabledMask = fw.enabledMask();
    s.body.smooth = this.#ctl.smoothPhase;
    const last = fw.errors.latest();
    s.errors.count = fw.errors.count;
    s.errors.lastEventId = last ? last.eventId : -1;
    s.errors.lastErrorId = last ? ((last.module << 24) | (last.subsystem << 16) | (last.code << 8) | last.severity) >>> 0 : 0;
    s.system.controlLoopEnabled = fw.controlLoop;
    s.system.decisionLoopEnabled = fw.decisionLoop;
    s.system.chipTemperatureC = fw.chipTemperatureC();
    const world = this.#physics.world;
    if (world) {
      // the physics world (the real-time factor is the runtime's: it knows the wall clock)
      writeSimWorld(s.simWorld, world);
      for (let c = 0; c < world.contactForceN.length; c++) s.simContacts[c] = world.contactForceN[c]!;
    }
  }

  /** Set the epoch time shown in the state (the runtime calls this with its clock's epoch). */
  stampEpoch(epochMs: number): void {
    this.#fw.state.epochMs = epochMs;
  }

  #runRpc(): void {
    // RPC jobs run at the end of the tick, on the control core (RPC::Process_Core1)
    if (this.#rpc.length > 0) for (const job of this.#rpc.splice(0)) job.resolve(job.run());
  }

  /** Restart at the time in the NOW_MS slot. */
  #boot(): void {
    const fw = this.#fw;
    const f = fw.f;
    const nowMs = f[NOW_MS]!;
    f[BOOT_MS] = nowMs;
    this.#simTimeS[0] = 0;
    fw.enabled.fill(0);
    for (let j = 0; j < 12; j++) fw.model[j] = REST_POSE_RAD[j]!;
    fw.model[12] = EAR_DEFAULT_RAD;
    fw.model[13] = EAR_DEFAULT_RAD;
    fw.target.set(fw.model);
    fw.feedback.set(fw.model);
    fw.estimated.set(fw.model);
    this.#clearIntent();
    fw.gait = GaitType.Walk;
    fw.intentGait = GaitType.Walk;
    f[INTENT_STAMP_MS] = nowMs;
    f[NEXT_DECISION_MS] = nowMs;
    fw.watchdogTripped = false;
    f[SPEED_SCALE] = 1;
    fw.controlLoop = true;
    fw.decisionLoop = true;
    fw.autolife = AutoLifeLevel.Full;
    this.#ctl.reset();
    this.#physics.reset();
    fw.planner.reset();
    const od = fw.state.odometry;
    od.xM = od.yM = od.yawRad = od.vxMS = od.vyMS = od.yawRateRadS = 0;
    f[LAST_NOW_MS] = Number.NaN;
    fw.log.clear();
    fw.errors.clear();
    fw.logLine(LogLevel.Info, "system", "TNY-360 simulator booted (bodylink); joints off, REST pose");
    this.#publishAsIs();
  }

  /** The body's stages over no time, then the state: it shows the body as it is now, not a tick later (boot, a world reset). Leaves the step at 0. */
  #publishAsIs(): void {
    this.#fw.f[DT_S] = 0;
    this.#physics.bodyPose();
    this.#physics.odometryImu();
    this.#physics.jointSensors();
    this.#physics.powerAdc();
    this.#publish();
  }

  /** What clients asked of the body, gone (boot, a world reset): overrides, posture offsets, velocity. */
  #clearIntent(): void {
    const fw = this.#fw;
    fw.clearJointOverrides();
    fw.legOverride.fill(0);
    fw.legOverrideOn.fill(0);
    fw.posture.set([0, 0, DEFAULT_BODY_HEIGHT_M, 0, 0, 0]);
    fw.keeper.clear();
    fw.intentV.fill(0);
  }

  /** Log a line from outside (the TNY server records refused commands here). */
  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.#fw.logLine(level, tag, message);
  }

  /** Keys of the actions this simulator has a handler for (tests compare them with the table). */
  handlerKeys(): string[] {
    return Object.keys(this.#handlers);
  }
}

const ZERO3 = new Float64Array(3);

function toReply(r: readonly unknown[] | StatusCode): TnyReply {
  if (r === DONE) return OK_EMPTY;
  return typeof r === "number" ? { status: r, values: NO_VALUES } : { status: Status.Ok, values: r };
}
