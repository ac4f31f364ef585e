/**
 * The main thread's side of a threaded real-time core, whatever the body (src/rt/core-worker.ts is
 * the other side; NaoHost, P7Host and Tny360Host add their body's surface): it starts the worker,
 * mirrors its state, forwards what the robot API and the CLI ask of the body, and watches it.
 *
 * - State: after every cycle the core publishes its state under a seqlock; the host waits for the
 *   sequence to move (Atomics.waitAsync: no polling), copies the newest consistent state into its
 *   own state object and, when the core's cycle count moved, calls the cycle listeners (the stream,
 *   the safety log, safeStop's "next cycle").
 * - Requests: a message to the core, then the host waits (Atomics.wait, at most `requestTimeoutMs`)
 *   for the answer in the shared reply buffer; `callLater` gets its answer as a message instead
 *   (a request the body answers after a tick). Only the host ever waits; the core answers between
 *   cycles. Bodies are validated here first (the API's schemas), so only small requests cross.
 * - Watchdog: no new cycle for `stallAfterMs` → health says the core stalled (link "lost", the
 *   reason, errors.coreStalls); a core that dies → `onDied` (serve prints one line and exits 1).
 *
 * Everything here is prepare side: it may allocate and it may be slow; the core never waits for it.
 */
import { Worker } from "node:worker_threads";
import type { BodyKind } from "../bodies/registry.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { type CoreBaseOptions, type CoreError, type CoreMessage, type CoreReply, CTL, coreRegions, replyRegion, STATE_START } from "../rt/core-shm.js";
import type { LifecycleState, TransitionTiming } from "../rt/lifecycle.js";
import { type AcquireResult, Authority, type AuthorityEvents, DEFAULT_LEASE_MS, Lease, type LeaseInfo, type LeaseSource } from "../runtime/authority.js";
import { MonotonicClock } from "../runtime/clock.js";
import { ESTOP_CLEAR, type EstopRequest, type EstopResetRequest, type EstopState, type StopCategory } from "../runtime/estop.js";
import type { HealthOptions, RobotHealth } from "../runtime/robot.js";

export interface CoreHostOptions {
  /** How long a request waits for the core, ms. Defaults to 500. */
  requestTimeoutMs?: number;
  /** No new cycle for this long counts as a stalled core, ms. Defaults to 10 periods. */
  stallAfterMs?: number;
}

/** The requests to one core: synchronous (the host waits on the reply buffer) or answered later (a message). */
export class CoreLink {
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #reply: Uint8Array;
  readonly #timeoutMs: number;
  #nextId = 1;
  readonly #decoder = new TextDecoder();
  readonly #later = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void; timer: NodeJS.Timeout }>();

  constructor(worker: Worker, buffer: SharedArrayBuffer, timeoutMs: number) {
    this.#worker = worker;
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#reply = replyRegion(buffer);
    this.#timeoutMs = timeoutMs;
  }

  /** Ask the core and wait for its answer (at most the request timeout; then BL_ERR_CORE_UNRESPONSIVE). */
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
    return unwrap(JSON.parse(this.#decoder.decode(this.#reply.slice(0, n))) as CoreReply) as T;
  }

  /** Ask the core; the answer comes as a message (the body answers after a tick). Never blocks. */
  callLater<T>(method: string, timeoutMs: number, ...args: unknown[]): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#later.delete(id);
        reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#later.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#worker.postMessage({ type: "call", id, method, args, async: true });
    });
  }

  /** A `reply` message from the core. */
  settle(id: number, reply: CoreReply): void {
    const p = this.#later.get(id);
    if (!p) return;
    this.#later.delete(id);
    clearTimeout(p.timer);
    try {
      p.resolve(unwrap(reply));
    } catch (e) {
      p.reject(e);
    }
  }

  /** The core is gone: every pending answer fails. */
  failAll(why: string): void {
    for (const [id, p] of this.#later) {
      clearTimeout(p.timer);
      p.reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", why));
      this.#later.delete(id);
    }
  }
}

export function toError(e: CoreError): BodylinkError & { errno?: string } {
  const err = new BodylinkError(e.code as ErrorCode) as BodylinkError & { errno?: string };
  err.message = e.message;
  if (e.errno) err.errno = e.errno;
  return err;
}

function unwrap(r: CoreReply): unknown {
  if (!r.ok) throw toError(r.error);
  return revive(r.value);
}

/** Refusals ({ ok: false, error: {code, message} }) become BodylinkErrors again. */
function revive(v: unknown): unknown {
  if (v && typeof v === "object" && (v as { ok?: unknown }).ok === false && typeof (v as { error?: { code?: unknown } }).error?.code === "string") {
    return { ...(v as object), error: toError((v as { error: CoreError }).error) };
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

/** The core's lifecycle as the host sees it (one request). */
export interface CoreLifecycle {
  readonly state: LifecycleState;
  readonly lastError: string | null;
  readonly driverErrors: number;
  readonly running: boolean;
  readonly timing: TransitionTiming;
}

/** How a body's host reads its state channel (into the host's mirror). */
export interface StateReader<H> {
  readInto(host: H): boolean;
}

export interface CoreStart<H> {
  /** The worker entry beside src/rt/, without extension ("p7-worker"). */
  entry: string;
  stateBytes: number;
  options: CoreBaseOptions & Record<string, unknown>;
  channel(buffer: SharedArrayBuffer, start: number, ctl: Int32Array): StateReader<H>;
}

/**
 * Start a core's worker from dist/ (plain JavaScript beside this file) or from the sources (a small
 * bootstrap registers tsx's loader in the worker first, the way bin/bodylink.js does on the main
 * thread), so the entry loads the same way from both.
 */
function launch(entry: string, workerData: unknown): Worker {
  const workerOpts = { workerData, stdout: false, stderr: false };
  if (import.meta.url.endsWith(".ts")) {
    const src = JSON.stringify(new URL(`../rt/${entry}.ts`, import.meta.url).href);
    return new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => { m.register(); return import(${src}); }).catch((e) => { throw e; });`, { ...workerOpts, eval: true });
  }
  return new Worker(new URL(`../rt/${entry}.js`, import.meta.url), workerOpts);
}

export abstract class CoreHost {
  abstract readonly kind: BodyKind;
  readonly periodMs: number;
  readonly clock = new MonotonicClock();
  readonly authority: HostAuthority;
  defaultStopCategory: StopCategory = 1;
  /** The core's driver name ("sim", "usb", "ws://…"). */
  transportName = "sim";
  /** Nice value the core's thread got (null: it could not raise its priority). */
  nice: number | null = null;
  /** Times the watchdog found the core stalled. */
  stalls = 0;
  protected readonly core: CoreLink;
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #channel: StateReader<CoreHost>;
  readonly #listeners: Array<(seq: number, nowMs: number) => void> = [];
  readonly #stallAfterMs: number;
  #stalled = false;
  #lastCycles = -1;
  #listenedCycles = -1;
  #lastProgressMs = 0;
  #lastHealth: RobotHealth | null = null;
  #watchdog: NodeJS.Timeout | null = null;
  #closed = false;
  #stopping = false;
  #died: ((line: string) => void) | null = null;
  #diedLine: string | null = null;
  readonly #events = new Map<string, Array<(m: CoreMessage & { type: string }) => void>>();

  protected constructor(periodMs: number, worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<never>, opts: CoreHostOptions) {
    this.periodMs = periodMs;
    this.#worker = worker;
    this.core = new CoreLink(worker, buffer, opts.requestTimeoutMs ?? 500);
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#channel = channel as StateReader<CoreHost>;
    this.#stallAfterMs = opts.stallAfterMs ?? 10 * periodMs;
    this.authority = new HostAuthority(this.core, this.clock);
  }

  /**
   * Start the worker and build the host (`make`); resolves with it once the core is configured,
   * cycling and serving, with the core's `ready` message.
   */
  protected static async boot<H extends CoreHost>(spec: CoreStart<H>, make: (worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<H>) => H): Promise<{ host: H; ready: Record<string, unknown> }> {
    const buffer = new SharedArrayBuffer(coreRegions(spec.stateBytes).totalBytes);
    const worker = launch(spec.entry, { buffer, options: spec.options });
    const host = make(worker, buffer, spec.channel(buffer, STATE_START, new Int32Array(buffer, 0, CTL.words)));
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the real-time core exited with code ${code} before it started`));
      worker.once("exit", onExit);
      worker.on("error", (e) => reject(e));
      worker.on("message", (m: CoreMessage) => {
        if (m.type === "ready") {
          host.defaultStopCategory = m.defaultStopCategory;
          host.transportName = m.transport;
          host.nice = m.nice;
          worker.off("exit", onExit);
          resolve(m);
        } else if (m.type === "failed") reject(toError(m.error));
        else host.#onMessage(m);
      });
    });
    worker.on("exit", (code) => host.#onExit(code));
    host.#watch();
    void host.#follow();
    return { host, ready };
  }

  #onMessage(m: CoreMessage): void {
    if (m.type === "event") this.authority.relay(m.event as keyof AuthorityEvents, m.args as never);
    else if (m.type === "reply") this.core.settle(m.id, m.reply);
    else if (m.type === "died") this.#diedLine = `BL_ERR_CORE_DIED: the real-time core died (${m.message}); ${m.detail}`;
    else for (const l of this.#events.get(m.type) ?? []) l(m);
  }

  /** Listen to a body's own messages from the core (e.g. the TNY-360 server's refusals). */
  protected onCoreMessage(type: string, listener: (m: Record<string, unknown>) => void): void {
    const ls = this.#events.get(type) ?? [];
    ls.push(listener as (m: CoreMessage) => void);
    this.#events.set(type, ls);
  }

  #onExit(code: number): void {
    this.#closed = true;
    this.core.failAll("the real-time core is not running");
    if (this.#watchdog) clearInterval(this.#watchdog);
    if (this.#stopping) return;
    const line = this.#diedLine ?? `BL_ERR_CORE_DIED: the real-time core exited with code ${code}`;
    this.#diedLine = line;
    this.#died?.(line);
  }

  /** Called once if the core dies (not on shutdown()). serve prints the line and exits non-zero. */
  onDied(cb: (line: string) => void): void {
    this.#died = cb;
    if (this.#diedLine && this.#closed) cb(this.#diedLine);
  }

  /** Wait for each new state (no polling); copy it; run the listeners when a cycle ran. */
  async #follow(): Promise<void> {
    let seen = Atomics.load(this.#ctl, CTL.stateSeq);
    while (!this.#closed) {
      const w = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t?: number): { async: boolean; value: Promise<string> | string } }).waitAsync(this.#ctl, CTL.stateSeq, seen, 250);
      if (w.async) await w.value;
      seen = Atomics.load(this.#ctl, CTL.stateSeq);
      if (seen & 1) continue; // mid-write: the end of this write notifies again
      if (this.#closed) break;
      if (!this.#channel.readInto(this)) continue;
      this.mirrored(this.#stalled);
      const cycles = Atomics.load(this.#ctl, CTL.cycles);
      if (cycles === this.#listenedCycles) continue; // a request's republish, not a cycle
      this.#listenedCycles = cycles;
      const now = this.clock.nowMs();
      const ls = this.#listeners;
      for (let i = 0; i < ls.length; i++) {
        try {
          ls[i]!(cycles, now);
        } catch (e) {
          console.error(`bodylink: cycle listener threw: ${(e as Error)?.stack ?? e}`);
        }
      }
    }
  }

  /** After each copy of the core's state: a body adjusts its mirror (e.g. link "lost" while `stalled`). */
  protected mirrored(_stalled: boolean): void {}

  /** Copy the newest state now (after a request: its effect is published before the answer). */
  protected refresh(): void {
    this.#channel.readInto(this);
    this.mirrored(this.#stalled);
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
      } else if (!this.#stalled && !this.#stopping && now - this.#lastProgressMs > this.#stallAfterMs && this.#lastHealth?.link !== "stopped") {
        this.#stalled = true;
        this.stalls++;
      }
    }, Math.max(5, Math.round(this.#stallAfterMs / 4)));
    this.#watchdog.unref();
  }

  /** Cycles the core has run (its loop's sequence number). */
  get cycles(): number {
    return Atomics.load(this.#ctl, CTL.cycles);
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

  /** A request whose answer changes the state: the mirror is refreshed before it returns. */
  protected ask<T>(method: string, ...args: unknown[]): T {
    const r = this.core.call<T>(method, ...args);
    this.refresh();
    return r;
  }

  estop(req: EstopRequest): EstopState {
    return this.ask("estop", req);
  }
  emergencyStop(reason: string, category?: StopCategory): EstopState {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }
  resetEstop(req: EstopResetRequest): EstopState {
    return this.ask("resetEstop", req);
  }
  estopState(): EstopState {
    return this.core.call("estopState");
  }

  /** The core's health; while it is stalled (or does not answer), the last one with the watchdog's verdict. */
  health(opts: HealthOptions = {}): RobotHealth {
    let answered = false;
    if (!this.#stalled && !this.#closed) {
      try {
        this.#lastHealth = this.core.call<RobotHealth>("health", opts.windowCycles ?? null);
        answered = true;
      } catch {
        // fall through: the last health, marked below
      }
    }
    const base: RobotHealth = this.#lastHealth ?? { body: this.kind, link: "starting", safetyReason: null, cycle: emptyCycle(this.periodMs), errors: {}, control: null, estop: ESTOP_CLEAR };
    const down = !answered;
    return {
      ...base,
      ...(down ? { link: "lost" as const, safetyReason: this.#closed ? "the real-time core is not running" : `the real-time core stalled: no cycle for more than ${this.#stallAfterMs} ms` } : {}),
      errors: { ...base.errors, coreStalls: this.stalls },
    };
  }

  // ---- lifecycle (the body's, in the core; the worker keeps running) -------------------------

  /** Configure if needed and run the body's cycle (again after `stop()`). */
  async start(): Promise<void> {
    await this.core.callLater("start", 10_000);
    this.refresh();
  }

  /** The body to its safe state, its cycle stopped, its link closed; the core's thread stays (start() again). */
  async stop(): Promise<void> {
    if (this.#closed) return;
    await this.core.callLater("stop", 10_000);
    this.refresh();
  }

  /** The core's lifecycle (state, last error, driver errors, whether its loop runs). */
  lifecycle(): CoreLifecycle {
    return this.core.call("lifecycle");
  }

  /** Resolves once a transition the core's wrapper runs in the background (a driver error) is done. */
  settled(): Promise<void> {
    return this.core.callLater("settled", 10_000);
  }

  /** The body's wrapper finalizes (its safe state, link closed; start() refuses from now on); the core's thread stays until shutdown(). */
  async finalize(): Promise<void> {
    await this.core.callLater("finalize", 10_000);
    this.refresh();
  }

  /** The body stops for good (its safe state, link closed, servers closed) and the core's thread exits. Idempotent. */
  async shutdown(): Promise<void> {
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

  /** Test hook (a core started with testFaults): the driver throws in read and/or write until told otherwise. */
  injectDriverFault(f: { read: boolean; write: boolean }): void {
    this.core.call("testFault", f);
  }
}

function emptyCycle(periodMs: number): RobotHealth["cycle"] {
  const none = { p50: 0, p99: 0, max: 0 };
  return {
    cycles: 0,
    lateCycles: 0,
    windowCycles: 0,
    periodMs: none,
    execMs: none,
    latenessMs: none,
    jitterP99Ms: 0,
    gc: { collections: 0, ms: none },
    nominalPeriodMs: periodMs,
    core: { cpuMs: null, gcCollections: 0, gcMaxMs: 0 },
  };
}
