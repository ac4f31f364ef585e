/**
 * The TNY-360 runtime object: a simulated quadruped (default) or a real robot driven over its
 * WebSocket API (`host` given), behind one surface the servers and the CLI use.
 *
 * ```ts
 * const robot = await Tny360Robot.create();                          // simulator, 200 Hz
 * const real = await Tny360Robot.create({ host: "192.168.4.1" });    // real robot, polled ≤ 50 Hz
 * await robot.start();
 * const lease = robot.authority.acquire("me", "cli");
 * if (lease.ok) robot.setVelocity(lease.lease.id, 0.2, 0, 0);
 * robot.snapshot()?.odometry;
 * ```
 *
 * Control rule (documented in docs/protocol/tny360.md): every command needs the runtime's one
 * lease (`authority`), whoever sends it (TNY WebSocket clients, the robot API, the CLI). Reads
 * never do. On top of the firmware's behaviour the runtime adds two safety rules the firmware
 * lacks (tny360.md §12 #12):
 * - a body velocity not renewed within `velocityTimeoutMs` (500 ms) decays to zero;
 * - when the lease that commanded the velocity is no longer held (released — e.g. its TNY
 *   connection closed —, expired or revoked), the velocity is cleared at once.
 * An emergency stop needs no lease: velocity 0, overrides cleared, control revoked; the joints
 * keep holding the stance (a TNY-360 dropped on its belly is not safer).
 *
 * Cycle: one `CycleLoop` — 5 ms (200 Hz) for the simulator, 1000/pollHz (20 ms) for the driver.
 * `state` is overwritten in place every cycle; `snapshot()` gives a frozen copy.
 */
import {
  clearTny360Commands,
  mergeEnabledMask,
  mergeGait,
  mergeJointAngle,
  mergeJointAngles,
  mergePosture,
  mergeTny360Commands,
  mergeVelocity,
  openTny360Merge,
  Tny360Commands,
  type Tny360Posture,
  tny360Keys,
} from "../bodies/tny360/commands.js";
import { SIM_WORLD } from "../bodies/sim-world.js";
import { JOINT_NAMES, LEG_NAMES } from "../bodies/tny360/joints.js";
import { TNY360_COMMAND_HEADER, TNY360_COMMAND_KEY } from "../bodies/tny360/layout.js";
import { smoothDisableEstimateS, smoothEnableEstimateS, type Tny360SimPose } from "../bodies/tny360/poses.js";
import {
  NO_VALUES,
  snapshotBody,
  snapshotErrors,
  snapshotImu,
  snapshotJoints,
  snapshotOdometry,
  snapshotPaws,
  snapshotPower,
  snapshotTny360State,
  type Tny360BodySnapshot,
  type Tny360ErrorsSnapshot,
  type Tny360ImuSnapshot,
  type Tny360JointsSnapshot,
  type Tny360OdometrySnapshot,
  type Tny360PawsSnapshot,
  type Tny360PowerSnapshot,
  type Tny360Snapshot,
  Tny360State,
  type TnyReply,
} from "../bodies/tny360/state.js";
import type { TnyWebSocketConstructor } from "../client/tny/index.js";
import { IO } from "../drivers/driver.js";
import { type TnyDriver, type TnyRequestKey, TnyRemoteDriver, TnySimDriver } from "../drivers/tny360/driver.js";
import { BodylinkError } from "../errors.js";
import type { SafetyCode } from "../bodies/safety.js";
import { type CycleRobot, Lifecycle } from "../rt/lifecycle.js";
import type { Tny360ModelFactory } from "../sim/tny360/model.js";
import type { SimTny360 } from "../sim/tny360/quadruped.js";
import { type ActionSpec, GaitType, type GaitName, LogLevel, type LogLevelCode, type ModuleSpec, Status, TNY_DEFAULT_PORT } from "../wire/tny/constants.js";
import type { KeyDecodedArgs } from "../wire/tny/types.js";
import { Authority, type Awaitable, leaseError } from "./authority.js";
import { TNY360_CHECKS, TNY_TYPED, type TnyAdmissionContext, type TnyCheck, type TnyRefusal, type TnySpec, tnyAdmission, tnyBodyRefusal, tnyLinkRefusal } from "./tny360-checks.js";
import { type Clock, MonotonicClock } from "./clock.js";
import { SimTimeMeter } from "./sim-time.js";
import { describeEstop, type EstopRequest, type EstopResetRequest, type EstopState, type StopCategory } from "./estop.js";
import type { CycleLoop } from "./loop.js";
import type { BodyRuntime, HealthOptions, RobotBase, RobotHealth, SimResetResult } from "./robot.js";
import type { RemoteTny360 } from "./tny360-remote.js";

/** The TNY-360's documented default stop category: velocity 0, then the smooth disable (it sits down). */
export const TNY360_DEFAULT_STOP_CATEGORY: StopCategory = 1;
/** `setEnabled` bits of the 12 leg joints (JointId 0..11; the ears are 12 and 13). */
const TNY_LEG_MASK = 0x0fff;

export interface Tny360RobotOptions {
  /** Defaults to a MonotonicClock. Tests pass a SimClock. */
  clock?: Clock;
  /** A real TNY-360's host name or IP: drive it instead of the simulator. Defaults to none (simulator). */
  host?: string | null;
  /** The real robot's API port. Defaults to 5621. */
  port?: number;
  /** Simulator noise seed. Defaults to 1. */
  seed?: number;
  /** A velocity not renewed for this long decays to zero. Defaults to 500 ms. */
  velocityTimeoutMs?: number;
  /** How long that decay takes. Defaults to 250 ms. */
  velocityDecayMs?: number;
  /** Real robot: state poll rate, at most (and by default) 50 Hz. */
  pollHz?: number;
  /** Real robot: per-request timeout. Defaults to 2000 ms. */
  requestTimeoutMs?: number;
  /** Real robot: WebSocket class. Defaults to the `ws` package. */
  WebSocket?: TnyWebSocketConstructor;
  /** Real robot: how long `start()` waits for the first connection before resolving anyway. Defaults to 3000 ms. */
  connectWaitMs?: number;
  /** See LoopOptions.youngGcEveryMs: collect the young generation between cycles this often, ms. Defaults to 0 (V8 decides); `bodylink serve` sets 100. */
  youngGcEveryMs?: number;
  /** The driver (the body seam). Defaults to the simulator's, or to the real robot's at `host`. */
  driver?: TnyDriver;
  /** The simulator's body (sim/tny360/model.ts; `tny360PhysicsModel()` in drivers/tny360 makes MuJoCo's). Defaults to the kinematic model. */
  simModel?: Tny360ModelFactory;
}

/**
 * Parse a `--tny-host` value: "HOST", "HOST:PORT" or "[IPv6]:PORT". Throws on an empty host or a
 * port outside 1–65535.
 */
export function parseTnyHost(value: string, defaultPort = TNY_DEFAULT_PORT): { host: string; port: number } {
  const v = value.trim();
  const bareIpv6 = (v.match(/:/g)?.length ?? 0) > 1 && !v.startsWith("[");
  const m = bareIpv6 ? [v, v] : (/^\[([^\]]+)\](?::(\d+))?$/.exec(v) ?? /^([^:]+)(?::(\d+))?$/.exec(v));
  const host = m?.[1];
  const port = m?.[2] !== undefined ? Number(m[2]) : defaultPort;
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`not a TNY-360 address: ${JSON.stringify(value)} (expected HOST or HOST:PORT, e.g. 192.168.4.1:5621)`);
  return { host, port };
}

/** Outcome of a typed command. `forwarded` = sent to a real robot, which answers later (failures count in health()). */
export type Tny360CommandResult = { readonly ok: true; readonly forwarded: boolean } | { readonly ok: false; readonly error: BodylinkError; readonly status: number };
export type Tny360SmoothResult = { readonly ok: true; readonly forwarded: boolean; readonly estimatedS: number } | { readonly ok: false; readonly error: BodylinkError; readonly status: number };

export type { Tny360Posture };

/** The answer to a command sent without control (see the header). */
const REFUSED: TnyReply = Object.freeze({ status: Status.UnknownError, values: NO_VALUES });
/** The answer to a command while the emergency stop is latched (bodylink's status 7). */
const ESTOP_REFUSED: TnyReply = Object.freeze({ status: Status.EmergencyStop, values: NO_VALUES });

const K = TNY_TYPED;
const APPLIED: Tny360CommandResult = Object.freeze({ ok: true, forwarded: false });
const FORWARDED: Tny360CommandResult = Object.freeze({ ok: true, forwarded: true });
/** The smooth sequences take no values. */
const NO_CHECK: TnyCheck = Object.freeze({ problem: null, limits: () => true });

export class Tny360Robot implements RobotBase, Tny360Body, CycleRobot<Tny360State, Tny360Commands>, TnyAdmissionContext {
  readonly kind = "tny360" as const;
  readonly clock: Clock;
  readonly authority: Authority;
  readonly loop: CycleLoop;
  /** The driver, the body seam (src/drivers/tny360/): the simulator or a real robot. */
  readonly driver: TnyDriver;
  /** Owns the transitions and the cycle (src/rt/lifecycle.ts). */
  readonly lifecycle: Lifecycle<Tny360State, Tny360Commands>;
  /**
   * The commands validated since the driver's last write (typed values, merged: commands.ts),
   * under the lease generation they were admitted in; the driver applies them in its next `write`.
   */
  readonly output = new Tny360Commands();
  readonly periodMs: number;
  /** "sim" (bodylink's simulator) or "remote" (a real robot over WebSocket). */
  readonly source: "sim" | "remote";
  /** Live state, the driver's newest copied in place every cycle (copy before handing out: `snapshot()`). */
  readonly state: Tny360State;
  /** The simulator, when `source` is "sim". */
  readonly sim: SimTny360 | null;
  /** The simulator's time against the wall (health's `sim`). */
  readonly #simTime = new SimTimeMeter();
  /** The real robot's protocol client (its link), when `source` is "remote". */
  readonly remote: RemoteTny360 | null;
  /** Joint names, index = JointId (the order of every joint array). */
  readonly jointNames = JOINT_NAMES;
  readonly defaultStopCategory: StopCategory = TNY360_DEFAULT_STOP_CATEGORY;
  /** Leg names, index = leg id (the order of `paws`). */
  readonly legNames = LEG_NAMES;

  /** staleCommands: validated commands (a worker core's mailbox) dropped because their lease had ended or the e-stop latched. */
  readonly #counters = { refusedCommands: 0, invalidCommands: 0, failedCommands: 0, lateCycles: 0, velocityClears: 0, staleCommands: 0 };
  #velocityLeaseId: string | null = null;
  #lastRefusalLogMs = Number.NEGATIVE_INFINITY;
  #refusalsNotLogged = 0;
  #safetyReason: string | null = null;
  #safety: SafetyCode = "none";
  /** Why the body is in its safe state: the code and its words change together. */
  #setSafety(code: SafetyCode, text: string | null): void {
    this.#safety = code;
    this.#safetyReason = text;
  }
  #stopped = false;

  private constructor(opts: Tny360RobotOptions) {
    this.clock = opts.clock ?? new MonotonicClock();
    this.authority = new Authority(this.clock);
    this.driver =
      opts.driver ??
      (opts.host
        ? new TnyRemoteDriver({
            host: opts.host,
            port: opts.port ?? TNY_DEFAULT_PORT,
            clock: this.clock,
            pollHz: opts.pollHz,
            requestTimeoutMs: opts.requestTimeoutMs,
            WebSocket: opts.WebSocket,
            velocityTimeoutMs: opts.velocityTimeoutMs,
            velocityDecayMs: opts.velocityDecayMs,
            connectWaitMs: opts.connectWaitMs,
          })
        : new TnySimDriver({
            seed: opts.seed,
            velocityTimeoutMs: opts.velocityTimeoutMs,
            velocityDecayMs: opts.velocityDecayMs,
            clock: this.clock,
            ...(opts.simModel ? { model: opts.simModel } : {}),
          }));
    this.source = this.driver.source;
    this.state = new Tny360State(this.source);
    this.driver.read(this.clock.nowMs(), this.state); // what the body is before the first cycle
    this.sim = this.driver instanceof TnySimDriver ? this.driver.sim : null;
    this.remote = this.driver instanceof TnyRemoteDriver ? this.driver.remote : null;
    this.periodMs = this.driver.periodMs;
    this.lifecycle = new Lifecycle(this.driver, this, this.clock, opts.youngGcEveryMs === undefined ? {} : { youngGcEveryMs: opts.youngGcEveryMs });
    this.loop = this.lifecycle.loop;
    this.authority.bindCycles(this.loop, this.periodMs);
    this.authority.on("acquired", () => {
      this.#setSafety("none", null);
    });
  }

  /** Build a robot (not started). With `host`, the driver connects in `start()`. */
  static async create(opts: Tny360RobotOptions = {}): Promise<Tny360Robot> {
    const robot = new Tny360Robot(opts);
    // The simulator has no link to open: inactive at once (`loop.step()` works); a real robot connects in start().
    if (robot.source === "sim") await robot.lifecycle.configure();
    return robot;
  }

  /** Start the cycle (and, for a real robot, the link; resolves once connected or after `connectWaitMs`). Again after `stop()`. */
  async start(): Promise<void> {
    await this.lifecycle.start();
  }

  /** Velocity 0, stop the cycle, answer pending requests, close the link. Idempotent. */
  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** `stop()`, and nothing starts again. */
  shutdown(): Promise<void> {
    return this.lifecycle.shutdown();
  }

  // ---- lifecycle hooks (prepare side) ------------------------------------------------------

  onConfigured(): void {
    this.#stopped = false;
  }

  onDeactivating(): void {
    this.driver.clearVelocity();
    this.#velocityLeaseId = null;
  }

  onClosed(): void {
    this.#stopped = true;
    this.state.link = "stopped";
    this.authority.revoke();
  }

  onDriverError(message: string): void {
    this.driver.clearVelocity();
    this.#velocityLeaseId = null;
    this.authority.revoke(); // after a restart, nothing moves until a client commands again
    this.state.link = "lost";
    this.#setSafety("link_lost", `body link lost: ${message}`);
  }

  onLate(): void {
    this.#counters.lateCycles++;
  }

  health(opts: HealthOptions = {}): RobotHealth {
    const h = this.authority.holder();
    const d = this.driver.counters;
    return {
      body: "tny360",
      link: this.#stopped ? "stopped" : this.state.link,
      safety: this.#safety,
      safetyReason: this.#safetyReason,
      cycle: this.loop.summary(opts.windowCycles),
      errors: {
        refusedCommands: this.#counters.refusedCommands,
        invalidCommands: this.#counters.invalidCommands,
        failedCommands: this.#counters.failedCommands + d.forwardErrors,
        lateCycles: this.#counters.lateCycles,
        velocityClears: this.#counters.velocityClears,
        staleCommands: this.#counters.staleCommands,
        pollErrors: d.pollErrors,
        robotErrorEvents: this.state.errors.count,
      },
      control: h ? { owner: h.owner, source: h.source, expiresAtEpochMs: h.expiresAtEpochMs } : null,
      estop: this.authority.estop,
      sim: this.sim ? this.#simTime.health(this.clock, this.sim.model.kind) : null,
    };
  }

  /** After every cycle (perform side; keep it cheap). Returns an unsubscribe. */
  onCycle(listener: (seq: number, nowMs: number) => void): () => void {
    return this.loop.onCycle(listener);
  }

  // -------------------------------------------------------------------------------------------
  // Reads (no lease). Every getter copies; null until the first state.

  /** Frozen, JSON-ready copy of the whole state; null before the first valid state. */
  snapshot(): Tny360Snapshot | null {
    return this.state.valid ? snapshotTny360State(this.state) : null;
  }

  /** The cycle/poll the current values come from (cheap; null before the first valid state). */
  stamp(): { readonly seq: number; readonly timestampMs: number; readonly epochMs: number; readonly link: Tny360Snapshot["link"] } | null {
    const s = this.state;
    return s.valid ? { seq: s.seq, timestampMs: s.timestampMs, epochMs: s.epochMs, link: this.#stopped ? "stopped" : s.link } : null;
  }

  /**
   * Joints in firmware order (JointId 0–13, names in `jointNames`): measured and target angles
   * (rad), velocities (rad/s), efforts (N·m, null on a real robot), enable bits, servo
   * temperatures (°C: always null, the servos have no sensor).
   */
  joints(): Tny360JointsSnapshot | null {
    return this.state.valid ? snapshotJoints(this.state) : null;
  }

  /** IMU, body frame: orientation (roll, pitch, yaw rad), angular velocity (rad/s), specific force (m/s²), down vector. */
  imu(): Tny360ImuSnapshot | null {
    return this.state.valid ? snapshotImu(this.state) : null;
  }

  /** Paw contacts, legs FL, BL, BR, FR. */
  paws(): Tny360PawsSnapshot | null {
    return this.state.valid ? snapshotPaws(this.state) : null;
  }

  /** Odometry in the start frame (m, rad) and its velocities in the robot frame (m/s, rad/s). */
  odometry(): Tny360OdometrySnapshot | null {
    return this.state.valid ? snapshotOdometry(this.state) : null;
  }

  /** Target velocity, posture, measured height, gait, enable bits, smooth sequence phase. */
  body(): Tny360BodySnapshot | null {
    return this.state.valid ? snapshotBody(this.state) : null;
  }

  /** Battery bus voltage (V), current (A), power (W). */
  power(): Tny360PowerSnapshot | null {
    return this.state.valid ? snapshotPower(this.state) : null;
  }

  /** The robot's error ring: count, newest event id and its error id 0xMMSSCCVV. */
  errors(): Tny360ErrorsSnapshot | null {
    return this.state.valid ? snapshotErrors(this.state) : null;
  }

  // -------------------------------------------------------------------------------------------
  // The wire path (TNY server)

  /** Whether the body behind this robot serves `action` (the simulator's table column; a real robot: all). */
  serves(action: ActionSpec): boolean {
    return this.driver.serves(action);
  }

  /**
   * Answer one decoded request for the TNY server. Commands need `leaseId` to hold control; a
   * refused command answers UnknownError (4) and the reason goes to the robot's log ring
   * (system.getLogLine). May resolve later (RPC actions, real robot). `nowMs`: when the request
   * arrived, on this robot's clock (the server reads it once per frame; the lease check and the
   * body's command stamp use it); omitted, each reads the clock when it needs it.
   */
  request(leaseId: string | null, module: ModuleSpec, action: ActionSpec, args: readonly unknown[], nowMs?: number): TnyReply | Promise<TnyReply> {
    if (this.#stopped) return { status: Status.UnknownError, values: NO_VALUES };
    if (action.command && this.authority.latched && this.serves(action)) {
      this.#counters.refusedCommands++;
      this.#logRefusal(leaseId, module, action);
      return ESTOP_REFUSED;
    }
    if (action.command && !(leaseId && this.authority.isHeld(leaseId, nowMs)) && this.serves(action)) {
      this.#counters.refusedCommands++;
      this.#logRefusal(leaseId, module, action);
      return REFUSED;
    }
    this.#flush(); // the typed commands admitted before this request reach the body before it
    const r = this.driver.handle(module, action, args, nowMs);
    if (action !== K.setVelocity.action) return r;
    // the velocity belongs to the lease that commanded it (its end clears it)
    if (r instanceof Promise) return r.then((reply) => this.#velocityBy(leaseId, reply));
    return this.#velocityBy(leaseId, r);
  }

  #velocityBy(leaseId: string | null, reply: TnyReply): TnyReply {
    if (reply.status === Status.Ok) this.#velocityLeaseId = leaseId;
    return reply;
  }

  /**
   * Write why a command was refused to the log ring, at most once a second (a client that keeps
   * commanding without control must not flush every other line out of the 32-line ring).
   */
  #logRefusal(leaseId: string | null, module: ModuleSpec, action: ActionSpec): void {
    const now = this.clock.nowMs();
    if (now - this.#lastRefusalLogMs < 1000) {
      this.#refusalsNotLogged++;
      return;
    }
    const more = this.#refusalsNotLogged > 0 ? ` (${this.#refusalsNotLogged} more refused since the last line)` : "";
    this.#lastRefusalLogMs = now;
    this.#refusalsNotLogged = 0;
    this.logLine(LogLevel.Warning, "tny", `${module.name}.${action.name} refused: ${this.#leaseError(leaseId)?.message ?? "no control"}${more}`);
  }

  /** Add a line to the robot's log ring (simulator only; a real robot's ring is its own). */
  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.driver.logLine(level, tag, message);
  }

  // -------------------------------------------------------------------------------------------
  // Typed commands (robot API, CLI). Synchronous: the simulator applies them now (the next tick
  // acts on them); a real robot gets them forwarded (`forwarded: true`), its refusals are counted
  // in health().errors.failedCommands.

  /** Body velocity: x, y m/s and yaw rad/s; renew within `velocityTimeoutMs` or it decays. */
  setVelocity(leaseId: string, xMS: number, yMS: number, yawRadS: number, clearOverrides = true): Tny360CommandResult {
    const refused = this.#admit(leaseId, K.setVelocity, TNY360_CHECKS.velocity(xMS, yMS, yawRadS, clearOverrides));
    if (refused) return refused;
    mergeVelocity(this.output, xMS, yMS, yawRadS, clearOverrides);
    return this.#accepted;
  }

  /** Body posture (position m, Euler XYZ rad). */
  setPosture(leaseId: string, p: Tny360Posture, clearOverrides = true): Tny360CommandResult {
    const refused = this.#admit(leaseId, K.setPosture, TNY360_CHECKS.posture(p, clearOverrides));
    if (refused) return refused;
    mergePosture(this.output, p, clearOverrides);
    return this.#accepted;
  }

  /** Enable bits over JointId (bit i = joint i; 0x0FFF = the 12 leg joints). */
  setEnabledMask(leaseId: string, mask: number): Tny360CommandResult {
    const refused = this.#admit(leaseId, K.setEnabled, TNY360_CHECKS.enabledMask(mask));
    if (refused) return refused;
    mergeEnabledMask(this.output, mask);
    return this.#accepted;
  }

  setGait(leaseId: string, gait: number | GaitName): Tny360CommandResult {
    const g = typeof gait === "string" ? GaitType[gait] : gait;
    const refused = this.#admit(leaseId, K.setGait, TNY360_CHECKS.gait(g));
    if (refused) return refused;
    mergeGait(this.output, g);
    return this.#accepted;
  }

  /** One joint's absolute override, rad (outside its limits: refused, old target kept). */
  setJointAngle(leaseId: string, jointId: number, angleRad: number): Tny360CommandResult {
    const refused = this.#admit(leaseId, K.setAngle, TNY360_CHECKS.jointAngle(jointId, angleRad));
    if (refused) return refused;
    mergeJointAngle(this.output, jointId, angleRad);
    return this.#accepted;
  }

  /** All 14 joints' absolute overrides, rad, JointId order (any value outside its limits refuses all). */
  setJointAngles(leaseId: string, anglesRad: ArrayLike<number>): Tny360CommandResult {
    const refused = this.#admit(leaseId, K.setJointAngles, TNY360_CHECKS.jointAngles(anglesRad));
    if (refused) return refused;
    mergeJointAngles(this.output, anglesRad);
    return this.#accepted;
  }

  /** A leg's absolute foot override in the planner frame, m: whether the leg reaches it is the body's answer, now. */
  setLegPosition(leaseId: string, legId: number, xM: number, yM: number, zM: number, clearOverrides = true): Tny360CommandResult {
    const r = this.#run(leaseId, K.setLegPosition, TNY360_CHECKS.legPosition(legId, xM, yM, zM, clearOverrides), "leg.setPosition", [legId, xM, yM, zM, clearOverrides]);
    return r.ok ? { ok: true, forwarded: r.forwarded } : r;
  }

  /** Admitted: the simulator applies it at the next cycle; a real robot gets it forwarded then. */
  get #accepted(): Tny360CommandResult {
    return this.source === "remote" ? FORWARDED : APPLIED;
  }

  /** The one admission (tny360-checks.ts), counted; opens the output's merge under the current generation. */
  #admit(leaseId: string, spec: TnySpec, check: TnyCheck): TnyRefusal | null {
    const denied = tnyAdmission(spec, leaseId, check, this);
    if (denied) {
      if (denied.counter) this.#counters[denied.counter]++;
      return denied.refusal;
    }
    openTny360Merge(this.output, this.authority.generation);
    return null;
  }

  /** TnyAdmissionContext: whether the runtime stopped. */
  get stopped(): boolean {
    return this.#stopped;
  }
  /** TnyAdmissionContext: why the body is out of reach. */
  get unavailable(): string | null {
    return this.driver.unavailable();
  }
  /** TnyAdmissionContext: the simulator answers by its limits; a real robot by its own. */
  get simLimits(): boolean {
    return this.source === "sim";
  }

  /**
   * Take typed commands a host validated (the lease, the values, the simulator's limits) and posted
   * to this core's mailbox (src/host/tny360-host.ts) into the output the driver applies next.
   * Dropped (errors.staleCommands) when control changed hands since (`generation`) or the e-stop
   * latched; counted in failedCommands when the runtime stopped or the link went down since.
   * Perform side (the cycle's input): merged in place.
   */
  applyValidated(c: Tny360Commands, generation: number): boolean {
    if (this.authority.activeHolder() === null || generation !== this.authority.generation || this.authority.latched) {
      this.#counters.staleCommands++;
      return false;
    }
    if (this.#stopped || this.driver.unavailable() !== null) {
      this.#counters.failedCommands++;
      return false;
    }
    openTny360Merge(this.output, generation);
    mergeTny360Commands(c, this.output);
    return true;
  }

  /**
   * The output's pending commands, if they may still reach the body: dropped (staleCommands) when
   * their lease ended or the e-stop latched since. A velocity among them belongs to the holder's
   * lease (its end clears it). Perform side.
   */
  #checkOutput(): boolean {
    const out = this.output;
    if (tny360Keys(out) === 0) return false;
    const holder = this.authority.activeHolder();
    if (holder === null || out.header[TNY360_COMMAND_HEADER.generation] !== this.authority.generation >>> 0 || this.authority.latched) {
      clearTny360Commands(out);
      this.#counters.staleCommands++;
      return false;
    }
    if (tny360Keys(out) & TNY360_COMMAND_KEY.velocity) this.#velocityLeaseId = holder.id;
    return true;
  }

  /** Before a request that must come after the commands admitted before it: the driver applies them now. */
  #flush(): void {
    if (this.#stopped || !this.#checkOutput()) return;
    this.#counters.invalidCommands += this.driver.apply(this.output);
  }

  /** Smooth enable (REST at 5 %, STAND at 10 %); the estimate comes from the real distances. */
  enableSmooth(leaseId: string): Tny360SmoothResult {
    const r = this.#run(leaseId, K.enableSmooth, NO_CHECK, "body.enableSmooth", []);
    if (!r.ok) return r;
    // a real robot answers later: estimate locally from the polled angles with the same rule
    const estimatedS = r.forwarded ? smoothEnableEstimateS(this.state.joints.positionRad) : (r.values[0] as number);
    return { ok: true, forwarded: r.forwarded, estimatedS };
  }

  /** Smooth disable (REST at 10 %, then the 12 leg joints off). */
  disableSmooth(leaseId: string): Tny360SmoothResult {
    const r = this.#run(leaseId, K.disableSmooth, NO_CHECK, "body.disableSmooth", []);
    if (!r.ok) return r;
    const estimatedS = r.forwarded ? smoothDisableEstimateS(this.state.joints.positionRad, this.state.joints.enabled) : (r.values[0] as number);
    return { ok: true, forwarded: r.forwarded, estimatedS };
  }

  /**
   * Put the physics simulator's world into `pose` (POST /v1/sim/reset; SimTny360.resetWorld says
   * what each pose leaves on): under the lease and e-stop rules of a command, after the commands
   * admitted before it; refused (404 BL_ERR_CMD_UNSUPPORTED) on a real robot and on the kinematic
   * simulator, which has no world. The state shows the pose at once. Prepare side.
   */
  simReset(leaseId: string, pose: Tny360SimPose): SimResetResult {
    const sim = this.sim;
    if (!sim?.model.world) {
      const on = sim ? "tny360 on the kinematic simulator" : "tny360 on a real robot";
      return { ok: false, error: new BodylinkError("BL_ERR_CMD_UNSUPPORTED", on, "physics world to reset (serve --body tny360 --sim physics)") };
    }
    const denied = leaseError(this.authority, leaseId) ?? tnyLinkRefusal(this.#stopped, null)?.error ?? null;
    if (denied) {
      this.#counters.refusedCommands++;
      return { ok: false, error: denied };
    }
    this.#flush();
    sim.resetWorld(pose);
    this.#velocityLeaseId = null;
    const now = this.clock.nowMs();
    this.account(now, this.driver.read(now, this.state));
    return { ok: true, timeS: sim.timeS };
  }

  /**
   * Emergency stop, no lease needed, latched until `resetEstop`. Both categories first zero the
   * velocity and clear joint overrides and smooth sequences. Category 1 (the default) then runs the
   * smooth disable (REST at 10 %, then the leg joints off: the body sits down); category 0 turns
   * every joint off at once (the body drops). Control is revoked; commands are refused until the reset.
   */
  estop(req: EstopRequest): EstopState {
    const category = req.category ?? this.defaultStopCategory;
    const first = this.authority.engageEstop(category, req.source, req.reason);
    this.#velocityLeaseId = null;
    clearTny360Commands(this.output); // nothing admitted before the stop reaches the body after it
    const reason = this.authority.estop.reason ?? "";
    if (first) this.driver.emergencyStop(reason);
    const e = this.authority.estop;
    if (e.category === 0) this.#unlessStopped("body.setEnabled", [0]);
    else if (first) {
      if ((this.state.body.enabledMask & TNY_LEG_MASK) === 0) this.authority.setEstopPhase("cut");
      else this.#unlessStopped("body.disableSmooth", []);
    }
    this.#setSafety("estop", describeEstop(this.authority.estop));
    return this.authority.estop;
  }

  /** Shorthand for `estop({ source: "local", reason })`. */
  emergencyStop(reason: string, category?: StopCategory): EstopState {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }

  /** Release the latch. Nothing moves until a client takes a lease and commands (e.g. enableSmooth). */
  resetEstop(req: EstopResetRequest): EstopState {
    if (this.authority.resetEstop(req)) {
      this.#setSafety("none", null);
    }
    return this.authority.estop;
  }

  estopState(): EstopState {
    return this.authority.estop;
  }

  /** A safety action of the runtime itself (no lease): straight to the body. */
  #unlessStopped<Q extends TnyRequestKey>(key: Q, args: KeyDecodedArgs<Q>): void {
    if (this.#stopped) return;
    try {
      // the simulator at once (a safety action does not wait for the next tick); a real robot when it answers
      this.driver.request(key, args);
    } catch {
      // the body refused (e.g. its control loop is stopped): the latch holds regardless
    }
  }

  // -------------------------------------------------------------------------------------------

  /** An action whose answer is the body's (now, or forwarded): admitted, after the commands before it. */
  #run<Q extends TnyRequestKey>(
    leaseId: string,
    spec: TnySpec,
    check: TnyCheck,
    key: Q,
    args: KeyDecodedArgs<Q>,
  ): { readonly ok: true; readonly forwarded: boolean; readonly values: readonly unknown[] } | TnyRefusal {
    const denied = tnyAdmission(spec, leaseId, check, this);
    if (denied) {
      if (denied.counter) this.#counters[denied.counter]++;
      return denied.refusal;
    }
    this.#flush();
    const r = this.driver.request(key, args);
    if (r === null) return { ok: true, forwarded: true, values: NO_VALUES };
    if (r.status !== Status.Ok) {
      this.#counters.invalidCommands++;
      return tnyBodyRefusal(spec, r.status);
    }
    return { ok: true, forwarded: false, values: r.values };
  }

  #leaseError(leaseId: string | null): BodylinkError | null {
    return leaseError(this.authority, leaseId);
  }

  /** Perform side, before the body's tick: the lease rule. */
  update(_nowMs: number): void {
    this.#checkOutput(); // the driver's write applies what is still valid
    const vl = this.#velocityLeaseId;
    if (vl !== null && !this.authority.isHeld(vl)) {
      // the commanding client is gone (connection closed, lease expired or revoked): stop now
      this.#velocityLeaseId = null;
      this.#counters.velocityClears++;
      this.driver.clearVelocity();
      this.logLine(LogLevel.Warning, "control", "the lease that commanded the velocity is gone: velocity cleared");
    }
  }

  /** Perform side, after the tick (simulator) or a completed poll (real robot): the estop phase, the epoch stamp. */
  account(nowMs: number, code: number): void {
    // A category-1 stop is done once the smooth disable has finished and the legs are off.
    if (this.authority.estop.phase === "settling" && this.state.body.smooth === "idle" && (this.state.body.enabledMask & TNY_LEG_MASK) === 0) {
      this.authority.setEstopPhase("cut");
      this.#setSafety("estop", describeEstop(this.authority.estop));
    }
    if (code === IO.Fresh) this.state.epochMs = this.clock.epochMs() + (this.state.timestampMs - nowMs);
    if (this.sim) {
      this.#simTime.sample(this.sim.timeS);
      if (this.state.simWorld[SIM_WORLD.present] === 1) this.state.simWorld[SIM_WORLD.realTimeFactor] = this.#simTime.realTimeFactor();
    }
  }
}

/**
 * What the robot API and the TNY-360 server serve of a TNY-360: the core in this thread
 * (Tny360Robot) or in a worker (Tny360Host); both are checked against it at compile time. The
 * typed commands a host validates and posts to its core's mailbox answer at once; those whose
 * answer needs the body's own state (the smooth sequences' estimates, a foot the leg must reach
 * under the current posture) may answer asynchronously.
 */
export interface Tny360Body
  extends BodyRuntime,
    Pick<Tny360Robot, "onCycle" | "state" | "snapshot" | "setEnabledMask" | "setGait" | "setJointAngle" | "setJointAngles" | "setPosture" | "setVelocity"> {
  readonly kind: "tny360";
  enableSmooth(leaseId: string): Awaitable<Tny360SmoothResult>;
  disableSmooth(leaseId: string): Awaitable<Tny360SmoothResult>;
  setLegPosition(leaseId: string, legId: number, xM: number, yM: number, zM: number, clearOverrides?: boolean): Awaitable<Tny360CommandResult>;
  simReset(leaseId: string, pose: Tny360SimPose): Awaitable<SimResetResult>;
}
