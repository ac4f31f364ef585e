/**
 * The NAO v6 runtime: one chest-board link, one 12 ms cycle, one state, one command, one authority.
 *
 * The link is a NaoDriver (src/drivers/nao/: the chest board over USB or simulated; any other
 * source of decoded NaoState fits the same seam), run by the one lifecycle wrapper (src/rt/
 * lifecycle.ts), which owns the transitions: `configure()` (the driver reads the preference block,
 * CRC-checked, and runs the board handshake), `start()` (the loop runs; commands flow while a lease
 * is held), `stop()` (control revoked, a last frame with stiffness 0, link closed; `start()` again
 * configures anew), `shutdown()` (for good).
 *
 * The cycle (perform side, no allocation), as the wrapper runs it: read (the answer that completed
 * since the last cycle) → arbitrate (lease, smooth motion, safety ramp) → write (encode the command
 * frame in place, exchange) → read (a simulator answers at once) → publish.
 *
 * Safety, like HAL's DcmLostPlugin: stiffness ramps to 0 over `stiffnessRampMs` when nobody holds
 * control, when the link fails `linkLostAfter` exchanges in a row, or when a cycle starts more
 * than `safetyLateBoundMs` late. `state.safetyReason` says why. Once the cause has been gone for
 * `recoveryMs`, stiffness ramps back up at the same rate (never a jump).
 *
 * Emergency stop (estop.ts; latched in the Authority until an explicit reset), default category 1:
 *   category 0: stiffness 0 on the next frame (a standing NAO falls);
 *   category 1: from where it is into the crouched rest posture within `NAO_SETTLE_MAX_MS`, each joint
 *               at no more than the stiffness it had (a limp joint stays limp), then stiffness 0. A link
 *               fault or a late cycle during the crouch cuts at once (category 0).
 * After a reset stiffness stays 0 until a client takes a lease and commands; then it ramps up.
 */
import { type CommandProblem, LED_GROUP_NAMES, NO_COMMAND_PROBLEMS, NaoCommands, type NaoCommandUpdate, applyCommandUpdate } from "../bodies/nao/commands.js";
import { NAO_COMMAND_KEY } from "../bodies/nao/layout.js";
import { REST_POSTURE_RAD, STAND_POSTURE_RAD } from "../bodies/nao/joints.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import { NAO_CONTACT_LINKS } from "../bodies/nao/mjcf.js";
import { NaoState, SIM_WORLD } from "../bodies/nao/state.js";
import { leaseEndCode, type SafetyCode } from "../bodies/safety.js";
import { IO } from "../drivers/driver.js";
import { ChestboardDriver, simulatedChestboard } from "../drivers/nao/chestboard.js";
import { NAO_IO, type NaoDriver, type NaoOutput } from "../drivers/nao/driver.js";
import { BodylinkError } from "../errors.js";
import { type CycleRobot, Lifecycle, PHASE, type Phase } from "../rt/lifecycle.js";
import type { SimChestboard } from "../sim/nao/chestboard.js";
import type { NaoSimPose } from "../bodies/nao/sim-world.js";
import { writeSimWorld } from "../bodies/sim-world.js";
import type { NaoBodyModel } from "../sim/nao/model.js";
import type { ChestboardTransport } from "../transport/chestboard.js";
import type { BoardReport, ChestboardLink } from "../transport/chestboard-link.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { Authority, leaseError } from "./authority.js";
import { SimTimeMeter } from "./sim-time.js";
import { type Clock, MonotonicClock } from "./clock.js";
import { describeEstop, type EstopRequest, type EstopResetRequest, type EstopState, type StopCategory } from "./estop.js";
import type { CycleLoop } from "./loop.js";
import type { NaoBody } from "./nao-body.js";
import type { HealthOptions, RobotBase, RobotHealth, SimResetResult } from "./robot.js";

export interface NaoRobotOptions {
  /**
   * The body link. Defaults to the chest board over `transport`, or over a simulated chest board
   * (seeded with `seed`, driven by `clock`) when no transport is given.
   */
  driver?: NaoDriver;
  /** The chest board's transport (or a function opening it: called again when a stopped runtime starts). */
  transport?: ChestboardTransport | (() => ChestboardTransport | Promise<ChestboardTransport>);
  clock?: Clock;
  /** Accepted board configuration versions. Defaults to [10, 11]. */
  acceptBoardVersions?: readonly number[];
  /** Simulator seed. Defaults to 1. */
  seed?: number;
  /** The simulated body's mechanics (sim/nao/model.ts); defaults to the kinematic puppet. */
  simModel?: NaoBodyModel;
  /**
   * With `driver` or `transport`: the simulated chest board under them (a worker core wraps it for
   * recording), so the state carries its world and POST /v1/sim/reset reaches it. Defaults to none.
   */
  sim?: SimChestboard;
  /** Ramp time from full stiffness to 0 (and back), ms. Defaults to 500. */
  stiffnessRampMs?: number;
  /** Consecutive failed exchanges before the link counts as lost. Defaults to 5 (60 ms). */
  linkLostAfter?: number;
  /** A cycle starting later than this after its deadline triggers the safety ramp, ms. Defaults to 24 (two periods). */
  safetyLateBoundMs?: number;
  /** Fault-free time before stiffness ramps back up, ms. Defaults to 250. */
  recoveryMs?: number;
  /**
   * Wraps the transport before anything is read through it (the recorder's TappedChestboard sees
   * the preference reads and the handshake too). Defaults to none.
   */
  wrapTransport?: (transport: ChestboardTransport) => ChestboardTransport;
  /** See LoopOptions.youngGcEveryMs: collect the young generation between cycles this often, ms. Defaults to 0 (V8 decides); `bodylink serve` sets 100. */
  youngGcEveryMs?: number;
}

export const NAO_PERIOD_MS = 12;
/** Joint speed used to estimate smooth enable/disable durations, rad/s. */
export const SMOOTH_SPEED_RADS = 0.6;
/** Shortest smooth motion, s (the stiffness ramp needs this long). */
export const SMOOTH_MIN_S = 1.0;
/** Stiffness held during smooth motions. */
export const SMOOTH_STIFFNESS = 0.8;
/** Final stiffness fade of smooth disable, s. */
export const SMOOTH_FADE_S = 0.5;

/** The NAO's documented default stop category: crouch, then cut (a fall is the worse outcome). */
export const NAO_DEFAULT_STOP_CATEGORY: StopCategory = 1;
/** A category-1 stop reaches the crouch within this bound, ms, whatever the distance. */
export const NAO_SETTLE_MAX_MS = 2000;
/** Final stiffness fade of a category-1 stop once crouched, ms (included in the bound above). */
export const NAO_SETTLE_FADE_MS = 300;

type LeaseCheck = { ok: true } | { ok: false; error: BodylinkError };
const LEASE_OK: LeaseCheck = Object.freeze({ ok: true });
/** A command whose every key applied (shared: the LoLA server's steady state allocates no answer). */
const COMMAND_APPLIED: { ok: true; problems: CommandProblem[] } = Object.freeze({ ok: true, problems: NO_COMMAND_PROBLEMS });

interface Motion {
  /** "settle": a category-1 emergency stop's crouch (owned by the runtime, not a lease). */
  kind: "enable" | "disable" | "settle";
  leaseId: string;
  t0Ms: number;
  moveMs: number;
  fadeMs: number;
  readonly from: Float64Array;
  readonly to: Float64Array;
  readonly fromStiffness: Float64Array;
}

export class NaoRobot implements RobotBase, NaoBody, CycleRobot<NaoState, NaoOutput> {
  readonly kind = "nao" as const;
  readonly periodMs = NAO_PERIOD_MS;
  readonly clock: Clock;
  readonly authority: Authority;
  readonly loop: CycleLoop;
  readonly state = new NaoState();
  /** The driver, the body seam (the chest board's, simulated or USB, or another NaoDriver). */
  readonly driver: NaoDriver;
  /** Owns the transitions and the cycle (src/rt/lifecycle.ts). */
  readonly lifecycle: Lifecycle<NaoState, NaoOutput>;
  /** The simulated chest board when running on the simulator (fault hooks for tests), else null. */
  readonly sim: SimChestboard | null;
  /** The simulator's time against the wall (health's `sim`, the physics world's real-time factor). */
  readonly #simTime = new SimTimeMeter();
  readonly acceptBoardVersions: readonly number[];

  /** What the controlling client asked for. */
  readonly #requested = new NaoCommands();
  /** What the driver sends every cycle: the requested targets and the safety ramp's scale (#f's slot 0). */
  readonly output: NaoOutput;
  /**
   * Doubles the cycle rewrites: [0] stiffness scale 0..1 (the safety ramp), [1] time of the last
   * fault, ms, [2] epoch − monotonic clock offset, ms. NOTE: a typed array, because V8 may box a double assigned to an object field.
   */
  readonly #f = new Float64Array([0, Number.NEGATIVE_INFINITY, 0]);
  /** The last fresh state's positions and its time, ms (NaN: none since the state was valid), for `state.velocity`. */
  readonly #prevPosition = new Float32Array(25);
  readonly #prevAtMs = Float64Array.of(Number.NaN);
  readonly #rampPerMs: number;
  readonly #linkLostAfter: number;
  readonly #safetyLateBoundMs: number;
  readonly #recoveryMs: number;
  #failures = 0;
  #faultReason: string | null = null;
  #faultCode: SafetyCode = "none";
  /** The lease whose command is in #requested: a new holder's stiffness flows only once it commands. */
  #commandLease: string | null = null;
  /** Why control last ended ("control expired: …"), until someone takes it again. */
  #releaseReason: string | null = null;
  #releaseCode: SafetyCode = "no_holder";
  /** True after a fault until stiffness is back to full: regain it on the ramp, never in one jump. */
  #recovering = false;
  #motion: Motion | null = null;
  readonly defaultStopCategory: StopCategory = NAO_DEFAULT_STOP_CATEGORY;
  /** Monotonic time the current emergency stop engaged (faults after it cut a category-1 stop). */
  #estopAtMs = Number.NEGATIVE_INFINITY;
  /** lateRamps: cycles that started so late (> safetyLateBoundMs) that the safety ramp engaged ("cycle ran late"). */
  /** staleCommands: validated commands (a worker core's mailbox) dropped because their lease had ended. */
  readonly #errors = { unacknowledged: 0, noAnswer: 0, writeFailed: 0, readFailed: 0, badFrames: 0, overruns: 0, lateCycles: 0, lateRamps: 0, linkDown: 0, staleCommands: 0 };

  private constructor(opts: NaoRobotOptions) {
    this.clock = opts.clock ?? new MonotonicClock();
    this.authority = new Authority(this.clock);
    this.acceptBoardVersions = opts.acceptBoardVersions ?? HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS;
    this.sim = opts.driver || opts.transport ? (opts.sim ?? null) : simulatedChestboard({ seed: opts.seed ?? 1, clock: this.clock, ...(opts.simModel ? { model: opts.simModel } : {}) });
    const transport = opts.transport ?? this.sim!;
    const wrap = opts.wrapTransport;
    this.driver =
      opts.driver ??
      new ChestboardDriver({
        transport: !wrap ? transport : typeof transport === "function" ? async () => wrap(await transport()) : wrap(transport),
        acceptBoardVersions: this.acceptBoardVersions,
      });
    this.output = { commands: this.#requested, scale: this.#f.subarray(0, 1), sentStiffness: this.state.stiffness };
    this.#rampPerMs = 1 / Math.max(1, opts.stiffnessRampMs ?? 500);
    this.#linkLostAfter = opts.linkLostAfter ?? 5;
    this.#safetyLateBoundMs = opts.safetyLateBoundMs ?? 2 * NAO_PERIOD_MS;
    this.#recoveryMs = opts.recoveryMs ?? 250;
    this.lifecycle = new Lifecycle(this.driver, this, this.clock, {
      lateBoundMs: NAO_PERIOD_MS / 2,
      ...(opts.youngGcEveryMs === undefined ? {} : { youngGcEveryMs: opts.youngGcEveryMs }),
      // A link with its own clock (an upstream LoLA) starts each cycle.
      ...(this.driver.pacer ? { pacer: this.driver.pacer } : {}),
    });
    this.loop = this.lifecycle.loop;
    this.authority.bindCycles(this.loop, NAO_PERIOD_MS);
    this.#requested.setIdle();
    this.authority.on("released", (info, why) => {
      this.#cancelMotion();
      this.#releaseReason = `control ${why === "expired" ? "expired" : why === "revoked" ? "revoked" : "released"} (${info.owner})`;
      this.#releaseCode = leaseEndCode(why);
    });
    this.authority.on("acquired", () => {
      this.#releaseReason = null;
      this.#releaseCode = "no_holder";
    });
    this.authority.on("reset", () => {
      this.#releaseReason = "emergency stop reset: take control and command to move";
      this.#releaseCode = "estop_reset";
      this.#commandLease = null;
    });
  }

  /** Create a runtime (not started). */
  static async create(opts: NaoRobotOptions = {}): Promise<NaoRobot> {
    return new NaoRobot(opts);
  }

  /** The body's preferences, once configured (null before). */
  get prefs(): NaoPreferences | null {
    return this.driver.prefs;
  }

  /** Why this body link never has preferences (an upstream LoLA), or null: they come with configure. */
  get prefsUnavailable(): string | null {
    return this.driver.prefsUnavailable ?? null;
  }

  /** The motor-board handshake's result per board, once configured. */
  get boards(): readonly BoardReport[] {
    return this.driver.boards;
  }

  /** The chest-board exchange (chest-board drivers only; throws for another driver or a closed link). */
  get link(): ChestboardLink {
    const l = this.driver instanceof ChestboardDriver ? this.driver.link : null;
    if (!l) throw new Error("this NaoRobot has no open chest-board link");
    return l;
  }

  /** Read preferences and run the handshake; does not start the loop. Throws a clear error on failure. */
  configure(): Promise<void> {
    return this.lifecycle.configure();
  }

  /** Configure if needed, then run the loop. After `stop()` this configures the link anew. */
  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** Control revoked, loop stopped, a last frame with stiffness 0, link closed. Idempotent. */
  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** `stop()`, and nothing starts again (BL_ERR_BODY_FINALIZED). */
  shutdown(): Promise<void> {
    return this.lifecycle.shutdown();
  }

  // ---- lifecycle hooks (the wrapper calls them; prepare side) ---------------------------------

  onConfigured(): void {
    this.state.jointInitialized.set(this.driver.jointInitialized);
    this.#f[2] = this.clock.epochMs() - this.clock.nowMs();
  }

  onActivating(): void {
    this.state.link = "ok";
  }

  onDeactivating(): void {
    this.authority.revoke();
    this.#f[0] = 0;
  }

  onClosed(): void {
    this.state.link = "stopped";
  }

  onDriverError(message: string): void {
    this.authority.revoke(); // after a restart, nothing moves until a client commands again
    this.#fault(this.clock.nowMs(), `body link lost: ${message}`, "link_lost");
    this.#f[0] = 0;
    this.state.link = "lost";
    this.state.valid = false;
  }

  onCycle(listener: (seq: number, nowMs: number) => void): () => void {
    return this.loop.onCycle(listener);
  }

  // ---- commands (prepare side; validate, then write into #requested) ---------------------------

  #checkLease(leaseId: string | null | undefined): LeaseCheck {
    const error = leaseError(this.authority, leaseId);
    return error ? { ok: false, error } : LEASE_OK;
  }

  /**
   * Validate and apply a partial command (LoLA keys, order and units). Cancels a smooth motion.
   * Allocation-free when the lease holds and every key applies (LoLA: once per cycle on the
   * core's thread): the answer is then one shared, frozen object.
   */
  command(leaseId: string, update: NaoCommandUpdate): { ok: true; problems: CommandProblem[] } | { ok: false; error: BodylinkError } {
    const c = this.#checkLease(leaseId);
    if (!c.ok) return c;
    this.#motion = null;
    this.#commandLease = leaseId;
    const problems = applyCommandUpdate(this.#requested, update);
    return problems === NO_COMMAND_PROBLEMS ? COMMAND_APPLIED : { ok: true, problems };
  }

  /**
   * Perform side: apply a command validated elsewhere (the host checked lengths, NaN/Infinity and
   * limits; src/host/nao-host.ts) as the holder's, if it was validated under the lease that holds
   * control now (`generation`: Authority.generation then); otherwise it is dropped and counted
   * (errors.staleCommands). Only the keys in `mask` (NAO_COMMAND_KEY) apply. No allocation.
   */
  applyValidated(cmd: NaoCommands, mask: number, generation: number): boolean {
    const holder = this.authority.activeHolder();
    if (holder === null || generation !== this.authority.generation || this.authority.latched) {
      this.#errors.staleCommands++;
      return false;
    }
    this.#motion = null;
    this.#commandLease = holder.id;
    const r = this.#requested;
    if (mask & NAO_COMMAND_KEY.Position) r.position.set(cmd.position);
    if (mask & NAO_COMMAND_KEY.Stiffness) r.stiffness.set(cmd.stiffness);
    for (let i = 0; i < LED_GROUP_NAMES.length; i++) {
      const g = LED_GROUP_NAMES[i]!;
      if (mask & NAO_COMMAND_KEY[g]) r.leds[g].set(cmd.leds[g]);
    }
    if (mask & NAO_COMMAND_KEY.Sonar) r.sonar.set(cmd.sonar);
    return true;
  }

  /** Stiffness up and into the stand posture. Resolves the estimated duration in seconds. */
  smoothEnable(leaseId: string): { ok: true; estimatedS: number } | { ok: false; error: BodylinkError } {
    return this.#startMotion(leaseId, "enable", STAND_POSTURE_RAD, 0);
  }

  /** Into the rest posture, then stiffness off. Resolves the estimated duration in seconds. */
  smoothDisable(leaseId: string): { ok: true; estimatedS: number } | { ok: false; error: BodylinkError } {
    return this.#startMotion(leaseId, "disable", REST_POSTURE_RAD, SMOOTH_FADE_S * 1000);
  }

  /**
   * Put the physics world back into `pose` (POST /v1/sim/reset): under the same lease and e-stop
   * rules as a command; refused on a real body and on the kinematic simulator, which has no world
   * (it cannot lie down). The targets become the new pose, so the robot holds it at the stiffness
   * last commanded; the world's time restarts at 0.
   */
  simReset(leaseId: string, pose: NaoSimPose): SimResetResult {
    if (!this.sim) return { ok: false, error: new BodylinkError("BL_ERR_CMD_UNSUPPORTED", `nao on ${this.driver.name}`, "simulator to reset (serve without --usb or --lola-upstream)") };
    if (this.sim.body.model.kind !== "physics") {
      return { ok: false, error: new BodylinkError("BL_ERR_CMD_UNSUPPORTED", "nao on the kinematic simulator", "physics world to reset (serve --sim physics)") };
    }
    const c = this.#checkLease(leaseId);
    if (!c.ok) return c;
    this.#motion = null;
    this.sim.body.resetPose(pose);
    this.#requested.position.set(this.sim.body.positionRad);
    return { ok: true, timeS: this.sim.body.model.timeS };
  }

  #startMotion(leaseId: string, kind: "enable" | "disable", to: Float64Array, fadeMs: number): { ok: true; estimatedS: number } | { ok: false; error: BodylinkError } {
    const c = this.#checkLease(leaseId);
    if (!c.ok) return c;
    const from = Float64Array.from(this.state.position);
    let maxDelta = 0;
    for (let i = 0; i < 25; i++) if (this.state.jointInitialized[i]) maxDelta = Math.max(maxDelta, Math.abs(to[i]! - from[i]!));
    const moveS = Math.max(SMOOTH_MIN_S, maxDelta / SMOOTH_SPEED_RADS);
    this.#commandLease = leaseId;
    this.#motion = { kind, leaseId, t0Ms: this.clock.nowMs(), moveMs: moveS * 1000, fadeMs, from, to: Float64Array.from(to), fromStiffness: Float64Array.from(this.#requested.stiffness) };
    return { ok: true, estimatedS: moveS + fadeMs / 1000 };
  }

  #cancelMotion(): void {
    this.#motion = null;
  }

  /** True while a smooth enable/disable is running. */
  get motionActive(): boolean {
    return this.#motion !== null;
  }

  /**
   * Emergency stop: no lease needed, latched until `resetEstop`. Category 0 cuts stiffness on the
   * next frame; category 1 (the default) crouches first (see the file comment). Control is revoked
   * and nobody gets it back until the reset.
   */
  estop(req: EstopRequest): EstopState {
    const category = req.category ?? this.defaultStopCategory;
    const first = this.authority.engageEstop(category, req.source, req.reason);
    const now = this.clock.nowMs();
    if (first) this.#estopAtMs = now;
    // Whatever happens next, stiffness comes back only on the ramp.
    this.#recovering = true;
    if (this.authority.estop.category === 0) this.#cut();
    else if (first) this.#startSettle(now);
    return this.authority.estop;
  }

  /** Shorthand for `estop({ source: "local", reason })` with the default category. */
  emergencyStop(reason: string, category?: StopCategory): EstopState {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }

  /** Release the latch. Nothing moves until a client takes a lease and commands; stiffness then ramps up. */
  resetEstop(req: EstopResetRequest): EstopState {
    this.authority.resetEstop(req);
    return this.authority.estop;
  }

  estopState(): EstopState {
    return this.authority.estop;
  }

  /** Category 0, or a category-1 stop that faulted (it becomes category 0): stiffness 0 now. */
  #cut(): void {
    this.#limp();
    if (this.authority.latched) this.authority.setEstopPhase("cut", this.authority.estop.phase === "settling" ? 0 : undefined);
  }

  /** Stiffness 0 from the next frame on; the motion and every target stiffness dropped. */
  #limp(): void {
    this.#motion = null;
    this.#requested.stiffness.fill(0);
    this.#f[0] = 0;
  }

  /** Category 1: crouch from the measured pose at no more than the stiffness each joint is sent now. */
  #startSettle(nowMs: number): void {
    const sent = this.state.stiffness;
    let stiff = false;
    for (let i = 0; i < 25; i++) if (sent[i]! > 0.01) stiff = true;
    if (!this.state.valid || !stiff) {
      // Already limp (or no measured pose to start from): nothing to settle, the stop is complete.
      this.#limp();
      this.authority.setEstopPhase("cut");
      return;
    }
    const from = Float64Array.from(this.state.position);
    let maxDelta = 0;
    for (let i = 0; i < 25; i++) if (this.state.jointInitialized[i]) maxDelta = Math.max(maxDelta, Math.abs(REST_POSTURE_RAD[i]! - from[i]!));
    const moveMs = Math.min(NAO_SETTLE_MAX_MS - NAO_SETTLE_FADE_MS, Math.max(SMOOTH_MIN_S * 1000, (maxDelta / SMOOTH_SPEED_RADS) * 1000));
    // The frame sends requested × scale: fold the scale into the requested stiffness, so that the
    // crouch starts at exactly what was being sent.
    this.#requested.stiffness.set(sent);
    this.#f[0] = 1;
    this.#motion = { kind: "settle", leaseId: "", t0Ms: nowMs, moveMs, fadeMs: NAO_SETTLE_FADE_MS, from, to: Float64Array.from(REST_POSTURE_RAD), fromStiffness: Float64Array.from(sent) };
  }

  // ---- the cycle (perform side) ----------------------------------------------------------------

  /** Run one whole cycle now (read → arbitrate → write → read), as the loop does. Benchmarks and tests. */
  cycle(nowMs: number): void {
    this.lifecycle.cycle(nowMs);
  }

  /** Perform side: arbitrate (the wrapper calls it between read and write). */
  update(nowMs: number): void {
    this.#arbitrate(nowMs);
  }

  /** Perform side: what a read found, or why a write did not go out. */
  account(nowMs: number, code: number, phase: Phase): void {
    if (phase === PHASE.Write) {
      if (code === IO.Busy) {
        // The previous exchange has not completed (USB): count it, keep the safety logic running.
        this.#errors.overruns++;
        this.#fault(nowMs, "chest board exchange overran the cycle", "cycle_overrun");
      } else this.#readOutcome(nowMs, code);
      return;
    }
    this.#readOutcome(nowMs, code);
  }

  onCycleError(error: unknown): void {
    this.#fault(this.clock.nowMs(), `internal error in the cycle: ${(error as Error)?.message ?? error}`, "internal_error");
  }

  onLate(lateByMs: number): void {
    this.#errors.lateCycles++;
    if (lateByMs > this.#safetyLateBoundMs) {
      this.#errors.lateRamps++;
      this.#fault(this.clock.nowMs(), "cycle ran late", "cycle_late");
    }
  }

  #fault(nowMs: number, reason: string, code: SafetyCode): void {
    this.#f[1] = nowMs;
    this.#faultReason = reason;
    this.#faultCode = code;
  }

  #arbitrate(nowMs: number): void {
    if (this.authority.latched) {
      this.#arbitrateEstop(nowMs);
      return;
    }
    // Never holder() here: an expiry it found would emit "released" inside the cycle.
    const holder = this.authority.activeHolder();
    const m = this.#motion;
    if (m) this.#stepMotion(m, nowMs);
    let reason: string | null = null;
    let code: SafetyCode = "none";
    if (nowMs - this.#f[1]! < this.#recoveryMs) {
      reason = this.#faultReason;
      code = this.#faultCode;
      this.#recovering = true;
    } else if (!holder) {
      // An expiry found in this cycle is announced after it (Authority.activeHolder): say so already.
      const gone = this.authority.overdue();
      reason = gone ? this.#expiredFor(gone.id, gone.owner) : (this.#releaseReason ?? "no client holds control");
      code = gone ? "lease_expired" : this.#releaseCode;
    }
    // The previous holder's targets are not the new holder's: keep ramping down until it commands.
    else if (holder.id !== this.#commandLease) {
      reason = this.#waitingFor(holder.id, holder.owner);
      code = "waiting_for_command";
    }
    const step = this.periodMs * this.#rampPerMs;
    const f = this.#f;
    if (reason) {
      f[0] = Math.max(0, f[0]! - step);
      // Once limp, hold the measured positions so that regaining stiffness does not jump.
      if (f[0] === 0) {
        if (this.state.valid) this.#requested.position.set(this.state.position);
        // Targets nobody holds any more are dropped; a holder's own survive a fault's ramp.
        if (!holder || holder.id !== this.#commandLease) this.#requested.stiffness.fill(0);
      }
    } else if (this.#recovering) {
      f[0] = Math.min(1, f[0]! + step);
      if (f[0] === 1) this.#recovering = false;
    } else {
      // A client that has just taken control gets its stiffness as commanded, as on LoLA.
      f[0] = 1;
    }
    this.state.safetyReason = reason;
    this.state.safety = code;
  }

  /** While latched: step the crouch (category 1) or hold limp; a fault during the crouch cuts. */
  #arbitrateEstop(nowMs: number): void {
    const m = this.#motion;
    if (m && m.kind === "settle") {
      if (this.#f[1]! >= this.#estopAtMs || this.state.link === "lost") this.#cut();
      else {
        this.#stepMotion(m, nowMs);
        if (this.#motion === null) {
          // crouched and faded out: the category-1 stop is complete
          this.#limp();
          this.authority.setEstopPhase("cut");
        }
      }
    } else {
      this.#motion = null;
      this.#f[0] = 0;
      this.#requested.stiffness.fill(0);
      if (this.state.valid) this.#requested.position.set(this.state.position);
    }
    const e = this.authority.estop;
    if (this.#estopText.state !== e) this.#estopText = { state: e, text: describeEstop(e) };
    this.state.safetyReason = this.#estopText.text;
    this.state.safety = "estop";
  }

  /** `state.safetyReason` while latched, built once per latch state (no string per cycle). */
  #estopText: { state: EstopState | null; text: string } = { state: null, text: "" };

  #expiredText = { leaseId: "", text: "" };
  /** The release reason of a lease found overdue in this cycle, built once per lease (as the "released" listener words it). */
  #expiredFor(leaseId: string, owner: string): string {
    if (this.#expiredText.leaseId !== leaseId) this.#expiredText = { leaseId, text: `control expired (${owner})` };
    return this.#expiredText.text;
  }

  #waiting = { leaseId: "", text: "" };
  /** The "has not commanded yet" reason, built once per holder (no string per cycle). */
  #waitingFor(leaseId: string, owner: string): string {
    if (this.#waiting.leaseId !== leaseId) this.#waiting = { leaseId, text: `${owner} holds control and has not commanded yet` };
    return this.#waiting.text;
  }

  #stepMotion(m: Motion, nowMs: number): void {
    const t = nowMs - m.t0Ms;
    const u = Math.min(1, t / m.moveMs);
    const e = u * u * (3 - 2 * u); // smoothstep: zero speed at both ends
    const r = this.#requested;
    for (let i = 0; i < 25; i++) {
      r.position[i] = m.from[i]! + (m.to[i]! - m.from[i]!) * e;
      if (m.kind === "enable") r.stiffness[i] = m.fromStiffness[i]! + (SMOOTH_STIFFNESS - m.fromStiffness[i]!) * Math.min(1, u * 2);
      else r.stiffness[i] = Math.max(m.fromStiffness[i]!, SMOOTH_STIFFNESS);
    }
    if (m.kind === "settle") {
      // never stiffer than it was; fade out once crouched
      const f = t >= m.moveMs ? Math.min(1, (t - m.moveMs) / m.fadeMs) : 0;
      for (let i = 0; i < 25; i++) r.stiffness[i] = m.fromStiffness[i]! * (1 - f);
      if (f >= 1) this.#motion = null;
    } else if (t >= m.moveMs && m.kind === "disable") {
      const f = Math.min(1, (t - m.moveMs) / m.fadeMs);
      for (let i = 0; i < 25; i++) r.stiffness[i] = SMOOTH_STIFFNESS * (1 - f);
      if (f >= 1) this.#motion = null;
    } else if (t >= m.moveMs) {
      this.#motion = null;
    }
  }

  #readOutcome(now: number, code: number): void {
    const s = this.state;
    if (code === IO.Fresh) {
      this.#failures = 0;
      s.seq++;
      this.#estimateVelocity(now, s);
      s.timestampMs = now;
      s.epochMs = now + this.#f[2]!;
      if (this.sim) {
        this.#simTime.sample(this.sim.body.model.timeS);
        writeNaoSimWorld(this.sim.body.model, s, this.#simTime);
      }
      if (!s.valid) {
        s.valid = true;
        // First state: hold where the body is.
        this.#requested.position.set(s.position);
      }
      s.link = "ok";
      return;
    }
    if (code === NAO_IO.BadFrame) this.#errors.badFrames++;
    else if (code === NAO_IO.Unacknowledged) this.#errors.unacknowledged++;
    else if (code === NAO_IO.NoAnswer) this.#errors.noAnswer++;
    else if (code === NAO_IO.WriteFailed) this.#errors.writeFailed++;
    else if (code === NAO_IO.LinkDown) {
      // The link went down as a whole (an upstream LoLA closed, stalled, sent garbage; the driver
      // already sent it stiffness 0): lost now, and the ramp starts again from 0, never a jump.
      this.#errors.linkDown++;
      this.#failures = this.#linkLostAfter - 1;
      this.#f[0] = 0;
    } else this.#errors.readFailed++;
    this.#linkFailure(now, this.driver.lastErrorText);
  }

  /**
   * Perform side, on every fresh state: the joints' velocity as the finite difference of the
   * positions over the last two fresh states (a state after one that was not valid starts over at
   * 0). Here, in the core, so that every consumer (the robot API's fields) reads it on demand and
   * nothing on the serving side has to see every cycle to estimate it.
   */
  #estimateVelocity(now: number, s: NaoState): void {
    const prev = this.#prevAtMs;
    const dtMs = s.valid ? now - prev[0]! : Number.NaN;
    if (dtMs === 0) return; // a second fresh read in the same cycle: the next one spans both
    const v = s.velocity;
    const pos = s.position;
    const p = this.#prevPosition;
    if (dtMs > 0) {
      for (let i = 0; i < 25; i++) v[i] = ((pos[i]! - p[i]!) * 1000) / dtMs;
    } else v.fill(0);
    p.set(pos);
    prev[0] = now;
  }

  #linkFailure(now: number, reason: string): void {
    this.#failures++;
    const s = this.state;
    if (this.#failures >= this.#linkLostAfter) {
      s.link = "lost";
      s.valid = false;
      this.#fault(now, `body link lost: ${reason}`, "link_lost");
    } else {
      s.link = "degraded";
    }
  }

  health(opts: HealthOptions = {}): RobotHealth {
    const h = this.authority.holder();
    return {
      body: "nao",
      link: this.state.link,
      safety: this.state.safety,
      safetyReason: this.state.safetyReason,
      cycle: this.loop.summary(opts.windowCycles),
      errors: { ...this.#errors },
      control: h ? { owner: h.owner, source: h.source, expiresAtEpochMs: h.expiresAtEpochMs } : null,
      estop: this.authority.estop,
      sim: this.sim ? this.#simTime.health(this.clock, this.sim.body.model.kind) : null,
    };
  }
}

/** Per model's contact link, its slot in NaoState.simContacts (NAO_CONTACT_LINKS' order). */
const slotsOf = new WeakMap<NaoBodyModel, Int8Array>();

/**
 * Copy a physics model's world into the state (perform side: allocation-free after the first
 * call per model). The kinematic puppet has no world: `present` stays 0.
 */
export function writeNaoSimWorld(m: NaoBodyModel, s: NaoState, time: SimTimeMeter): void {
  const w = s.simWorld;
  if (m.kind !== "physics") return;
  let slots = slotsOf.get(m);
  if (!slots) {
    slots = Int8Array.from(m.contactLinks, (l) => NAO_CONTACT_LINKS.indexOf(l));
    slotsOf.set(m, slots);
  }
  writeSimWorld(w, m);
  w[SIM_WORLD.realTimeFactor] = time.realTimeFactor();
  for (let c = 0; c < slots.length; c++) if (slots[c]! >= 0) s.simContacts[slots[c]!] = m.contactForceN[c]!;
}
