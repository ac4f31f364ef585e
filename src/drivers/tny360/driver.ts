/**
 * TNY-360 drivers: the body seam (../driver.ts) over bodylink's simulated quadruped or a real
 * robot's WebSocket API. `read` copies the driver's newest complete state into the runtime's (the
 * simulator's tick, a real robot's completed poll); `write` takes the core's command (the typed
 * values a client sent, validated once: bodies/tny360/commands.ts), applies its keys in their fixed
 * order and runs one tick (simulator) or forwards them and starts the next poll (real robot:
 * encoded to bytes there, at its wire). The core (runtime/tny360-robot.ts) keeps the lease rule
 * and the velocity safety; it reaches the body only through this interface.
 *
 * Two more ways in, both typed by the wire's table, for what is not a set-point:
 * - `request(key, args)`: an action whose answer the caller needs now (a smooth sequence's
 *   estimate, whether a leg reaches a foot) or a safety action of the runtime (the e-stop's
 *   disable): the answer now (simulator), or null when forwarded (real robot);
 * - `handle(module, action, args)`: a request decoded at the TNY-360 API server's wire, answered as
 *   the robot would (may resolve later).
 */
import type { Tny360Commands } from "../../bodies/tny360/commands.js";
import { TNY360_ALL_JOINTS, TNY360_COMMAND_FLAG, TNY360_COMMAND_HEADER, TNY360_COMMAND_KEY } from "../../bodies/tny360/layout.js";
import { copyTny360State, type Tny360State, type TnyReply } from "../../bodies/tny360/state.js";
import type { TnyWebSocketConstructor } from "../../client/tny/index.js";
import type { Clock } from "../../runtime/clock.js";
import { RemoteTny360 } from "../../runtime/tny360-remote.js";
import type { Tny360ModelFactory } from "../../sim/tny360/model.js";
import { mujocoTnyModelFactory } from "../../sim/tny360/physics/mujoco-tny.js";
import { SimTny360 } from "../../sim/tny360/quadruped.js";
import { TnyWebSocketTransport } from "../../transport/tny-websocket.js";
import { type ActionSpec, actionSpec, JOINT_COUNT, type LogLevelCode, type ModuleSpec, Status, TNY_DEFAULT_PORT } from "../../wire/tny/constants.js";
import type { ActionKey, KeyDecodedArgs } from "../../wire/tny/types.js";
import { type BodyDriver, IO } from "../driver.js";

/** The actions a driver runs for `request` (answers the caller needs, the runtime's own safety actions). */
export type TnyRequestKey = "body.enableSmooth" | "body.disableSmooth" | "body.setEnabled" | "leg.setPosition";

export interface TnyDriver extends BodyDriver<Tny360State, Tny360Commands> {
  /** "sim" or "remote". */
  readonly source: "sim" | "remote";
  readonly periodMs: number;
  /** Forward failures, commands the body refused, poll errors so far. */
  readonly counters: { readonly pollErrors: number; readonly forwardErrors: number };
  /** Why commands cannot reach the body now (no link), or null. */
  unavailable(): string | null;
  /** Whether the body serves `action` (the simulator's table column; a real robot: all). */
  serves(action: ActionSpec): boolean;
  /**
   * Apply the keys of `command` now, in their fixed order (enable bits, gait, posture, velocity,
   * joint overrides), and clear them: what `write` does before its tick, and what the core does
   * before a request that must come after them. Returns how many the body refused.
   */
  apply(command: Tny360Commands): number;
  /** Run one action now: its answer (simulator), or null when forwarded to a real robot (which answers later). */
  request<K extends TnyRequestKey>(key: K, args: KeyDecodedArgs<K>): TnyReply | null;
  /**
   * Answer a request decoded at the TNY-360 API server's wire (may resolve later). `nowMs`: when it
   * arrived, on the runtime's clock (read once per frame by the server); omitted, read when needed.
   */
  handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[], nowMs?: number): TnyReply | Promise<TnyReply>;
  /** Velocity 0 now. */
  clearVelocity(): void;
  /** Velocity 0, overrides and smooth sequences cleared. */
  emergencyStop(reason: string): void;
  /** A line in the robot's log ring (simulator only; a real robot keeps its own). */
  logLine(level: LogLevelCode, tag: string, message: string): void;
}

const H = TNY360_COMMAND_HEADER;
const KEY = TNY360_COMMAND_KEY;
const FLAG = TNY360_COMMAND_FLAG;

/** Runs one typed action: true when the body took it (or it was forwarded). */
type RunTyped = <K extends ActionKey>(key: K, args: KeyDecodedArgs<K>) => boolean;

/**
 * The argument tuples of the set-point actions, made once per driver (the simulator's handlers read
 * them at once; a real robot's forward copies what it keeps).
 */
class CommandArgs {
  readonly enabled: KeyDecodedArgs<"body.setEnabled"> = [0];
  readonly gait: KeyDecodedArgs<"gait.setType"> = [0];
  readonly posture: KeyDecodedArgs<"body.setPosture"> = [0, 0, 0, 0, 0, 0, false];
  readonly velocity: KeyDecodedArgs<"body.setVelocity"> = [0, 0, 0, false];
  readonly angle: KeyDecodedArgs<"joint.setAngle"> = [0, 0];
  readonly angles: KeyDecodedArgs<"joint.setJointAngles"> = [new Float32Array(JOINT_COUNT)];

  /** Apply `c`'s keys through `run` in the fixed order, then clear them; returns the refusals. */
  apply(c: Tny360Commands, run: RunTyped): number {
    const keys = c.header[H.keys]!;
    if (keys === 0) return 0;
    const flags = c.header[H.flags]!;
    let refused = 0;
    if (keys & KEY.enabledMask) {
      this.enabled[0] = c.enabledMask[0]!;
      if (!run("body.setEnabled", this.enabled)) refused++;
    }
    if (keys & KEY.gait) {
      this.gait[0] = c.gait[0]!;
      if (!run("gait.setType", this.gait)) refused++;
    }
    if (keys & KEY.posture) {
      const a = this.posture;
      const p = c.posture;
      a[0] = p[0]!;
      a[1] = p[1]!;
      a[2] = p[2]!;
      a[3] = p[3]!;
      a[4] = p[4]!;
      a[5] = p[5]!;
      a[6] = (flags & FLAG.postureClearsOverrides) !== 0;
      if (!run("body.setPosture", a)) refused++;
    }
    if (keys & KEY.velocity) {
      const a = this.velocity;
      a[0] = c.velocity[0]!;
      a[1] = c.velocity[1]!;
      a[2] = c.velocity[2]!;
      a[3] = (flags & FLAG.velocityClearsOverrides) !== 0;
      if (!run("body.setVelocity", a)) refused++;
    }
    if (keys & KEY.joints) {
      const joints = c.header[H.joints]!;
      if (joints === TNY360_ALL_JOINTS) {
        this.angles[0].set(c.jointRad);
        if (!run("joint.setJointAngles", this.angles)) refused++;
      } else {
        const a = this.angle;
        for (let i = 0; i < JOINT_COUNT; i++) {
          if ((joints & (1 << i)) === 0) continue;
          a[0] = i;
          a[1] = c.jointRad[i]!;
          if (!run("joint.setAngle", a)) refused++;
        }
      }
    }
    c.header[H.keys] = 0;
    c.header[H.joints] = 0;
    c.header[H.flags] = 0;
    return refused;
  }
}

/** Copies the driver's state into the runtime's when its sequence number moved since the last read. */
class SeqWatch {
  #seen = -1;
  read(from: Tny360State, into: Tny360State): number {
    if (from.seq === this.#seen) {
      into.link = from.link; // a real robot's link goes down between polls
      return IO.None;
    }
    this.#seen = from.seq;
    copyTny360State(from, into);
    return IO.Fresh;
  }
}

/**
 * The physics TNY-360's model factory (MuJoCo on models/tny360.xml; loads MuJoCo once per thread),
 * for `TnySimDriverOptions.model`: `serve --body tny360 --sim physics` (docs/simulation.md).
 */
export function tny360PhysicsModel(): Promise<Tny360ModelFactory> {
  return mujocoTnyModelFactory();
}

export interface TnySimDriverOptions {
  seed?: number;
  /** The body under the simulator (sim/tny360/model.ts). Defaults to the kinematic model; `tny360PhysicsModel()` makes MuJoCo's. */
  model?: Tny360ModelFactory;
  velocityTimeoutMs?: number;
  velocityDecayMs?: number;
  clock: Clock;
}

const REQUEST_SPEC = {
  "body.enableSmooth": actionSpec("body", "enableSmooth"),
  "body.disableSmooth": actionSpec("body", "disableSmooth"),
  "body.setEnabled": actionSpec("body", "setEnabled"),
  "leg.setPosition": actionSpec("leg", "setPosition"),
} as const satisfies Record<TnyRequestKey, unknown>;

export class TnySimDriver implements TnyDriver {
  readonly name = "sim";
  readonly source = "sim" as const;
  readonly sim: SimTny360;
  readonly counters = { pollErrors: 0, forwardErrors: 0 };
  readonly #watch = new SeqWatch();
  readonly #args = new CommandArgs();
  readonly #run: RunTyped = (key, args) => this.sim.run(key, args).status === Status.Ok;

  constructor(opts: TnySimDriverOptions) {
    const clock = opts.clock;
    this.sim = new SimTny360({
      seed: opts.seed,
      velocityTimeoutMs: opts.velocityTimeoutMs,
      velocityDecayMs: opts.velocityDecayMs,
      nowMs: () => clock.nowMs(),
      ...(opts.model ? { model: opts.model } : {}),
    });
  }
  get periodMs(): number {
    return this.sim.periodMs;
  }
  async configure(): Promise<void> {}
  async activate(): Promise<void> {}
  read(_nowMs: number, into: Tny360State): number {
    return this.#watch.read(this.sim.state, into);
  }
  /** The command's keys, then one tick of the simulator. */
  write(nowMs: number, command: Tny360Commands): number {
    this.apply(command);
    this.sim.cycle(nowMs);
    return IO.Sent;
  }
  apply(command: Tny360Commands): number {
    const refused = this.#args.apply(command, this.#run);
    this.counters.forwardErrors += refused;
    return refused;
  }
  request<K extends TnyRequestKey>(key: K, args: KeyDecodedArgs<K>): TnyReply {
    return this.sim.run(key, args);
  }
  async deactivate(): Promise<void> {
    this.sim.clearVelocity();
    this.sim.failPending(Status.UnknownError);
  }
  async close(): Promise<void> {}
  unavailable(): string | null {
    return null;
  }
  serves(action: ActionSpec): boolean {
    return this.sim.serves(action);
  }
  handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[], nowMs?: number): TnyReply | Promise<TnyReply> {
    return this.sim.handle(module, action, args, nowMs);
  }
  clearVelocity(): void {
    this.sim.clearVelocity();
  }
  emergencyStop(reason: string): void {
    this.sim.emergencyStop(reason);
  }
  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.sim.logLine(level, tag, message);
  }
}

export interface TnyRemoteDriverOptions {
  host: string;
  port?: number;
  clock: Clock;
  pollHz?: number;
  requestTimeoutMs?: number;
  WebSocket?: TnyWebSocketConstructor;
  velocityTimeoutMs?: number;
  velocityDecayMs?: number;
  /** How long configure waits for the first connection before going on (the link keeps retrying). Defaults to 3000 ms. */
  connectWaitMs?: number;
}

/** The spec of a "module.action" key (a real robot's forward needs the table's entry). */
function specOf(key: ActionKey): { module: ModuleSpec; action: ActionSpec } {
  const dot = key.indexOf(".");
  return actionSpec(key.slice(0, dot), key.slice(dot + 1));
}

export class TnyRemoteDriver implements TnyDriver {
  readonly source = "remote" as const;
  readonly remote: RemoteTny360;
  readonly #connectWaitMs: number;
  readonly #watch = new SeqWatch();
  readonly #args = new CommandArgs();
  /** Forwarded at the robot's wire: the request is encoded there (after an await), so it gets a copy of the values. */
  readonly #run: RunTyped = (key, args) => {
    this.#forward(key, args);
    return true;
  };

  constructor(opts: TnyRemoteDriverOptions) {
    const transport = new TnyWebSocketTransport({ host: opts.host, port: opts.port ?? TNY_DEFAULT_PORT, clock: opts.clock, WebSocket: opts.WebSocket, timeoutMs: opts.requestTimeoutMs });
    this.remote = new RemoteTny360({ transport, clock: opts.clock, pollHz: opts.pollHz, velocityTimeoutMs: opts.velocityTimeoutMs, velocityDecayMs: opts.velocityDecayMs });
    this.#connectWaitMs = opts.connectWaitMs ?? 3000;
  }
  get name(): string {
    return this.remote.transport.url;
  }
  get periodMs(): number {
    return this.remote.periodMs;
  }
  get counters(): { readonly pollErrors: number; readonly forwardErrors: number } {
    return this.remote.counters;
  }
  async configure(): Promise<void> {
    await this.remote.start(this.#connectWaitMs);
  }
  async activate(): Promise<void> {}
  read(_nowMs: number, into: Tny360State): number {
    return this.#watch.read(this.remote.state, into);
  }
  /** The command's keys forwarded, then the next poll started. */
  write(nowMs: number, command: Tny360Commands): number {
    this.apply(command);
    this.remote.cycle(nowMs);
    return IO.Sent;
  }
  apply(command: Tny360Commands): number {
    return this.#args.apply(command, this.#run);
  }
  request<K extends TnyRequestKey>(key: K, args: KeyDecodedArgs<K>): null {
    const spec = REQUEST_SPEC[key];
    this.#forwardSpec(spec, args);
    return null;
  }
  async deactivate(): Promise<void> {
    this.remote.clearVelocity();
  }
  /** Velocity 0 to the robot if anything was commanded, then the link closes. */
  async close(): Promise<void> {
    await this.remote.stop();
  }
  unavailable(): string | null {
    return this.remote.transport.connected ? null : `no link to the TNY-360 at ${this.remote.transport.url}`;
  }
  serves(_action: ActionSpec): boolean {
    return true;
  }
  handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | Promise<TnyReply> {
    return this.remote.handle(module, action, args);
  }
  clearVelocity(): void {
    this.remote.clearVelocity();
  }
  emergencyStop(reason: string): void {
    this.remote.emergencyStop(reason);
  }
  logLine(): void {}

  #forward<K extends ActionKey>(key: K, args: KeyDecodedArgs<K>): void {
    this.#forwardSpec(specOf(key), args);
  }

  #forwardSpec(spec: { module: ModuleSpec; action: ActionSpec }, args: readonly unknown[]): void {
    const copy = args.map((v) => (v instanceof Float32Array ? v.slice() : v));
    void this.remote.handle(spec.module, spec.action, copy).then((r) => {
      if (r.status !== Status.Ok) this.remote.counters.forwardErrors++;
    });
  }
}
