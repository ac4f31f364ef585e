/**
 * The main thread's side of the TNY-360's threaded core (src/rt/tny360-worker.ts): the surface
 * the robot API's TNY-360 adapter uses (state, snapshots, the typed commands, e-stop, health,
 * onCycle, authority), each command answered by the core; and, for `serve --tny-server main`, the
 * TNY-360 API server's path (serves, request, logLine) so that server can run here instead.
 * What crosses, and how: core-host.ts.
 */
import { BODIES } from "../bodies/registry.js";
import { snapshotTny360State, type Tny360Snapshot, Tny360State, type TnyReply } from "../bodies/tny360/state.js";
import type { Tny360CoreOptions } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import type { Tny360CommandResult, Tny360Posture, Tny360SmoothResult } from "../runtime/tny360-robot.js";
import { TNY360_STATE_BYTES, tny360StateChannel } from "../shm/tny360-state.js";
import { type ActionSpec, type GaitName, type LogLevelCode, MODULES, type ModuleSpec } from "../wire/tny/constants.js";
import type { Worker } from "node:worker_threads";
import { CoreHost, type CoreHostOptions, type StateReader, SyncHostAuthority, splitHostOptions } from "./core-host.js";

export type Tny360HostOptions = Omit<Tny360CoreOptions, "gcEveryMs"> & Partial<Pick<Tny360CoreOptions, "gcEveryMs">> & CoreHostOptions;

/** A real robot is polled at up to 50 Hz: its cycle is 20 ms (the simulator's is the registry's 5 ms). */
const REMOTE_PERIOD_MS = 20;
/** How long a TNY-360 request forwarded to the core may take (a real robot answers within its 2 s request timeout). */
const REQUEST_LATER_MS = 5000;

export class Tny360Host extends CoreHost {
  /** Leases and the latch, read from shared memory; changes still wait for the core (reply buffer). */
  readonly authority = new SyncHostAuthority(this.control);
  readonly kind = "tny360" as const;
  readonly source: "sim" | "remote";
  /** The newest state the core published (refreshed before every cycle listener runs, and after every command). */
  readonly state: Tny360State;
  /** The TNY-360 API server's port when it runs in the core (null: not there). */
  tnyPort: number | null = null;
  readonly #serves = new Map<ActionSpec, boolean>();

  private constructor(source: "sim" | "remote", periodMs: number, worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<Tny360Host>, opts: CoreHostOptions) {
    super(periodMs, worker, buffer, channel, opts);
    this.source = source;
    this.state = new Tny360State(source);
  }

  /** Start the TNY-360 core in its worker; resolves once it is cycling (and, with `server`, serving the TNY-360 API). */
  static async start(opts: Tny360HostOptions): Promise<Tny360Host> {
    const { core, host: hostOpts } = splitHostOptions(opts);
    const source = core.remote ? "remote" : "sim";
    const { host, ready } = await CoreHost.boot<Tny360Host>(
      {
        entry: "tny360-worker",
        stateBytes: TNY360_STATE_BYTES,
        options: { gcEveryMs: 100, ...core },
        channel: (buffer, start, ctl) => {
          const ch = tny360StateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h) };
        },
      },
      (worker, buffer, channel) => new Tny360Host(source, core.remote ? REMOTE_PERIOD_MS : BODIES.tny360.periodMs, worker, buffer, channel, hostOpts),
    );
    host.tnyPort = ready.tnyPort as number | null;
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    if (stalled) this.state.link = "lost";
  }

  /** The TNY-360 server's refused upgrades (access checks, the limit), when it runs in the core: for the safety log. */
  onRefused(listener: (what: string, detail: string) => void): void {
    this.onCoreMessage("refused", (m) => listener(String(m.what), String(m.detail)));
  }

  // ---- reads (copies of the mirror; what the robot API's adapter reads) ------------------------

  snapshot(): Tny360Snapshot | null {
    return this.state.valid ? snapshotTny360State(this.state) : null;
  }
  stamp(): { readonly seq: number; readonly timestampMs: number; readonly epochMs: number; readonly link: Tny360Snapshot["link"] } | null {
    const s = this.state;
    return s.valid ? { seq: s.seq, timestampMs: s.timestampMs, epochMs: s.epochMs, link: s.link } : null;
  }

  // ---- typed commands (answered by the core) -------------------------------------------------

  setVelocity(leaseId: string, xMS: number, yMS: number, yawRadS: number, clearOverrides = true): Tny360CommandResult {
    return this.ask("setVelocity", leaseId, xMS, yMS, yawRadS, clearOverrides);
  }
  setPosture(leaseId: string, p: Tny360Posture, clearOverrides = true): Tny360CommandResult {
    return this.ask("setPosture", leaseId, { ...p }, clearOverrides);
  }
  setEnabledMask(leaseId: string, mask: number): Tny360CommandResult {
    return this.ask("setEnabledMask", leaseId, mask);
  }
  setGait(leaseId: string, gait: number | GaitName): Tny360CommandResult {
    return this.ask("setGait", leaseId, gait);
  }
  setJointAngle(leaseId: string, jointId: number, angleRad: number): Tny360CommandResult {
    return this.ask("setJointAngle", leaseId, jointId, angleRad);
  }
  setJointAngles(leaseId: string, anglesRad: ArrayLike<number>): Tny360CommandResult {
    return this.ask("setJointAngles", leaseId, Array.from(anglesRad));
  }
  setLegPosition(leaseId: string, legId: number, xM: number, yM: number, zM: number, clearOverrides = true): Tny360CommandResult {
    return this.ask("setLegPosition", leaseId, legId, xM, yM, zM, clearOverrides);
  }
  enableSmooth(leaseId: string): Tny360SmoothResult {
    return this.ask("enableSmooth", leaseId);
  }
  disableSmooth(leaseId: string): Tny360SmoothResult {
    return this.ask("disableSmooth", leaseId);
  }

  // ---- the TNY-360 API server's path (serve --tny-server main) -------------------------------

  /** Whether the body serves `action` (asked once per action: the table does not change). */
  serves(action: ActionSpec): boolean {
    let v = this.#serves.get(action);
    if (v === undefined) {
      const m = moduleOf(action);
      v = m ? this.core.call<boolean>("serves", m.code, action.code) : false;
      this.#serves.set(action, v);
    }
    return v;
  }

  /** One decoded request, answered by the core (after its tick for RPC actions). */
  request(leaseId: string | null, module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): Promise<TnyReply> {
    return this.core.callLater<TnyReply>("request", REQUEST_LATER_MS, leaseId, module.code, action.code, args);
  }

  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.core.call("logLine", level, tag, message);
  }

  /** Test hook: run the simulator's own ticks for `ms` while the cycle is stopped (what the body does next). */
  simulatorTicks(ms: number): void {
    this.ask("testTicks", ms);
  }
}

const MODULE_OF = new Map<ActionSpec, ModuleSpec>((MODULES as readonly ModuleSpec[]).flatMap((m) => m.actions.map((a) => [a, m] as const)));
function moduleOf(action: ActionSpec): ModuleSpec | undefined {
  return MODULE_OF.get(action);
}
