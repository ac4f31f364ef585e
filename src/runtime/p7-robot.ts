/**
 * The AIRBOT P7 arm's runtime object: a 4 ms (250 Hz) cycle that reads the (simulated) arm into
 * a `P7State`, the P7 SDK's three getters as frozen snapshots with source timestamps, and the
 * arm's commands behind the shared control lease.
 *
 * Cycle (perform side, no objects or arrays created; see arm-sim.ts for the few boxed doubles):
 * check the commanding lease → advance the arm by the elapsed time → read its frame → copy it
 * into the state with length checks → notify listeners.
 * Getters and commands run on the prepare side (they allocate the snapshot or the answer).
 *
 * Safety rules (docs/p7.md):
 * - reads never need a lease; `moveJoints`, `servoJoints` and `clearError` need the lease id;
 * - while the lease that commanded the arm is held, its last command stays in force; when that
 *   lease ends (released, expired, revoked) the arm decelerates at its stop rate and holds its
 *   position (velocity zero) until the next holder commands it;
 * - `estop(req)` needs no lease and latches until `resetEstop` (estop.ts): category 1 (default)
 *   decelerates every joint at its stop rate and holds, category 0 halts every joint where it is;
 *   the lease is revoked and every command is refused (409 BL_ERR_ESTOP_LATCHED) until the reset;
 * - a joint with a nonzero error id is stopped by the arm; motion commands are refused until the
 *   error is cleared (409 BL_ERR_CMD_JOINT_FAULT); the other joints finish their current motion;
 * - when the link is lost the getters return null at once, commands are refused (503) and the arm
 *   stops itself; after the link returns the arm holds until commanded again.
 */
import { copyP7Commands, P7_WRITE_KIND, P7Commands, type P7WriteKind, p7MoveScales, setP7Write, validateJointIndex, validateJointTargets, validateSpeed } from "../bodies/p7/commands.js";
import { P7_JOINT_COUNT, P7_MAX_SPEED_RAD_S, P7_SIM_POSE_RAD, type P7SimPose } from "../bodies/p7/joints.js";
import { P7_COMMAND_KIND } from "../bodies/p7/layout.js";
import {
  type ArmJointState,
  type ArmMotorState,
  type ImuState,
  P7State,
  type P7StateSnapshot,
  snapshotImuState,
  snapshotJointState,
  snapshotMotorState,
  toP7StateSnapshot,
} from "../bodies/p7/state.js";
import { BodylinkError } from "../errors.js";
import type { LinkStatus } from "../bodies/link.js";
import { leaseEndCode, type SafetyCode } from "../bodies/safety.js";
import { IO } from "../drivers/driver.js";
import { type P7Driver, P7SimDriver } from "../drivers/p7/sim.js";
import { type CycleRobot, Lifecycle, PHASE, type Phase } from "../rt/lifecycle.js";
import type { P7SimParams } from "../sim/p7/constants.js";
import type { P7Sim } from "../sim/p7/arm-sim.js";
import type { P7BodyModel } from "../sim/p7/model.js";
import { SIM_WORLD, writeSimWorld } from "../bodies/sim-world.js";
import { Authority, type Awaitable, type LeaseInfo } from "./authority.js";
import { p7Admission, p7FaultRefusal } from "./p7-checks.js";
import { type Clock, MonotonicClock } from "./clock.js";
import { SimTimeMeter } from "./sim-time.js";
import { describeEstop, type EstopRequest, type EstopResetRequest, type EstopState, type StopCategory } from "./estop.js";
import type { CycleLoop } from "./loop.js";
import type { BodyRuntime, HealthOptions, RobotBase, RobotHealth, SimResetResult } from "./robot.js";

export const P7_PERIOD_MS = 4;

export type P7LinkStatus = LinkStatus;
/** The P7's documented default stop category: decelerate and hold. */
export const P7_DEFAULT_STOP_CATEGORY: StopCategory = 1;

export interface P7RobotOptions {
  /** Defaults to a MonotonicClock. Use a SimClock in tests. */
  clock?: Clock;
  /** Seed of the simulated arm (noise, initial temperatures). Defaults to 1. */
  seed?: number;
  /** The runtime's one Authority, when several servers share it. Defaults to a new one on `clock`. */
  authority?: Authority;
  /** Simulator parameters to override (thermal model, noise). */
  simParams?: Partial<P7SimParams>;
  /** Starting joint angles of the simulated arm, rad. Defaults to all zeros (upright). */
  initialAnglesRad?: ArrayLike<number>;
  /** See LoopOptions.youngGcEveryMs: collect the young generation between cycles this often, ms. Defaults to 0 (V8 decides); `bodylink serve` sets 100. */
  youngGcEveryMs?: number;
  /** The simulated arm's mechanics (`physicsP7Model()` for physics); defaults to the kinematic model. */
  simModel?: P7BodyModel;
  /** The arm's link. Defaults to the simulated arm (seed, simParams, initialAnglesRad, simModel); `sim` stays that simulator. */
  driver?: P7Driver;
}

export type P7CommandResult<T extends object = Record<never, never>> = ({ readonly ok: true } & T) | { readonly ok: false; readonly error: BodylinkError };

export interface P7MoveOptions {
  /**
   * Speed limit, rad/s: one number for every joint or 7 numbers. Defaults to π/3 (the SDK's
   * default). Values above a joint's maximum are clamped to it; ≤ 0, NaN or ±Infinity are refused.
   */
  speedRadS?: number | ArrayLike<number>;
}

export interface P7MoveAccepted {
  /** Estimated duration of the move from rest, s (joints arrive together). */
  readonly etaS: number;
  /** The speed limit applied per joint after clamping, rad/s. */
  readonly speedRadS: readonly number[];
}

/** What a command the arm took was (P7Robot.onCommand): the mailbox's kinds (P7_COMMAND_KIND), and clearError. */
export const P7_TAKEN_KIND = { ...P7_COMMAND_KIND, clearError: 3 } as const;
export type P7TakenKind = (typeof P7_TAKEN_KIND)[keyof typeof P7_TAKEN_KIND];

/**
 * Called for every command the arm took, after validation (perform side: the arrays are the robot's
 * own, valid only during the call; allocate nothing). `targetsRad`/`speedRadS` are the applied
 * values (speeds clamped; servo: its targets and the joints' maximum speeds); `joint` is the joint a
 * clearError named, -1 for every joint (and for moves).
 */
export type P7CommandListener = (kind: P7TakenKind, targetsRad: Float64Array, speedRadS: Float64Array, joint: number) => void;

export interface P7ClearAccepted {
  /** Indices of the joints whose error id was nonzero and is now 0. */
  readonly clearedJoints: readonly number[];
}

export class P7Robot implements RobotBase, P7Body, CycleRobot<P7State, P7Commands> {
  readonly kind = "p7" as const;
  readonly periodMs = P7_PERIOD_MS;
  readonly clock: Clock;
  readonly authority: Authority;
  readonly loop: CycleLoop;
  /** The driver, the body seam (src/drivers/p7/): the simulated arm. */
  readonly driver: P7Driver;
  /** Owns the transitions and the cycle (src/rt/lifecycle.ts). */
  readonly lifecycle: Lifecycle<P7State, P7Commands>;
  /** The simulated arm, for fault hooks in tests (`injectError`, `setReportedLengths`). */
  readonly sim: P7Sim;
  /** The simulator's time against the wall (health's `sim`). */
  readonly #simTime = new SimTimeMeter();
  readonly defaultStopCategory: StopCategory = P7_DEFAULT_STOP_CATEGORY;
  /** Live state, overwritten in place every cycle: read it on the perform side, never hand it out. */
  readonly state = new P7State();
  /**
   * The command the driver's next `write` hands the arm (a client's move or servo, or the core's
   * own hold or halt); a newer one replaces it, as on the arm. Perform side reads it; never hand it out.
   */
  readonly output = new P7Commands();

  #link: P7LinkStatus = "starting";
  #safetyReason: string | null = "no control lease held: holding position";
  #safety: SafetyCode = "no_holder";
  /** Why the body is in its safe state: the code and its words change together. */
  #setSafety(code: SafetyCode, text: string | null): void {
    this.#safety = code;
    this.#safetyReason = text;
  }
  /** The lease whose command the arm is executing, or null (holding). */
  #commandLease: string | null = null;
  readonly #targets = new Float64Array(P7_JOINT_COUNT);
  readonly #speeds = new Float64Array(P7_JOINT_COUNT);
  readonly #errorScratch = new Float64Array(P7_JOINT_COUNT);
  readonly #scales = new Float64Array(2);
  /** staleCommands: validated commands (a worker core's mailbox) dropped because their lease had ended or the e-stop latched. */
  readonly #counters = { linkLost: 0, lengthMismatch: 0, emergencyStops: 0, refusedCommands: 0, leaseEndedStops: 0, staleCommands: 0 };
  readonly #commandListeners: P7CommandListener[] = [];
  // One frozen snapshot per model per state version, built on first request. The version moves
  // on every change of the state (new cycle, invalidation, cleared error ids).
  #stateVersion = 0;
  #cacheVersion = -1;
  #joints: ArmJointState | null = null;
  #motors: ArmMotorState | null = null;
  #imu: ImuState | null = null;
  #all: P7StateSnapshot | null = null;
  #built = 0; // bit per model already built for #cacheVersion
  readonly #onReleased = (info: LeaseInfo, why: "released" | "expired" | "revoked"): void => {
    if (info.id !== this.#commandLease) return;
    this.#commandLease = null;
    this.#stop(P7_WRITE_KIND.hold, false);
    this.#counters.leaseEndedStops++;
    this.#setSafety(leaseEndCode(why), `control lease ${why}: holding position`);
  };

  private constructor(opts: P7RobotOptions) {
    this.clock = opts.clock ?? new MonotonicClock();
    this.authority = opts.authority ?? new Authority(this.clock);
    // A simulated arm given as the driver (the core's worker builds its own) is the one `sim` names.
    const simDriver =
      opts.driver instanceof P7SimDriver
        ? opts.driver
        : new P7SimDriver({ seed: opts.seed ?? 1, params: opts.simParams, initialAnglesRad: opts.initialAnglesRad, ...(opts.simModel ? { model: opts.simModel } : {}) });
    this.sim = simDriver.sim;
    this.driver = opts.driver ?? simDriver;
    this.lifecycle = new Lifecycle(this.driver, this, this.clock, opts.youngGcEveryMs === undefined ? {} : { youngGcEveryMs: opts.youngGcEveryMs });
    this.loop = this.lifecycle.loop;
    this.authority.bindCycles(this.loop, P7_PERIOD_MS);
    this.authority.on("released", this.#onReleased);
  }

  /** A P7 runtime on a simulated arm, not started. Async like the other bodies' `create`. */
  static async create(opts: P7RobotOptions = {}): Promise<P7Robot> {
    const robot = new P7Robot(opts);
    await robot.lifecycle.configure(); // the simulated arm has no link to open: inactive, `loop.step()` works
    return robot;
  }

  /** "starting" until the first frame, then "ok"; "lost" while the link is down; "stopped" after stop(). */
  get link(): P7LinkStatus {
    return this.#link;
  }

  /** Start the cycle (again after `stop()`: the arm holds until commanded). */
  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** Stop all joints, revoke the lease, stop the cycle. Getters return null afterwards. Idempotent. */
  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** `stop()`, and nothing starts again. */
  shutdown(): Promise<void> {
    return this.lifecycle.shutdown();
  }

  // ---- lifecycle hooks (prepare side) ------------------------------------------------------

  onActivating(): void {
    if (this.#link === "stopped") this.#link = "starting";
  }

  onDeactivating(): void {
    this.#stop(P7_WRITE_KIND.hold, false); // the driver's deactivate holds the arm; a restart starts from this hold
    this.authority.revoke();
    this.#commandLease = null;
  }

  onClosed(): void {
    this.#link = "stopped";
    this.#invalidate();
  }

  onDriverError(message: string): void {
    this.#stop(P7_WRITE_KIND.hold, false);
    this.authority.revoke(); // after a restart, nothing moves until a client commands again
    this.#commandLease = null;
    if (this.#link !== "lost") this.#counters.linkLost++;
    this.#link = "lost";
    this.#setSafety("link_lost", `body link lost: ${message}`);
    this.#invalidate();
  }

  health(opts: HealthOptions = {}): RobotHealth {
    const h = this.authority.holder();
    let jointErrors = 0;
    for (let i = 0; i < P7_JOINT_COUNT; i++) if (this.driver.errorId(i) !== 0) jointErrors++;
    return {
      body: "p7",
      link: this.#link,
      safety: this.#safety,
      safetyReason: this.#safetyReason,
      cycle: this.loop.summary(opts.windowCycles),
      errors: { ...this.#counters, jointErrors },
      control: h ? { owner: h.owner, source: h.source, expiresAtEpochMs: h.expiresAtEpochMs } : null,
      estop: this.authority.estop,
      sim: this.#simTime.health(this.clock, this.sim.model.kind),
    };
  }

  onCycle(listener: (seq: number, nowMs: number) => void): () => void {
    return this.loop.onCycle(listener);
  }

  /** Every command the arm took (a recording's /p7/command). Returns an unsubscribe. */
  onCommand(listener: P7CommandListener): () => void {
    this.#commandListeners.push(listener);
    return () => {
      const i = this.#commandListeners.indexOf(listener);
      if (i >= 0) this.#commandListeners.splice(i, 1);
    };
  }

  // ---- reads (no lease) ------------------------------------------------------------------

  /** Joint angles (rad), velocities (rad/s), efforts (N·m) of the latest cycle; frozen, or null. */
  getJointState(): ArmJointState | null {
    this.#refreshCache();
    if (!(this.#built & 1)) {
      this.#joints = snapshotJointState(this.state);
      this.#built |= 1;
    }
    return this.#joints;
  }

  /** Motor temperatures (°C) and raw error ids of the latest cycle; frozen, or null. */
  getMotorState(): ArmMotorState | null {
    this.#refreshCache();
    if (!(this.#built & 2)) {
      this.#motors = snapshotMotorState(this.state);
      this.#built |= 2;
    }
    return this.#motors;
  }

  /** IMU angular velocity (rad/s) and linear acceleration incl. gravity (m/s²), arm_imu frame; frozen, or null. */
  getImuState(): ImuState | null {
    this.#refreshCache();
    if (!(this.#built & 4)) {
      this.#imu = snapshotImuState(this.state);
      this.#built |= 4;
    }
    return this.#imu;
  }

  /** Joints, motors and IMU from one cycle; frozen, or null when any of the three is null. */
  getState(): P7StateSnapshot | null {
    this.#refreshCache();
    if (!(this.#built & 8)) {
      this.#all = toP7StateSnapshot(this.getJointState(), this.getMotorState(), this.getImuState());
      this.#built |= 8;
    }
    return this.#all;
  }

  // ---- commands (lease) --------------------------------------------------------------------

  /**
   * Point-to-point move of all 7 joints to `targetsRad` (rad, inside the command limits), at most
   * at the speed limit, joints arriving together. Replaces any motion in progress.
   */
  moveJoints(leaseId: string, targetsRad: ArrayLike<number>, opts: P7MoveOptions = {}): P7CommandResult<P7MoveAccepted> {
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    const bad = validateJointTargets(targetsRad, this.#targets) ?? validateSpeed(opts?.speedRadS, this.#speeds);
    if (bad) return this.#refuse(new BodylinkError("BL_ERR_CMD_INVALID", bad));
    const fault = this.#faultRefusal();
    if (fault) return fault;
    // The arm's own rule from where it is (its state is its newest frame: it moves only in write).
    const etaS = p7MoveScales(this.state.angles, this.#targets, this.#speeds, this.#errorScratch, this.#scales);
    this.#command(P7_WRITE_KIND.moveJoints, this.#targets, this.#speeds);
    this.#accepted(leaseId);
    this.#took(P7_TAKEN_KIND.moveJoints, -1);
    return { ok: true, etaS, speedRadS: Object.freeze(Array.from(this.#speeds)) };
  }

  /**
   * Servo: each joint tracks `targetsRad` (rad, inside the command limits) at its maximum speed and
   * acceleration; each call replaces the previous targets. Meant for a stream of nearby targets.
   * Allocation-free when accepted.
   */
  servoJoints(leaseId: string, targetsRad: ArrayLike<number>): P7CommandResult {
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    const bad = validateJointTargets(targetsRad, this.#targets);
    if (bad) return this.#refuse(new BodylinkError("BL_ERR_CMD_INVALID", bad));
    const fault = this.#faultRefusal();
    if (fault) return fault;
    this.#command(P7_WRITE_KIND.servoJoints, this.#targets, this.#speeds);
    this.#accepted(leaseId);
    this.#took(P7_TAKEN_KIND.servoJoints, -1);
    return OK;
  }

  /**
   * Take a motion command a host validated and posted to this core's mailbox (src/host/p7-host.ts):
   * its kind (P7_COMMAND_KIND), targets and speeds already checked, its lease generation the one it
   * was validated under. Only what can change between the threads is checked again: dropped
   * (errors.staleCommands) when control changed hands since or the e-stop latched; refused like a
   * direct command (errors.refusedCommands) when the link or a joint fault changed since. Perform
   * side (the cycle's input): no allocation.
   */
  applyValidated(command: P7Commands): boolean {
    const kind = command.header[0]!;
    const holder = this.authority.activeHolder();
    if (holder === null || command.header[1] !== this.authority.generation || this.authority.latched) {
      this.#counters.staleCommands++;
      return false;
    }
    if (kind !== P7_COMMAND_KIND.moveJoints && kind !== P7_COMMAND_KIND.servoJoints) return false;
    if (this.#admit(holder.id) || this.#faultRefusal()) return false;
    copyP7Commands(command, this.output);
    this.#accepted(holder.id);
    this.#took(kind, -1, command.targetsRad, command.speedRadS);
    return true;
  }

  /**
   * Clear the error id of `joint` (index 0..6), or of every joint when omitted; the joint then
   * holds where it stopped. Clear only after diagnosing the fault: a persisting condition (an
   * over-temperature) sets its bit again on the next cycle.
   */
  clearError(leaseId: string, joint?: number): P7CommandResult<P7ClearAccepted> {
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    const bad = validateJointIndex(joint);
    if (bad) return this.#refuse(new BodylinkError("BL_ERR_CMD_INVALID", bad));
    this.driver.apply(this.output); // a command sent before reaches the arm before the clear, as sent
    const cleared = this.driver.clearError(joint);
    this.#copyErrorIds();
    this.#took(P7_TAKEN_KIND.clearError, joint ?? -1);
    return { ok: true, clearedJoints: Object.freeze(cleared) };
  }

  /**
   * Put the physics arm's world back at rest in `pose` (POST /v1/sim/reset; P7Sim.resetWorld): under
   * the rules of a command (lease, e-stop latch, link), after the command sent before it; the arm
   * then holds there until commanded. Refused (404 BL_ERR_CMD_UNSUPPORTED) on the kinematic arm,
   * which has no world. The state shows the pose at once. Prepare side.
   */
  simReset(leaseId: string, pose: P7SimPose): SimResetResult {
    const driver = this.driver;
    if (!(driver instanceof P7SimDriver) || this.sim.model.kind !== "physics") {
      return { ok: false, error: new BodylinkError("BL_ERR_CMD_UNSUPPORTED", "p7 on the kinematic simulator", "physics world to reset (serve --body p7 --sim physics)") };
    }
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    driver.apply(this.output); // a command sent before reaches the arm before the reset, as sent
    driver.resetWorld(P7_SIM_POSE_RAD[pose]);
    const now = this.clock.nowMs();
    this.account(now, driver.read(now, this.state), PHASE.Read);
    return { ok: true, timeS: this.sim.timeS };
  }

  /** Emergency stop, no lease needed, latched until `resetEstop`: category 1 decelerates and holds, category 0 halts now. */
  estop(req: EstopRequest): EstopState {
    const category = req.category ?? this.defaultStopCategory;
    const first = this.authority.engageEstop(category, req.source, req.reason);
    if (first) this.#counters.emergencyStops++;
    this.#commandLease = null;
    const e = this.authority.estop;
    // Now, not at the next write: the stop waits for no cycle.
    if (e.category === 0) this.#stop(P7_WRITE_KIND.halt, true);
    else if (first) this.#stop(P7_WRITE_KIND.hold, true);
    if (e.phase === "settling" && this.driver.atRest) this.authority.setEstopPhase("cut");
    this.#setSafety("estop", describeEstop(this.authority.estop));
    return this.authority.estop;
  }

  /** Shorthand for `estop({ source: "local", reason })`. */
  emergencyStop(reason: string, category?: StopCategory): EstopState {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }

  /** Release the latch; the arm keeps holding until a client takes a lease and commands. */
  resetEstop(req: EstopResetRequest): EstopState {
    if (this.authority.resetEstop(req)) {
      this.#setSafety("estop_reset", "emergency stop reset: holding position until commanded");
    }
    return this.authority.estop;
  }

  estopState(): EstopState {
    return this.authority.estop;
  }

  /** Every joint halts where it is, now (a dying core's safe state; synchronous on the simulated arm). */
  haltNow(): void {
    this.#stop(P7_WRITE_KIND.halt, true);
  }

  // ---- fault hooks (tests) -----------------------------------------------------------------

  /** Drop the link to the arm: getters return null now, commands get 503, the arm stops itself. */
  simulateLinkLoss(): void {
    this.sim.dropLink();
    if (this.#link !== "lost") this.#counters.linkLost++;
    this.#link = "lost";
    this.#invalidate();
  }

  /** Bring the link back: state returns on the next cycle; the arm holds until commanded again. */
  restoreLink(): void {
    this.sim.restoreLink();
  }

  // ---- internals ---------------------------------------------------------------------------

  /**
   * Perform side, before the arm executes: a lease that expired since the last cycle ends its
   * command (the Authority emits "released" from isHeld, and #onReleased stops the arm).
   */
  update(_nowMs: number): void {
    if (this.#commandLease !== null) this.authority.isHeld(this.#commandLease);
  }

  /** Perform side: a new frame was copied into the state (length-checked by the driver), or the link is down. */
  account(nowMs: number, code: number, _phase: Phase): void {
    // A category-1 stop is done once every joint has come to rest (or the link is gone: cut).
    if (this.authority.estop.phase === "settling" && (this.driver.atRest || !this.driver.linkUp)) {
      this.authority.setEstopPhase("cut", this.driver.atRest ? undefined : 0);
      this.#setSafety("estop", describeEstop(this.authority.estop));
    }
    if (code !== IO.Fresh) {
      if (this.#link !== "lost") this.#counters.linkLost++;
      this.#link = "lost";
      this.#invalidate();
      return;
    }
    const s = this.state;
    this.#stateVersion++;
    s.seq++;
    s.timestampMs = nowMs;
    s.epochMs = this.clock.epochMs();
    this.#simTime.sample(this.sim.timeS);
    if (this.sim.model.kind === "physics") {
      writeSimWorld(s.simWorld, this.sim.model);
      s.simWorld[SIM_WORLD.realTimeFactor] = this.#simTime.realTimeFactor();
      s.simContacts.set(this.sim.model.contactForceN);
    }
    if (!s.jointValid || !s.motorValid || !s.imuValid) this.#counters.lengthMismatch++;
    this.#link = "ok";
  }

  /** After clearError the state shows the cleared ids at once, not a cycle later. */
  #copyErrorIds(): void {
    const f = this.driver.peek();
    if (f && this.state.motorValid && f.errorIds.length === P7_JOINT_COUNT) {
      this.state.errorIds.set(f.errorIds);
      this.#stateVersion++;
    }
  }

  #invalidate(): void {
    this.state.invalidate();
    this.#stateVersion++;
  }

  #refreshCache(): void {
    if (this.#cacheVersion === this.#stateVersion) return;
    this.#cacheVersion = this.#stateVersion;
    this.#built = 0;
    this.#joints = this.#motors = this.#imu = this.#all = null;
  }

  /** Lease and link checks common to every command; null when the command may proceed. */
  #admit(leaseId: string): { ok: false; error: BodylinkError } | null {
    const denied = p7Admission(this.authority, leaseId, this.#link, this.driver.linkUp, this.state);
    return denied ? this.#refuse(denied) : null;
  }

  /** The arm's own error ids now (a fault injected since the last cycle counts at once). */
  #faultRefusal(): { ok: false; error: BodylinkError } | null {
    for (let i = 0; i < P7_JOINT_COUNT; i++) this.#errorScratch[i] = this.driver.errorId(i);
    const fault = p7FaultRefusal(this.#errorScratch);
    return fault ? this.#refuse(fault) : null;
  }

  #refuse(error: BodylinkError): { ok: false; error: BodylinkError } {
    this.#counters.refusedCommands++;
    return { ok: false, error };
  }

  #took(kind: P7TakenKind, joint: number, targetsRad: Float64Array = this.#targets, speedRadS: Float64Array = this.#speeds): void {
    const ls = this.#commandListeners;
    if (ls.length === 0) return;
    if (kind === P7_TAKEN_KIND.servoJoints) {
      // servo runs each joint at its maximum
      this.#speeds.set(P7_MAX_SPEED_RAD_S);
      speedRadS = this.#speeds;
    }
    for (let i = 0; i < ls.length; i++) ls[i]!(kind, targetsRad, speedRadS, joint);
  }

  /** A client's motion into the output: the next write hands it to the arm. */
  #command(kind: P7WriteKind, targetsRad: Float64Array, speedRadS: Float64Array): void {
    const o = this.output;
    o.targetsRad.set(targetsRad);
    o.speedRadS.set(speedRadS);
    setP7Write(o, kind, this.authority.generation);
  }

  /** The core's own stop replaces any pending motion; `now` hands it to the arm at once instead of at the next write. */
  #stop(kind: typeof P7_WRITE_KIND.hold | typeof P7_WRITE_KIND.halt, now: boolean): void {
    setP7Write(this.output, kind, this.authority.generation);
    if (now) this.driver.apply(this.output);
  }

  #accepted(leaseId: string): void {
    this.#commandLease = leaseId;
    this.#setSafety("none", null);
  }
}

const OK = Object.freeze({ ok: true as const });

/**
 * What the robot API serves of a P7: the core in this thread (P7Robot) or in a worker (P7Host);
 * both are checked against it at compile time, so the API never needs a cast. Motion commands
 * answer at once (P7Host validates them and posts them to the core's mailbox); clearError's
 * answer needs the arm, so a host answers it asynchronously.
 */
export interface P7Body extends BodyRuntime, Pick<P7Robot, "onCycle" | "state" | "link" | "moveJoints" | "servoJoints"> {
  readonly kind: "p7";
  clearError(leaseId: string, joint?: number): Awaitable<P7CommandResult<P7ClearAccepted>>;
  simReset(leaseId: string, pose: P7SimPose): Awaitable<SimResetResult>;
}
