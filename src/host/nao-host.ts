/**
 * The main thread's side of the NAO's threaded real-time core (src/rt/nao-worker.ts): it starts
 * the worker, mirrors its state, and forwards what the robot API and the CLI ask of the body. It
 * has the surface the API's NAO adapter and routes use (state, prefs, boards, command, smooth
 * motions, e-stop, health, onCycle, authority), so `startApiServer` serves it like a NaoRobot.
 *
 * - State: after every cycle the core publishes its NaoState under a seqlock; the host waits for
 *   the sequence to move (Atomics.waitAsync: no polling), copies the newest consistent state into
 *   its own NaoState and calls the cycle listeners (the stream, the velocity estimate).
 * - Requests: a message to the core, then the host waits (Atomics.wait, at most `requestTimeoutMs`)
 *   for the answer in the shared reply buffer. Only the host ever waits; the core answers between
 *   cycles. Bodies are validated here first (the API's schemas), so only small requests cross.
 * - Watchdog: no new cycle for `stallAfterMs` → health says the core stalled (link "lost", the
 *   reason, errors.coreStalls); a core that dies → `onDied` (serve prints one line and exits 1).
 *
 * Everything here is prepare side: it may allocate and it may be slow; the core never waits for it.
 */
import { Worker } from "node:worker_threads";
import type { CommandProblem, NaoCommandUpdate } from "../bodies/nao/commands.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import { NaoState } from "../bodies/nao/state.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { CTL, type CoreOptions, type CoreReply, NAO_CORE_BYTES, REPLY_START } from "../rt/nao-core-shm.js";
import { type AcquireResult, Authority, type AuthorityEvents, DEFAULT_LEASE_MS, Lease, type LeaseInfo, type LeaseSource } from "../runtime/authority.js";
import { MonotonicClock } from "../runtime/clock.js";
import { ESTOP_CLEAR, type EstopRequest, type EstopResetRequest, type EstopState, type StopCategory } from "../runtime/estop.js";
import { NAO_PERIOD_MS } from "../runtime/nao-robot.js";
import type { HealthOptions, RobotHealth } from "../runtime/robot.js";
import { NaoStateChannel } from "../shm/nao-state.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import { STATE_START } from "../rt/nao-core-shm.js";

export interface NaoHostOptions extends CoreOptions {
  /** How long a request waits for the core, ms. Defaults to 500. */
  requestTimeoutMs?: number;
  /** No new cycle for this long counts as a stalled core, ms. Defaults to 10 periods (120 ms). */
  stallAfterMs?: number;
}

type Refusal = { ok: false; error: BodylinkError };

/** What the core answered, or a thrown BodylinkError when it did not answer in time. */
class CoreLink {
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #reply: Uint8Array;
  readonly #timeoutMs: number;
  #nextId = 1;
  readonly #decoder = new TextDecoder();

  constructor(worker: Worker, buffer: SharedArrayBuffer, timeoutMs: number) {
    this.#worker = worker;
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#reply = new Uint8Array(buffer, REPLY_START);
    this.#timeoutMs = timeoutMs;
  }

  call<T>(method: string, ...args: unknown[]): T {
    const id = this.#nextId++;
    this.#worker.postMessage({ type: "call", id, method, args });
    const deadline = performance.now() + this.#timeoutMs;
    for (;;) {
      const seen = Atomics.load(this.#ctl, CTL.replyId);
      if (seen === id) break;
      const left = deadline - performance.now();
      if (left <= 0) throw new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `${method}: no answer within ${this.#timeoutMs} ms`);
      Atomics.wait(this.#ctl, CTL.replyId, seen, left);
    }
    const n = Atomics.load(this.#ctl, CTL.replyLength);
    const r = JSON.parse(this.#decoder.decode(this.#reply.slice(0, n))) as CoreReply;
    if (!r.ok) throw toError(r.error);
    return revive(r.value) as T;
  }
}

function toError(e: { code: string; status: number; message: string }): BodylinkError {
  const err = new BodylinkError(e.code as ErrorCode);
  err.message = e.message;
  return err;
}

/** Refusals ({ ok: false, error: {code, message} }) become BodylinkErrors again. */
function revive(v: unknown): unknown {
  if (v && typeof v === "object" && (v as { ok?: unknown }).ok === false && typeof (v as { error?: { code?: unknown } }).error?.code === "string") {
    return { ...(v as object), error: toError((v as { error: { code: string; status: number; message: string } }).error) };
  }
  return v;
}

/** The Authority as the host sees it: every question goes to the core's one Authority. */
export class HostAuthority extends Authority {
  readonly #core: CoreLink;
  constructor(core: CoreLink, clock: MonotonicClock) {
    super(clock);
    this.#core = core;
  }
  override holder(): LeaseInfo | null {
    return this.#core.call("holder");
  }
  override acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): AcquireResult {
    const r = this.#core.call<{ ok: true; id: string } | Exclude<AcquireResult, { ok: true }>>("acquire", owner, source, leaseMs);
    return r.ok ? { ok: true, lease: new Lease(this, r.id) } : r;
  }
  override isHeld(id: string | undefined | null): boolean {
    return id ? this.#core.call("isHeld", id) : false;
  }
  override renew(id: string, leaseMs = DEFAULT_LEASE_MS): boolean {
    return this.#core.call("renew", id, leaseMs);
  }
  override release(id: string): boolean {
    return this.#core.call("release", id);
  }
  override revoke(): void {
    this.#core.call("revoke");
  }
  override get estop(): EstopState {
    return this.#core.call("estopState");
  }
  override get latched(): boolean {
    return this.estop.latched;
  }
  /** Events the core's Authority emitted (async: they cross as messages). */
  relay<E extends keyof AuthorityEvents>(event: E, args: AuthorityEvents[E]): void {
    (this.emit as (e: E, ...a: AuthorityEvents[E]) => boolean)(event, ...args);
  }
}

export class NaoHost {
  readonly kind = "nao" as const;
  readonly periodMs = NAO_PERIOD_MS;
  readonly clock = new MonotonicClock();
  /** The newest state the core published (refreshed before every cycle listener runs). */
  readonly state = new NaoState();
  readonly authority: HostAuthority;
  prefs: NaoPreferences | null = null;
  /** Why the body link never has preferences (an upstream LoLA), or null. */
  prefsUnavailable: string | null = null;
  /** With an upstream LoLA: whether it was connected when the core became ready (null otherwise). */
  upstreamConnected: boolean | null = null;
  boards: readonly BoardReport[] = [];
  defaultStopCategory: StopCategory = 1;
  lolaPath: string | null = null;
  transportName = "sim";
  /** Times the watchdog found the core stalled. */
  stalls = 0;
  readonly #worker: Worker;
  readonly #core: CoreLink;
  readonly #ctl: Int32Array;
  readonly #channel: NaoStateChannel;
  readonly #listeners: Array<(seq: number, nowMs: number) => void> = [];
  readonly #stallAfterMs: number;
  #stalled = false;
  #lastCycles = -1;
  #lastProgressMs = 0;
  #lastHealth: RobotHealth | null = null;
  #watchdog: NodeJS.Timeout | null = null;
  #closed = false;
  #died: ((line: string) => void) | null = null;
  #diedLine: string | null = null;

  private constructor(worker: Worker, buffer: SharedArrayBuffer, opts: NaoHostOptions) {
    this.#worker = worker;
    this.#core = new CoreLink(worker, buffer, opts.requestTimeoutMs ?? 500);
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#channel = new NaoStateChannel(buffer, STATE_START, this.#ctl, CTL.stateSeq);
    this.#stallAfterMs = opts.stallAfterMs ?? 10 * NAO_PERIOD_MS;
    this.authority = new HostAuthority(this.#core, this.clock);
  }

  /** Start the core in its worker; resolves once it is configured, cycling and (with `lola`) serving LoLA. */
  static async start(opts: NaoHostOptions): Promise<NaoHost> {
    const buffer = new SharedArrayBuffer(NAO_CORE_BYTES);
    const fromSources = import.meta.url.endsWith(".ts");
    const { requestTimeoutMs: _t, stallAfterMs: _s, ...options } = opts;
    const workerOpts = { workerData: { buffer, options }, stdout: false, stderr: false };
    // From dist/ the worker is plain JavaScript beside this file. From the sources (bin/bodylink.js
    // with a stale dist/, tsx) a small bootstrap registers tsx's loader in the worker first, the
    // way bin/bodylink.js does on the main thread.
    const worker = fromSources
      ? new Worker(
          `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => { m.register(); return import(${JSON.stringify(new URL("../rt/nao-worker.ts", import.meta.url).href)}); }).catch((e) => { throw e; });`,
          { ...workerOpts, eval: true },
        )
      : new Worker(new URL("../rt/nao-worker.js", import.meta.url), workerOpts);
    const host = new NaoHost(worker, buffer, opts);
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the real-time core exited with code ${code} before it started`));
      worker.once("exit", onExit);
      worker.on("error", (e) => reject(e));
      worker.on("message", (m: { type: string; [k: string]: unknown }) => {
        if (m.type === "ready") {
          host.prefs = m.prefs as NaoPreferences | null;
          host.prefsUnavailable = (m.prefsUnavailable as string | null) ?? null;
          host.upstreamConnected = (m.upstreamConnected as boolean | null) ?? null;
          host.boards = m.boards as BoardReport[];
          host.lolaPath = m.lolaPath as string | null;
          host.defaultStopCategory = m.defaultStopCategory as StopCategory;
          host.transportName = m.transport as string;
          worker.off("exit", onExit);
          resolve();
        } else if (m.type === "failed") {
          reject(toError(m.error as { code: string; status: number; message: string }));
        } else host.#onMessage(m);
      });
    });
    worker.on("exit", (code) => host.#onExit(code));
    host.#watch();
    void host.#follow();
    return host;
  }

  #onMessage(m: { type: string; [k: string]: unknown }): void {
    if (m.type === "event") this.authority.relay(m.event as keyof AuthorityEvents, m.args as never);
    else if (m.type === "died") {
      this.#diedLine = `BL_ERR_CORE_DIED: the real-time core died (${String(m.message)}); ${m.safeFrameSent ? `its last frame to the body was sent at stiffness ${m.stiffness}` : "the body's safe frame could not be confirmed"}`;
    }
  }

  #onExit(code: number): void {
    this.#closed = true;
    if (this.#watchdog) clearInterval(this.#watchdog);
    if (this.#stopping) return;
    const line = this.#diedLine ?? `BL_ERR_CORE_DIED: the real-time core exited with code ${code}`;
    this.#diedLine = line;
    this.#died?.(line);
  }

  /** Called once if the core dies (not on stop()). serve prints the line and exits non-zero. */
  onDied(cb: (line: string) => void): void {
    this.#died = cb;
    if (this.#diedLine && this.#closed) cb(this.#diedLine);
  }

  /** Wait for each new state (no polling); copy it; run the listeners. */
  async #follow(): Promise<void> {
    let seen = Atomics.load(this.#ctl, CTL.stateSeq);
    while (!this.#closed) {
      const w = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t?: number): { async: boolean; value: Promise<string> | string } }).waitAsync(
        this.#ctl,
        CTL.stateSeq,
        seen,
        250,
      );
      if (w.async) await w.value;
      seen = Atomics.load(this.#ctl, CTL.stateSeq);
      if (seen & 1) continue; // mid-write: the end of this write notifies again
      if (this.#closed) break;
      if (!this.#channel.readInto(this.state)) continue;
      if (this.#stalled) this.state.link = "lost";
      const now = this.clock.nowMs();
      const ls = this.#listeners;
      for (let i = 0; i < ls.length; i++) {
        try {
          ls[i]!(this.state.seq, now);
        } catch (e) {
          console.error(`bodylink: cycle listener threw: ${(e as Error)?.stack ?? e}`);
        }
      }
    }
  }

  #watch(): void {
    this.#lastProgressMs = this.clock.nowMs();
    this.#watchdog = setInterval(() => {
      const c = Atomics.load(this.#ctl, CTL.cycles);
      const now = this.clock.nowMs();
      if (c !== this.#lastCycles) {
        this.#lastCycles = c;
        this.#lastProgressMs = now;
        this.#stalled = false;
      } else if (!this.#stalled && now - this.#lastProgressMs > this.#stallAfterMs) {
        this.#stalled = true;
        this.stalls++;
      }
    }, Math.max(5, Math.round(this.#stallAfterMs / 4)));
    this.#watchdog.unref();
  }

  /** True while the watchdog finds no new cycle. */
  get stalled(): boolean {
    return this.#stalled;
  }

  onCycle(listener: (seq: number, nowMs: number) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
    };
  }

  // ---- requests (each one answered by the core) ----------------------------------------------

  command(leaseId: string, update: NaoCommandUpdate): { ok: true; problems: CommandProblem[] } | Refusal {
    return this.#core.call("command", leaseId, plainUpdate(update));
  }
  smoothEnable(leaseId: string): { ok: true; estimatedS: number } | Refusal {
    return this.#core.call("smoothEnable", leaseId);
  }
  smoothDisable(leaseId: string): { ok: true; estimatedS: number } | Refusal {
    return this.#core.call("smoothDisable", leaseId);
  }
  get motionActive(): boolean {
    return this.#core.call("motionActive");
  }
  estop(req: EstopRequest): EstopState {
    return this.#core.call("estop", req);
  }
  emergencyStop(reason: string, category?: StopCategory): EstopState {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }
  resetEstop(req: EstopResetRequest): EstopState {
    return this.#core.call("resetEstop", req);
  }
  estopState(): EstopState {
    return this.#core.call("estopState");
  }

  /** The core's health; while it is stalled (or does not answer), the last one with the watchdog's verdict. */
  health(opts: HealthOptions = {}): RobotHealth {
    let answered = false;
    if (!this.#stalled && !this.#closed) {
      try {
        this.#lastHealth = this.#core.call<RobotHealth>("health", opts.windowCycles ?? null);
        answered = true;
      } catch {
        // fall through: the last health, marked below
      }
    }
    const base: RobotHealth = this.#lastHealth ?? { body: "nao", link: "starting", safetyReason: null, cycle: EMPTY_CYCLE, errors: {}, control: null, estop: ESTOP_CLEAR };
    const down = !answered;
    return {
      ...base,
      ...(down ? { link: "lost" as const, safetyReason: this.#closed ? "the real-time core is not running" : `the real-time core stalled: no cycle for more than ${this.#stallAfterMs} ms` } : {}),
      errors: { ...base.errors, coreStalls: this.stalls },
    };
  }

  #stopping = false;

  /** The core stops the body (stiffness 0 frame, link closed, LoLA socket removed) and exits. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopping || this.#closed) return;
    this.#stopping = true;
    const exited = new Promise<void>((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.postMessage({ type: "stop" });
    const timer = setTimeout(() => void this.#worker.terminate(), 3000);
    await exited;
    clearTimeout(timer);
    this.#closed = true;
    if (this.#watchdog) clearInterval(this.#watchdog);
  }

  start(): Promise<void> {
    return Promise.resolve();
  }
}

const EMPTY_CYCLE: RobotHealth["cycle"] = {
  cycles: 0,
  lateCycles: 0,
  windowCycles: 0,
  periodMs: { p50: 0, p99: 0, max: 0 },
  execMs: { p50: 0, p99: 0, max: 0 },
  latenessMs: { p50: 0, p99: 0, max: 0 },
  jitterP99Ms: 0,
  gc: { collections: 0, ms: { p50: 0, p99: 0, max: 0 } },
  nominalPeriodMs: NAO_PERIOD_MS,
  core: { cpuMs: null, gcCollections: 0, gcMaxMs: 0 },
};

/** Typed arrays and plain arrays cross as they are; anything else in an update is dropped here (the core validates). */
function plainUpdate(u: NaoCommandUpdate): NaoCommandUpdate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(u)) out[k] = ArrayBuffer.isView(v) ? v : Array.isArray(v) ? v : Array.from(v as ArrayLike<number>);
  return out as NaoCommandUpdate;
}
