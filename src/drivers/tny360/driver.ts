/**
 * TNY-360 drivers: the body seam (../driver.ts) over bodylink's simulated quadruped or a real
 * robot's WebSocket API. Both fill their own Tny360State in place (`state`; `read` says whether it
 * moved on since the last read); `write` runs one tick (simulator) or starts the next poll
 * (real robot: it never pushes). The core (runtime/tny360-robot.ts) keeps the lease rule and
 * the velocity safety; it reaches the body only through this interface.
 *
 * Commands: `handle` answers a decoded wire request as the body would (the TNY-360 API server's
 * path); `command` applies an already validated one now and answers (simulator), or forwards it
 * and returns null (real robot: the answer comes later, failures are counted in `counters`).
 */
import type { Tny360State, TnyReply } from "../../bodies/tny360/state.js";
import type { TnyWebSocketConstructor } from "../../client/tny/index.js";
import type { Clock } from "../../runtime/clock.js";
import { RemoteTny360 } from "../../runtime/tny360-driver.js";
import { SimTny360 } from "../../sim/tny360/quadruped.js";
import { TnyWebSocketTransport } from "../../transport/tny-websocket.js";
import { type ActionSpec, type LogLevelCode, type ModuleSpec, Status, TNY_DEFAULT_PORT } from "../../wire/tny/constants.js";
import { type BodyDriver, IO } from "../driver.js";

export interface TnyDriver extends BodyDriver<Tny360State, null> {
  /** "sim" or "remote". */
  readonly source: "sim" | "remote";
  readonly periodMs: number;
  /** The state this driver fills in place (the runtime's `state`). */
  readonly state: Tny360State;
  /** Forward failures and poll errors so far (a simulator: 0). */
  readonly counters: { readonly pollErrors: number; readonly forwardErrors: number };
  /** Why commands cannot reach the body now (no link), or null. */
  unavailable(): string | null;
  /** Whether the body serves `action` (the simulator's table column; a real robot: all). */
  serves(action: ActionSpec): boolean;
  /** Answer a decoded wire request (may resolve later). */
  handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | Promise<TnyReply>;
  /** Apply a validated command: the answer now, or null when forwarded to a real robot. */
  command(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | null;
  /** Velocity 0 now. */
  clearVelocity(): void;
  /** Velocity 0, overrides and smooth sequences cleared. */
  emergencyStop(reason: string): void;
  /** A line in the robot's log ring (simulator only; a real robot keeps its own). */
  logLine(level: LogLevelCode, tag: string, message: string): void;
}

/** Fresh when the state's sequence number moved since the last read. */
class SeqWatch {
  #seen = -1;
  read(state: Tny360State): number {
    if (state.seq === this.#seen) return IO.None;
    this.#seen = state.seq;
    return IO.Fresh;
  }
}

export interface TnySimDriverOptions {
  seed?: number;
  velocityTimeoutMs?: number;
  velocityDecayMs?: number;
  clock: Clock;
}

export class TnySimDriver implements TnyDriver {
  readonly name = "sim";
  readonly source = "sim" as const;
  readonly sim: SimTny360;
  readonly counters = { pollErrors: 0, forwardErrors: 0 };
  readonly #watch = new SeqWatch();

  constructor(opts: TnySimDriverOptions) {
    const clock = opts.clock;
    this.sim = new SimTny360({ seed: opts.seed, velocityTimeoutMs: opts.velocityTimeoutMs, velocityDecayMs: opts.velocityDecayMs, nowMs: () => clock.nowMs() });
  }
  get periodMs(): number {
    return this.sim.periodMs;
  }
  get state(): Tny360State {
    return this.sim.state;
  }
  async configure(): Promise<void> {}
  async activate(): Promise<void> {}
  read(_nowMs: number, _into: Tny360State): number {
    return this.#watch.read(this.sim.state);
  }
  write(nowMs: number): number {
    this.sim.cycle(nowMs);
    return IO.Sent;
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
  handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | Promise<TnyReply> {
    return this.sim.handle(module, action, args);
  }
  command(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply {
    return this.sim.handleNow(module, action, args);
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

export class TnyRemoteDriver implements TnyDriver {
  readonly source = "remote" as const;
  readonly remote: RemoteTny360;
  readonly #connectWaitMs: number;
  readonly #watch = new SeqWatch();

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
  get state(): Tny360State {
    return this.remote.state;
  }
  get counters(): { readonly pollErrors: number; readonly forwardErrors: number } {
    return this.remote.counters;
  }
  async configure(): Promise<void> {
    await this.remote.start(this.#connectWaitMs);
  }
  async activate(): Promise<void> {}
  read(_nowMs: number, _into: Tny360State): number {
    return this.#watch.read(this.remote.state);
  }
  write(nowMs: number): number {
    this.remote.cycle(nowMs);
    return IO.Sent;
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
  command(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): null {
    void Promise.resolve(this.remote.handle(module, action, args)).then((r) => {
      if (r.status !== Status.Ok) this.remote.counters.forwardErrors++;
    });
    return null;
  }
  clearVelocity(): void {
    this.remote.clearVelocity();
  }
  emergencyStop(reason: string): void {
    this.remote.emergencyStop(reason);
  }
  logLine(): void {}
}
