/**
 * The main thread's side of a threaded real-time core, whatever the body (src/rt/core-worker.ts is
 * the other side; NaoHost, P7Host and Tny360Host add their body's surface): it starts the worker,
 * mirrors its state, forwards what the robot API and the CLI ask of the body, and watches it.
 *
 * - State: after every cycle the core publishes its state under a seqlock; the host waits for the
 *   sequence to move (Atomics.waitAsync: no polling), copies the newest consistent state into its
 *   own state object and, when the core's cycle count moved, calls the cycle listeners (the stream,
 *   the safety log, safeStop's "next cycle").
 * - Reads without asking: who holds control, whether a lease is held, the e-stop latch come from
 *   the control words and the lease mirror the core updates after every change (core-shm.ts).
 * - E-stop: written into the control words (a request counter the core reads at the start of
 *   every cycle), so it takes effect at the core's next cycle whatever this thread does next.
 * - Requests: a message to the core, answered by message (`callLater`: a promise, rejected with
 *   BL_ERR_CORE_UNRESPONSIVE after the timeout): a host with `asyncRequests` (the NAO) never
 *   waits for its core. Otherwise (P7, TNY-360 for now) the host waits on the shared reply buffer
 *   (Atomics.wait, at most `requestTimeoutMs`). The core answers between cycles. Bodies are
 *   validated here first (the API's schemas), so only small requests cross.
 * - Watchdog: no new cycle for `stallAfterMs` → health says the core stalled (link "lost", the
 *   reason, errors.coreStalls); a core that dies → `onDied` (serve prints one line and exits 1).
 *
 * Everything here is prepare side: it may allocate and it may be slow; the core never waits for it.
 */
import { Worker } from "node:worker_threads";
import type { BodyKind } from "../bodies/registry.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { EventEmitter } from "node:events";
import { type CoreBaseOptions, type CoreError, type CoreMessage, type CoreRegions, type CoreReply, CTL, coreRegions, replyRegion, STATE_START } from "../rt/core-shm.js";
import type { LifecycleState, TransitionTiming } from "../rt/lifecycle.js";
import {
  type AcquireResult,
  type AcquireResultOf,
  Authority,
  type AuthorityEvents,
  type Awaitable,
  type ControlAuthority,
  DEFAULT_LEASE_MS,
  Lease,
  type LeaseHandle,
  type LeaseInfo,
  type LeaseSource,
} from "../runtime/authority.js";
import { MonotonicClock, wakeInterrupt } from "../runtime/clock.js";
import { ESTOP_CLEAR, type EstopRequest, type EstopResetRequest, type EstopState, estopText, type StopCategory } from "../runtime/estop.js";
import { ESTOP_REQUEST_LAYOUT } from "../shm/control-layout.js";
import { buildViews } from "../shm/layout.js";
import { LeaseMirror } from "../shm/lease-mirror.js";
import { SeqLock } from "../shm/seqlock.js";
import type { HealthOptions, RobotHealth } from "../runtime/robot.js";
import type { AllocationSample, AllocationSite } from "../runtime/allocation.js";

export interface CoreHostOptions {
  /** How long a request waits for the core's answer, ms. Defaults to 500. */
  requestTimeoutMs?: number;
  /** Requests answer by message (promises); the host's thread never waits for its core. Defaults to false (the reply buffer). */
  asyncRequests?: boolean;
  /** No new cycle for this long counts as a stalled core, ms. Defaults to 10 periods. */
  stallAfterMs?: number;
}

type Acquired = AcquireResultOf<LeaseHandle>;

/** A host's start options split into the core's (they cross in workerData) and the host's own. */
export function splitHostOptions<O extends CoreHostOptions>(opts: O): { core: Omit<O, keyof CoreHostOptions>; host: CoreHostOptions } {
  const { requestTimeoutMs, stallAfterMs, asyncRequests, ...core } = opts;
  return {
    core,
    host: { ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}), ...(stallAfterMs !== undefined ? { stallAfterMs } : {}), ...(asyncRequests !== undefined ? { asyncRequests } : {}) },
  };
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

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Ask the core and wait for its answer (at most the request timeout; then BL_ERR_CORE_UNRESPONSIVE). */
  call<T>(method: string, ...args: unknown[]): T {
    const id = this.#nextId++;
    this.#worker.postMessage({ type: "call", id, method, args });
    wakeInterrupt(this.#ctl, CTL.wake); // a core asleep until its next cycle serves it now
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
    if (this.#down) return Promise.reject(this.#down);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#later.delete(id);
        reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#later.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#worker.postMessage({ type: "call", id, method, args, async: true });
      wakeInterrupt(this.#ctl, CTL.wake);
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

  #down: BodylinkError | null = null;

  /** The core is gone: every pending answer fails, and so does every later request (BL_ERR_CORE_DIED). */
  failAll(why: string): void {
    this.#down = new BodylinkError("BL_ERR_CORE_DIED", why);
    for (const [id, p] of this.#later) {
      clearTimeout(p.timer);
      p.reject(this.#down);
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

/** What a host's authority is built from (CoreHost.control). */
export interface HostControlParts {
  readonly core: CoreLink;
  readonly ctl: Int32Array;
  readonly mirror: LeaseMirror;
  readonly clock: MonotonicClock;
}

/** The latch as a host knows it: the core's control word, its own request not yet taken, the core's last report. */
class HostLatch {
  readonly #ctl: Int32Array;
  estop: EstopState = ESTOP_CLEAR;
  requested: EstopState | null = null;
  constructor(ctl: Int32Array) {
    this.#ctl = ctl;
  }
  pending(): boolean {
    return Atomics.load(this.#ctl, CTL.estopRequests) !== Atomics.load(this.#ctl, CTL.estopTaken);
  }
  get latched(): boolean {
    return Atomics.load(this.#ctl, CTL.estopLatched) !== 0 || this.pending();
  }
  get state(): EstopState {
    return !this.estop.latched && this.requested && this.latched ? this.requested : this.estop;
  }
}

/** What CoreHost needs of its authority, whichever kind. */
export interface HostAuthorityControl extends ControlAuthority {
  readonly latched: boolean;
  readonly estop: EstopState;
  /** An e-stop request the core has not taken yet. */
  pendingEstop(): boolean;
  /** The latch the host asked for (shown until the core reports its own). */
  requested(s: EstopState): void;
  /** The core's latch as a reply reported it. */
  known(s: EstopState): void;
  relay<E extends keyof AuthorityEvents>(event: E, args: AuthorityEvents[E]): void;
}

/**
 * The Authority as a host that never waits sees it (the NAO's): reads come from the core's
 * control words and lease mirror in shared memory; changes go to the core's one Authority and
 * answer by message (promises, bounded by the request timeout). Events are the core's, relayed.
 */
export class HostAuthority extends EventEmitter<AuthorityEvents> implements ControlAuthority, HostAuthorityControl {
  readonly #core: CoreLink;
  readonly #mirror: LeaseMirror;
  readonly #latch: HostLatch;
  readonly #gen = new Int32Array(1);

  constructor(parts: HostControlParts) {
    super();
    this.#core = parts.core;
    this.#mirror = parts.mirror;
    this.#latch = new HostLatch(parts.ctl);
  }

  holder(): LeaseInfo | null {
    return this.#mirror.read();
  }
  /** The holder's generation as the core published it (names the lease in a command mailbox). */
  generation(): number {
    this.#mirror.read(this.#gen);
    return this.#gen[0]!;
  }
  isHeld(id: string | undefined | null): boolean {
    if (!id) return false;
    const h = this.#mirror.read();
    return h !== null && h.id === id;
  }
  /** Latched in the core, or requested here and not taken yet (commands are refused from the request on). */
  get latched(): boolean {
    return this.#latch.latched;
  }
  get estop(): EstopState {
    return this.#latch.state;
  }
  pendingEstop(): boolean {
    return this.#latch.pending();
  }
  requested(s: EstopState): void {
    this.#latch.requested = s;
  }
  known(s: EstopState): void {
    this.#latch.estop = s;
  }

  async acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): Promise<Acquired> {
    const r = await this.#core.callLater<{ ok: true; id: string } | Exclude<Acquired, { ok: true }>>("acquire", this.#core.timeoutMs, owner, source, leaseMs);
    if (!r.ok) return r;
    const id = r.id;
    const mirror = this.#mirror;
    const lease: LeaseHandle = {
      id,
      get info() {
        const h = mirror.read();
        return h && h.id === id ? h : null;
      },
      release: () => this.release(id),
    };
    return { ok: true, lease };
  }
  renew(id: string, leaseMs = DEFAULT_LEASE_MS): Promise<boolean> {
    return this.#core.callLater("renew", this.#core.timeoutMs, id, leaseMs);
  }
  release(id: string): Promise<boolean> {
    return this.#core.callLater("release", this.#core.timeoutMs, id);
  }
  revoke(): Promise<void> {
    return this.#core.callLater("revoke", this.#core.timeoutMs);
  }
  /** Events the core's Authority emitted (async: they cross as messages). */
  relay<E extends keyof AuthorityEvents>(event: E, args: AuthorityEvents[E]): void {
    if (event === "estop" || event === "reset") this.#latch.estop = args[0] as EstopState;
    (this.emit as (e: E, ...a: AuthorityEvents[E]) => boolean)(event, ...args);
  }
}

/**
 * The Authority as a host that still waits for its core sees it (P7, TNY-360 for now; callers use
 * it as a synchronous Authority): reads from the mirror like HostAuthority, changes on the reply
 * buffer (Atomics.wait, at most the request timeout, then BL_ERR_CORE_UNRESPONSIVE).
 */
export class SyncHostAuthority extends Authority implements HostAuthorityControl {
  readonly #core: CoreLink;
  readonly #mirror: LeaseMirror;
  readonly #latch: HostLatch;
  constructor(parts: HostControlParts) {
    super(parts.clock);
    this.#core = parts.core;
    this.#mirror = parts.mirror;
    this.#latch = new HostLatch(parts.ctl);
  }
  override holder(): LeaseInfo | null {
    return this.#mirror.read();
  }
  override acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): AcquireResult {
    const r = this.#core.call<{ ok: true; id: string } | Exclude<AcquireResult, { ok: true }>>("acquire", owner, source, leaseMs);
    return r.ok ? { ok: true, lease: new Lease(this, r.id) } : r;
  }
  override isHeld(id: string | undefined | null): boolean {
    if (!id) return false;
    const h = this.#mirror.read();
    return h !== null && h.id === id;
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
    return this.#latch.state;
  }
  override get latched(): boolean {
    return this.#latch.latched;
  }
  pendingEstop(): boolean {
    return this.#latch.pending();
  }
  requested(s: EstopState): void {
    this.#latch.requested = s;
  }
  known(s: EstopState): void {
    this.#latch.estop = s;
  }
  relay<E extends keyof AuthorityEvents>(event: E, args: AuthorityEvents[E]): void {
    if (event === "estop" || event === "reset") this.#latch.estop = args[0] as EstopState;
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

/** Each buffer's regions, set by `boot` before the host is built (subclass constructors stay as they are). */
const REGIONS = new WeakMap<SharedArrayBuffer, CoreRegions>();

export abstract class CoreHost {
  abstract readonly kind: BodyKind;
  readonly periodMs: number;
  readonly clock = new MonotonicClock();
  /** The body's control authority as this host sees it (HostAuthority or SyncHostAuthority, per body). */
  abstract readonly authority: HostAuthorityControl;
  /** What a subclass builds its authority from. */
  protected readonly control: HostControlParts;
  defaultStopCategory: StopCategory = 1;
  /** The core's driver name ("sim", "usb", "ws://…"). */
  transportName = "sim";
  /** How the core's thread is scheduled ("SCHED_FIFO 20", "nice -10", …), once started. */
  scheduling = "";
  /** Times the watchdog found the core stalled. */
  stalls = 0;
  readonly #hostErrors: Record<string, number> = {};
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
  /** Requests answer by message (CoreHostOptions.asyncRequests). */
  protected readonly asyncRequests: boolean;
  readonly #estopText: ReturnType<typeof buildViews<typeof ESTOP_REQUEST_LAYOUT>>;
  readonly #estopTextLock: SeqLock;
  /** E-stop requests waiting for the core to take them (resolved by its "estopTaken" message). */
  readonly #estopWaits: Array<{ n: number; resolve(s: EstopState): void; reject(e: Error): void; timer: NodeJS.Timeout }> = [];
  /** The category of requests not taken yet: a later category-1 request never weakens a pending 0. */
  #pendingCategory: StopCategory | null = null;

  protected constructor(periodMs: number, worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<never>, opts: CoreHostOptions) {
    this.periodMs = periodMs;
    this.#worker = worker;
    this.core = new CoreLink(worker, buffer, opts.requestTimeoutMs ?? 500);
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#channel = channel as StateReader<CoreHost>;
    this.#stallAfterMs = opts.stallAfterMs ?? 10 * periodMs;
    this.asyncRequests = opts.asyncRequests ?? false;
    const r = REGIONS.get(buffer)!;
    this.#estopText = buildViews(ESTOP_REQUEST_LAYOUT, buffer, r.estopStart);
    this.#estopTextLock = new SeqLock(this.#ctl, CTL.estopTextSeq);
    this.control = { core: this.core, ctl: this.#ctl, mirror: new LeaseMirror(buffer, r.leaseStart, this.#ctl, CTL.leaseSeq), clock: this.clock };
  }

  /**
   * Start the worker and build the host (`make`); resolves with it once the core is configured,
   * cycling and serving, with the core's `ready` message.
   */
  protected static async boot<H extends CoreHost>(spec: CoreStart<H>, make: (worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<H>, regions: CoreRegions) => H): Promise<{ host: H; ready: Record<string, unknown> }> {
    const regions = coreRegions(spec.stateBytes, spec.options.bodyBytes ?? 0);
    const buffer = new SharedArrayBuffer(regions.totalBytes);
    REGIONS.set(buffer, regions);
    const worker = launch(spec.entry, { buffer, options: spec.options, regions });
    const host = make(worker, buffer, spec.channel(buffer, STATE_START, new Int32Array(buffer, 0, CTL.words)), regions);
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the real-time core exited with code ${code} before it started`));
      worker.once("exit", onExit);
      worker.on("error", (e) => reject(e));
      worker.on("message", (m: CoreMessage) => {
        if (m.type === "ready") {
          host.defaultStopCategory = m.defaultStopCategory;
          host.transportName = m.transport;
          host.scheduling = m.scheduling;
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
    else if (m.type === "estopTaken") this.#estopTaken(m.n, m.state as EstopState);
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
    for (const w of this.#estopWaits.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new BodylinkError("BL_ERR_CORE_DIED", "the real-time core is not running"));
    }
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

  /**
   * Emergency stop through the control words: the request is in shared memory before this returns,
   * and the core engages it at the start of its next cycle whatever this thread does next (blocks,
   * stalls). With `asyncRequests`: resolves with the latch once the core took it, rejects with
   * BL_ERR_CORE_UNRESPONSIVE when it took none within the timeout (it stays requested: a core that
   * cycles again takes it), BL_ERR_CORE_DIED when the core is gone. Otherwise it waits for the
   * core's answer on the reply buffer, as the other requests do.
   */
  estop(req: EstopRequest): Awaitable<EstopState> {
    if (this.#closed) {
      const gone = new BodylinkError("BL_ERR_CORE_DIED", "the real-time core is not running");
      if (this.asyncRequests) return Promise.reject(gone);
      throw gone;
    }
    const n = this.#requestEstop(req);
    if (!this.asyncRequests) return this.ask("estopState"); // answered after the core engaged it (it reads the word first)
    return new Promise<EstopState>((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#estopWaits.findIndex((w) => w.timer === timer);
        if (i >= 0) this.#estopWaits.splice(i, 1);
        reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `emergency stop: requested, but the core ran no cycle within ${this.core.timeoutMs} ms (it engages at the core's next cycle)`));
      }, this.core.timeoutMs);
      this.#estopWaits.push({ n, resolve, reject, timer });
    });
  }

  /** Write the request into the control words (never waits); its number. */
  #requestEstop(req: EstopRequest): number {
    const ctl = this.#ctl;
    const asked = req.category ?? this.defaultStopCategory;
    const category: StopCategory = this.authority.pendingEstop() && this.#pendingCategory === 0 ? 0 : asked;
    this.#pendingCategory = category;
    const source = estopText(req.source, "unknown");
    const reason = estopText(req.reason, "no reason given");
    const t = this.#estopText;
    this.#estopTextLock.begin();
    t.header[0] = encoder.encodeInto(source, t.source).written;
    t.header[1] = encoder.encodeInto(reason, t.reason).written;
    this.#estopTextLock.end();
    Atomics.store(ctl, CTL.estopCategory, category + 1);
    const n = Atomics.add(ctl, CTL.estopRequests, 1) + 1;
    if (!this.authority.estop.latched) {
      this.authority.requested({ latched: true, reason, source, sinceEpochMs: this.clock.epochMs(), category, phase: category === 0 ? "cut" : "settling" });
    }
    return n;
  }

  #estopTaken(n: number, state: EstopState): void {
    this.authority.known(state);
    if (n === Atomics.load(this.#ctl, CTL.estopRequests)) this.#pendingCategory = null;
    for (let i = this.#estopWaits.length - 1; i >= 0; i--) {
      const w = this.#estopWaits[i]!;
      if (w.n <= n) {
        clearTimeout(w.timer);
        this.#estopWaits.splice(i, 1);
        w.resolve(state);
      }
    }
    this.refresh();
  }

  emergencyStop(reason: string, category?: StopCategory): Awaitable<EstopState> {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }
  resetEstop(req: EstopResetRequest): Awaitable<EstopState> {
    if (!this.asyncRequests) return this.ask("resetEstop", req);
    return this.core.callLater<EstopState>("resetEstop", this.core.timeoutMs, req).then((s) => {
      this.authority.known(s);
      this.refresh();
      return s;
    });
  }
  /** The latch as known now (never waits with `asyncRequests`). */
  estopState(): EstopState {
    return this.asyncRequests ? this.authority.estop : this.core.call("estopState");
  }

  /** The core's health; while it is stalled (or does not answer), the last one with the watchdog's verdict. */
  health(opts: HealthOptions = {}): Awaitable<RobotHealth> {
    if (!this.asyncRequests) {
      let answered = false;
      if (!this.#stalled && !this.#closed) {
        try {
          this.#lastHealth = this.core.call<RobotHealth>("health", opts.windowCycles ?? null);
          answered = true;
        } catch {
          // fall through: the last health, marked below
        }
      }
      return this.#verdict(answered);
    }
    if (this.#stalled || this.#closed) return Promise.resolve(this.#verdict(false));
    return this.core.callLater<RobotHealth>("health", this.core.timeoutMs, opts.windowCycles ?? null).then(
      (h) => {
        this.#lastHealth = h;
        return this.#verdict(true);
      },
      () => this.#verdict(false),
    );
  }

  /** The core's counters plus what this thread refused itself before anything crossed (and the watchdog's stalls). */
  #withHostErrors(core: RobotHealth["errors"]): RobotHealth["errors"] {
    const errors: Record<string, number> = { ...core, coreStalls: this.stalls };
    for (const k in this.#hostErrors) errors[k] = (errors[k] ?? 0) + this.#hostErrors[k]!;
    return errors;
  }

  /** A command this thread refused (validated here, never sent): counted into health's errors[key] with the core's own. */
  protected countHostError(key: string): void {
    this.#hostErrors[key] = (this.#hostErrors[key] ?? 0) + 1;
  }

  #verdict(answered: boolean): RobotHealth {
    const base: RobotHealth = this.#lastHealth ?? { body: this.kind, link: "starting", safety: "none", safetyReason: null, cycle: emptyCycle(this.periodMs), errors: {}, control: null, estop: ESTOP_CLEAR };
    const down = !answered;
    return {
      ...base,
      ...(down ? { link: "lost" as const, safety: this.#closed ? ("core_stopped" as const) : ("core_stalled" as const), safetyReason: this.#closed ? "the real-time core is not running" : `the real-time core stalled: no cycle for more than ${this.#stallAfterMs} ms` } : {}),
      errors: this.#withHostErrors(base.errors),
      ...(down && this.asyncRequests ? { estop: this.authority.estop } : {}),
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
    wakeInterrupt(this.#ctl, CTL.wake);
    const timer = setTimeout(() => void this.#worker.terminate(), 3000);
    await exited;
    clearTimeout(timer);
    this.#closed = true;
    if (this.#watchdog) clearInterval(this.#watchdog);
  }

  /**
   * What the core's thread allocates over `cycles` of its cycles from the next one: JS heap and
   * external bytes, and the collections meanwhile (runtime/allocation.ts). For benches and tests.
   */
  measureAllocation(cycles: number): Promise<AllocationSample> {
    return this.core.callLater("allocation", 10_000 + cycles * this.periodMs * 4, cycles);
  }

  /** Where the core's thread allocates over `cycles` cycles: V8's sampling heap profile, per function. */
  allocationSites(cycles: number, intervalBytes = 256, top = 12): Promise<{ cycles: number; sites: AllocationSite[]; totalBytes: number }> {
    return this.core.callLater("allocationSites", 10_000 + cycles * this.periodMs * 4, cycles, intervalBytes, top);
  }

  /** Test hook (a core started with testStalls): block the core's thread for `ms` (fire and forget). */
  testStallCore(ms: number): void {
    void this.core.callLater("testStall", ms + 10_000, ms).catch(() => {});
  }

  /** Test hook (a core started with testFaults): the driver throws in read and/or write until told otherwise. */
  injectDriverFault(f: { read: boolean; write: boolean }): void {
    this.core.call("testFault", f);
  }
}

const encoder = new TextEncoder();

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
