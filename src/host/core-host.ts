/**
 * The main thread's side of a threaded real-time core, whatever the body (src/rt/core-worker.ts is
 * the other side; NaoHost, P7Host and Tny360Host add their body's surface): it starts the worker,
 * mirrors its state, forwards what the robot API and the CLI ask of the body, and watches it.
 *
 * - State: after every cycle the core publishes its state under a seqlock. A host whose body reads
 *   it on demand (`onDemand`, the NAO's) copies the newest consistent state when it is read
 *   (`sync`: one Atomics.load when nothing changed) and wakes per cycle only while someone listens
 *   to every cycle (onCycle: a recording, the fleet, safeStop's "next cycle"); then it waits for the
 *   sequence to move (Atomics.waitAsync: no polling), copies the state and calls the listeners.
 *   A consumer that needs a sample now and then (the 20 Hz stream) takes `onSample`: a timer at its
 *   own rate, not a wake-up per cycle. Nothing runs on this thread per cycle for nobody.
 * - Reads without asking: who holds control, whether a lease is held, the e-stop latch come from
 *   the control words and the lease mirror the core updates after every change (core-shm.ts).
 * - E-stop: written into the control words (a request counter the core reads at the start of
 *   every cycle), so it takes effect at the core's next cycle whatever this thread does next.
 * - Body commands that need no answer from the body (the NAO's joints/LEDs/sonar, the P7's
 *   moves, the TNY-360's velocity, posture, enable bits, gait, joint overrides): validated here
 *   with the in-thread robot's own rules and answers, then written into the body's preallocated
 *   command mailbox (src/shm/mailbox.ts, the body region) under the lease's generation, answered
 *   at once; the core takes the newest at the start of its next cycle (and before any request)
 *   and drops it if the lease ended since (errors.staleCommands).
 * - Requests: a message to the core, answered by message (`call`: a promise, rejected with
 *   BL_ERR_CORE_UNRESPONSIVE after the timeout, BL_ERR_CORE_DIED once the core is gone): leases,
 *   reset, health, the lifecycle, and the commands whose answer is the body's (the NAO's smooth
 *   motions, the P7's clearError, the TNY-360's smooth sequences and leg positions). The core
 *   answers between cycles. This thread never waits for its core: there is no blocking path.
 * - Watchdog: no new cycle for `stallAfterMs` → health says the core stalled (link "lost", the
 *   reason, errors.coreStalls); a core that dies → `onDied` (serve prints one line and exits 1).
 * - Heartbeat, the other way: a timer on this thread's event loop bumps CTL.hostBeat; the core
 *   latches a category-1 e-stop when it stands still past CTL.hostTimeoutMs (src/rt/host-watch.ts):
 *   STARTUP_HOST_TIMEOUT_MS from boot, the serving bound once `watchHost` is called.
 *
 * Everything here is prepare side: it may allocate and it may be slow; the core never waits for it.
 */
import { Worker } from "node:worker_threads";
import { createInterface } from "node:readline";
import type { BodyKind } from "../bodies/registry.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { EventEmitter } from "node:events";
import {
  type CoreBaseOptions,
  type CoreError,
  type CoreMessage,
  type CoreNotice,
  type CoreRegions,
  type CoreReply,
  CTL,
  coreRegions,
  HOST_TIMEOUT_RANGE_MS,
  hostBeatEveryMs,
  STARTUP_HOST_TIMEOUT_MS,
  STATE_START,
} from "../rt/core-shm.js";
import type { CallMessage, CommonRequests, RequestAnswer, RequestArgs, RequestTable } from "../rt/core-requests.js";
import { type AcquireResultOf, type AuthorityEvents, type ControlAuthority, DEFAULT_LEASE_MS, type LeaseHandle, type LeaseInfo, type LeaseSource } from "../runtime/authority.js";
import { MonotonicClock, wakeInterrupt } from "../runtime/clock.js";
import { ESTOP_CLEAR, type EstopRequest, type EstopResetRequest, type EstopState, estopText, type StopCategory } from "../runtime/estop.js";
import { ESTOP_REQUEST_LAYOUT } from "../shm/control-layout.js";
import { buildViews } from "../shm/layout.js";
import { LeaseMirror } from "../shm/lease-mirror.js";
import { SeqLock } from "../shm/seqlock.js";
import type { HealthOptions, RobotHealth, SafetyCounters } from "../runtime/robot.js";
import type { AllocationSample, AllocationSite } from "../runtime/allocation.js";

export interface CoreHostOptions {
  /** How long a request waits for the core's answer, ms. Defaults to 500. */
  requestTimeoutMs?: number;
  /** No new cycle for this long counts as a stalled core, ms. Defaults to 10 periods. */
  stallAfterMs?: number;
}

type Acquired = AcquireResultOf<LeaseHandle>;

/** A host's start options split into the core's (they cross in workerData) and the host's own. */
export function splitHostOptions<O extends CoreHostOptions>(opts: O): { core: Omit<O, keyof CoreHostOptions>; host: CoreHostOptions } {
  const { requestTimeoutMs, stallAfterMs, ...core } = opts;
  return {
    core,
    host: { ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}), ...(stallAfterMs !== undefined ? { stallAfterMs } : {}) },
  };
}

/** Requests a core may leave unanswered before the host refuses more (each is refused at once, 503). */
export const CORE_MAX_PENDING = 256;
/** Ordered requests (smooth motions, clearError) on their way, timed out or not, before more are refused. */
export const CORE_MAX_ORDERED = 64;

/** One request on its way: settled by the core's reply (method syntax: each call's own answer type). */
interface Pending {
  resolve(value: unknown): void;
  reject(e: unknown): void;
  readonly timer: NodeJS.Timeout;
}

/**
 * The requests to one core, each answered later by a message (never waited for): the ids, the
 * timeouts, the bounds, the ordering. Typed by CoreLink, its per-table view.
 */
export class CoreChannel {
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #timeoutMs: number;
  #nextId = 1;
  readonly #later = new Map<number, Pending>();

  constructor(worker: Worker, buffer: SharedArrayBuffer, timeoutMs: number) {
    this.#worker = worker;
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#timeoutMs = timeoutMs;
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** An ordered request the core has not answered yet. */
  get ordering(): boolean {
    return this.#ordered.size > 0;
  }

  /** Runs when the last ordered request on its way has been answered by the core. */
  onOrderedDone: (() => void) | null = null;
  readonly #ordered = new Set<number>();

  /** Post `message(id)` and settle `settle` with the core's answer (CoreLink builds both, typed). */
  send(ordered: boolean, method: string, timeoutMs: number, message: (id: number) => { readonly type: "call"; readonly id: number }, settle: Omit<Pending, "timer">): void {
    if (this.#down) return settle.reject(this.#down);
    // A stalled core answers nothing: bound what waits for it (the worker's message queue, the
    // pending answers, the ordered requests that hold the mailbox back even after they timed out).
    if (this.#later.size >= CORE_MAX_PENDING || (ordered && this.#ordered.size >= CORE_MAX_ORDERED)) {
      const n = ordered ? this.#ordered.size : this.#later.size;
      return settle.reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `${method}: refused, ${n} ${ordered ? "ordered " : ""}requests to the core are still unanswered`));
    }
    const id = this.#nextId++;
    if (ordered) this.#ordered.add(id);
    const timer = setTimeout(() => {
      this.#later.delete(id);
      settle.reject(new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `${method}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    this.#later.set(id, { resolve: (v) => settle.resolve(v), reject: (e) => settle.reject(e), timer });
    this.#worker.postMessage(message(id));
    wakeInterrupt(this.#ctl, CTL.wake); // a core asleep until its next cycle serves it now
  }

  /** A `reply` message from the core. */
  settle(id: number, reply: CoreReply): void {
    if (this.#ordered.delete(id) && this.#ordered.size === 0) this.onOrderedDone?.();
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
    this.#ordered.clear();
    for (const [id, p] of this.#later) {
      clearTimeout(p.timer);
      p.reject(this.#down);
      this.#later.delete(id);
    }
  }
}

/**
 * The requests to one core as its table `Q` types them (CommonRequests and its body's,
 * src/rt/core-options.ts): a call names one of its requests and passes that request's arguments,
 * and its promise has that request's answer; a name or an argument the table does not have is a
 * compile error (test/host/core-requests.types.ts). Several views may share one channel.
 */
export class CoreLink<Q extends RequestTable<Q>> {
  readonly channel: CoreChannel;

  constructor(channel: CoreChannel) {
    this.channel = channel;
  }

  get timeoutMs(): number {
    return this.channel.timeoutMs;
  }

  /** An ordered request the core has not answered yet (the host holds its mailbox writes back). */
  get ordering(): boolean {
    return this.channel.ordering;
  }

  /** Ask the core; the answer comes as a message, within `timeoutMs` or BL_ERR_CORE_UNRESPONSIVE. Never blocks. */
  call<K extends keyof Q & string>(method: K, timeoutMs: number, ...args: RequestArgs<Q, K>): Promise<RequestAnswer<Q, K>> {
    return this.#send(false, method, timeoutMs, args);
  }

  /**
   * Like call, for a request whose effect on the body must come before the body commands
   * posted after it (a smooth motion, clearError): until the core has answered it — even after
   * the promise timed out — `ordering` is true, and the host holds its mailbox writes back; then
   * the channel's `onOrderedDone` runs.
   */
  callOrdered<K extends keyof Q & string>(method: K, timeoutMs: number, ...args: RequestArgs<Q, K>): Promise<RequestAnswer<Q, K>> {
    return this.#send(true, method, timeoutMs, args);
  }

  #send<K extends keyof Q & string>(ordered: boolean, method: K, timeoutMs: number, args: RequestArgs<Q, K>): Promise<RequestAnswer<Q, K>> {
    return new Promise<RequestAnswer<Q, K>>((resolve, reject) => {
      const message = (id: number): CallMessage<Q, K> => ({ type: "call", id, method, args });
      this.channel.send(ordered, method, timeoutMs, message, { resolve, reject });
    });
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
  readonly core: CoreLink<CommonRequests>;
  readonly ctl: Int32Array;
  readonly mirror: LeaseMirror;
}

/**
 * The Authority as a host sees it (one per threaded core; the host never waits for its core):
 * reads come from the core's control words and lease mirror in shared memory; changes go to the
 * core's one Authority and answer by message (promises, bounded by the request timeout). Events
 * are the core's, relayed. The latch: the core's control word, or this host's request the core has
 * not taken yet (commands are refused from the request on), shown as the core last reported it.
 */
export class HostAuthority extends EventEmitter<AuthorityEvents> implements ControlAuthority {
  readonly #core: CoreLink<CommonRequests>;
  readonly #ctl: Int32Array;
  readonly #mirror: LeaseMirror;
  readonly #gen = new Int32Array(1);
  /** The latch as the core last reported it (a reply, an event, estopTaken). */
  #estop: EstopState = ESTOP_CLEAR;
  /** The latch this host asked for, shown until the core reports its own. */
  #requested: EstopState | null = null;

  constructor(parts: HostControlParts) {
    super();
    this.#core = parts.core;
    this.#ctl = parts.ctl;
    this.#mirror = parts.mirror;
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
    return Atomics.load(this.#ctl, CTL.estopLatched) !== 0 || this.pendingEstop();
  }
  get estop(): EstopState {
    return !this.#estop.latched && this.#requested && this.latched ? this.#requested : this.#estop;
  }
  /** An e-stop request the core has not taken yet. */
  pendingEstop(): boolean {
    return Atomics.load(this.#ctl, CTL.estopRequests) !== Atomics.load(this.#ctl, CTL.estopTaken);
  }
  /** The latch the host asked for (shown until the core reports its own). */
  requested(s: EstopState): void {
    this.#requested = s;
  }
  /** The core's latch as a reply reported it. */
  known(s: EstopState): void {
    this.#estop = s;
  }

  async acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): Promise<Acquired> {
    const r = await this.#core.call("acquire", this.#core.timeoutMs, owner, source, leaseMs);
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
    return this.#core.call("renew", this.#core.timeoutMs, id, leaseMs);
  }
  release(id: string): Promise<boolean> {
    return this.#core.call("release", this.#core.timeoutMs, id);
  }
  revoke(): Promise<void> {
    return this.#core.call("revoke", this.#core.timeoutMs);
  }
  /** Events the core's Authority emitted (async: they cross as messages). */
  relay<E extends keyof AuthorityEvents>(event: E, args: AuthorityEvents[E]): void {
    if (event === "estop" || event === "reset") this.#estop = args[0] as EstopState;
    (this.emit as (e: E, ...a: AuthorityEvents[E]) => boolean)(event, ...args);
  }
}

import type { CoreLifecycle } from "../rt/core-requests.js";
export type { CoreLifecycle } from "../rt/core-requests.js";

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
 * thread), so the entry loads the same way from both. From the sources with
 * BODYLINK_CORE_FROM_DIST=1 (the test suite's global setup sets it once dist/ is fresh, built from
 * these sources): dist/'s compiled entry, the code a spawned `bodylink` runs, without tsx compiling
 * the core's modules again in every worker (a start took 1.1-1.9 s so, 0.3-0.5 s from dist/, at a
 * load of ~6).
 */
function launch(entry: string, workerData: unknown): Worker {
  // The core's stderr (its LoLA server's lines, its lifecycle's) comes here line by line, for the runtime's log.
  const workerOpts = { workerData, stdout: false, stderr: true };
  let worker: Worker;
  if (import.meta.url.endsWith(".ts") && process.env.BODYLINK_CORE_FROM_DIST === "1") {
    worker = new Worker(new URL(`../../dist/rt/${entry}.js`, import.meta.url), workerOpts);
  } else if (import.meta.url.endsWith(".ts")) {
    const src = JSON.stringify(new URL(`../rt/${entry}.ts`, import.meta.url).href);
    worker = new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => { m.register(); return import(${src}); }).catch((e) => { throw e; });`, {
      ...workerOpts,
      eval: true,
    });
  } else worker = new Worker(new URL(`../rt/${entry}.js`, import.meta.url), workerOpts);
  createInterface({ input: worker.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => coreLogSink(line));
  return worker;
}

/** Where every core's own lines go: this process's stderr, unless serve routes them into its log. */
let coreLogSink: (line: string) => void = (line) => process.stderr.write(`${line}\n`);

/** Route every core's stderr lines (one call per line) to `sink`; serve points it at its log (serve/logger.ts). */
export function setCoreLogSink(sink: (line: string) => void): void {
  coreLogSink = sink;
}

/** Each buffer's regions, set by `boot` before the host is built (subclass constructors stay as they are). */
const REGIONS = new WeakMap<SharedArrayBuffer, CoreRegions>();

/**
 * `Q`: the body's own requests (src/rt/core-options.ts: NaoRequests, P7Requests, Tny360Requests),
 * called through `core` beside the common ones.
 */
export abstract class CoreHost<Q extends RequestTable<Q> = Record<never, never>> {
  abstract readonly kind: BodyKind;
  readonly periodMs: number;
  readonly clock = new MonotonicClock();
  /** The body's control authority as this host sees it. */
  abstract readonly authority: HostAuthority;
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
  protected readonly core: CoreLink<CommonRequests & Q>;
  /** The requests every core answers (the same channel as `core`). */
  readonly #common: CoreLink<CommonRequests>;
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
  /**
   * One timer for the watchdog and the heartbeat (a timer, so the beat stops exactly when this
   * event loop does): idle timers coalesce, so an idle host wakes once per tick, not once per timer.
   */
  #tick: NodeJS.Timeout | null = null;
  /** How often the heartbeat must beat at least, ms (hostBeatEveryMs of the bound). */
  #beatMs = 100;
  /** Whether the #follow loop runs (it runs while there are cycle listeners, or always without onDemand). */
  #following = false;
  /** The state sequence last copied, and whether that copy was made while stalled (sync). */
  #copiedSeq = -1;
  #copiedStalled = false;
  /** A copy was made in this synchronous stretch: reads until the next microtask see the same state. */
  #pinned = false;
  readonly #unpin = (): void => {
    this.#pinned = false;
  };
  #closed = false;
  #stopping = false;
  #died: ((line: string) => void) | null = null;
  #diedLine: string | null = null;
  readonly #estopText: ReturnType<typeof buildViews<typeof ESTOP_REQUEST_LAYOUT>>;
  readonly #estopTextLock: SeqLock;
  /** E-stop requests waiting for the core to take them (resolved by its "estopTaken" message). */
  readonly #estopWaits: Array<{ n: number; resolve(s: EstopState): void; reject(e: Error): void; timer: NodeJS.Timeout }> = [];
  /** The category of requests not taken yet: a later category-1 request never weakens a pending 0. */
  #pendingCategory: StopCategory | null = null;

  protected constructor(periodMs: number, worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<never>, opts: CoreHostOptions) {
    this.periodMs = periodMs;
    this.#worker = worker;
    const requests = new CoreChannel(worker, buffer, opts.requestTimeoutMs ?? 500);
    requests.onOrderedDone = () => this.commandsReleased();
    this.core = new CoreLink(requests);
    this.#common = new CoreLink(requests);
    this.#ctl = new Int32Array(buffer, 0, CTL.words);
    this.#channel = channel as StateReader<CoreHost>;
    this.#stallAfterMs = opts.stallAfterMs ?? 10 * periodMs;
    const r = REGIONS.get(buffer)!;
    this.#estopText = buildViews(ESTOP_REQUEST_LAYOUT, buffer, r.estopStart);
    this.#estopTextLock = new SeqLock(this.#ctl, CTL.estopTextSeq);
    this.control = { core: this.#common, ctl: this.#ctl, mirror: new LeaseMirror(buffer, r.leaseStart, this.#ctl, CTL.leaseSeq) };
    this.#beatEvery(Atomics.load(this.#ctl, CTL.hostTimeoutMs));
  }

  /**
   * True for a host whose body's state is read on demand (its `state` getter calls `sync`): then
   * nothing follows the core per cycle unless a cycle listener asks for it. False (the default):
   * the host copies every state the core publishes, as its reads are plain fields.
   */
  protected get onDemand(): boolean {
    return false;
  }

  /** Beat now and then every tenth of `timeoutMs` (at most every 100 ms), on the one idle timer. */
  #beatEvery(timeoutMs: number): void {
    this.#beatMs = hostBeatEveryMs(timeoutMs);
    Atomics.add(this.#ctl, CTL.hostBeat, 1);
    this.#arm();
  }

  /**
   * The one idle timer, at the heartbeat's period (100 ms at the 1 s default bound): it beats (one
   * Atomics.add) and checks the core's progress, so the watchdog sees a stall within one tick after
   * `stallAfterMs`. Before it was two timers (the watchdog at stallAfterMs / 4, the NAO's 30 ms, and
   * the beat): 43 wake-ups a second of an idle host where 10 do.
   */
  #arm(): void {
    if (this.#tick) clearInterval(this.#tick);
    const every = this.#beatMs;
    this.#tick = setInterval(this.#onTick, every);
    this.#tick.unref();
  }

  readonly #onTick = (): void => {
    Atomics.add(this.#ctl, CTL.hostBeat, 1);
    if (this.#watching) this.#checkProgress(this.clock.nowMs());
  };

  /**
   * From now on the core latches a category-1 e-stop ("host unresponsive", source "core") when this
   * thread's event loop has not run its heartbeat timer for `timeoutMs` (serve calls it once its
   * servers listen; until then the bound is STARTUP_HOST_TIMEOUT_MS). The latch holds until a
   * reset, which only a responsive host can send.
   */
  watchHost(timeoutMs: number): void {
    const [min, max] = HOST_TIMEOUT_RANGE_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < min || timeoutMs > max) throw new RangeError(`host timeout must be an integer ${min}..${max} ms, got ${timeoutMs}`);
    this.#beatEvery(timeoutMs);
    Atomics.store(this.#ctl, CTL.hostTimeoutMs, timeoutMs);
  }

  /** The heartbeat bound the core applies now, ms. */
  get hostTimeoutMs(): number {
    return Atomics.load(this.#ctl, CTL.hostTimeoutMs);
  }

  /**
   * Start the worker and build the host (`make`); resolves with it once the core is configured,
   * cycling and serving, with the core's `ready` message.
   */
  protected static async boot<H extends CoreHost<RequestTable<never>>, Y>(
    spec: CoreStart<H>,
    make: (worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<H>, regions: CoreRegions) => H,
  ): Promise<{ host: H; ready: Y }> {
    const regions = coreRegions(spec.stateBytes, spec.options.bodyBytes ?? 0);
    const buffer = new SharedArrayBuffer(regions.totalBytes);
    REGIONS.set(buffer, regions);
    // Watched from the core's first cycle, with the start-up bound until the host serves (watchHost).
    Atomics.store(new Int32Array(buffer, 0, CTL.words), CTL.hostTimeoutMs, STARTUP_HOST_TIMEOUT_MS);
    const worker = launch(spec.entry, { buffer, options: spec.options, regions });
    const host = make(worker, buffer, spec.channel(buffer, STATE_START, new Int32Array(buffer, 0, CTL.words)), regions);
    const ready = await new Promise<Y>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the real-time core exited with code ${code} before it started`));
      worker.once("exit", onExit);
      worker.on("error", (e) => reject(e));
      worker.on("message", (m: CoreMessage<Y>) => {
        if (m.type === "ready") {
          host.defaultStopCategory = m.defaultStopCategory;
          host.transportName = m.transport;
          host.scheduling = m.scheduling;
          worker.off("exit", onExit);
          resolve(m.body);
        } else if (m.type === "failed") reject(toError(m.error));
        else host.#onMessage(m);
      });
    });
    worker.on("exit", (code) => host.#onExit(code));
    host.#watch();
    host.#copy();
    if (!host.onDemand) host.#startFollowing();
    return { host, ready };
  }

  #onMessage(m: CoreNotice): void {
    if (m.type === "event") this.authority.relay(m.event, m.args);
    else if (m.type === "reply") this.core.channel.settle(m.id, m.reply);
    else if (m.type === "estopTaken") this.#estopTaken(m.n, m.state);
    else if (m.type === "testStalling") for (const f of this.#stallsBegun.splice(0)) f();
    else if (m.type === "died") this.#diedLine = `BL_ERR_CORE_DIED: the real-time core died (${m.message}); ${m.detail}`;
    else if (m.type === "refused") for (const l of this.#refused) l(m.what, m.detail);
  }

  /** A server in the core's thread refused a client (access checks, limits): for the safety log. */
  onRefused(listener: (what: string, detail: string) => void): void {
    this.#refused.push(listener);
  }
  readonly #refused: Array<(what: string, detail: string) => void> = [];

  #onExit(code: number): void {
    this.#closed = true;
    this.core.channel.failAll("the real-time core is not running");
    for (const w of this.#estopWaits.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new BodylinkError("BL_ERR_CORE_DIED", "the real-time core is not running"));
    }
    if (this.#tick) clearInterval(this.#tick);
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

  #startFollowing(): void {
    if (this.#following || this.#closed) return;
    this.#following = true;
    void this.#follow();
  }

  /**
   * Wait for each new state (no polling); copy it; run the listeners when a cycle ran. On an
   * on-demand host only while there are listeners: the loop ends at the first wake-up without one.
   */
  async #follow(): Promise<void> {
    // Before the sequence is read (SeqLock.end's rule): the core notifies only while this is set.
    Atomics.store(this.#ctl, CTL.stateFollowers, 1);
    let seen = Atomics.load(this.#ctl, CTL.stateSeq);
    while (!this.#closed && (!this.onDemand || this.#listeners.length > 0)) {
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
      if (!this.#copy()) continue;
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
    Atomics.store(this.#ctl, CTL.stateFollowers, 0);
    this.#following = false;
  }

  /** Copy the newest state into the mirror now (and the watchdog's verdict over it); false when the core was mid-write on every try. */
  #copy(): boolean {
    const seq = Atomics.load(this.#ctl, CTL.stateSeq);
    if (!this.#channel.readInto(this)) return false;
    this.#copiedSeq = seq;
    this.#copiedStalled = this.#stalled;
    this.mirrored(this.#stalled);
    if (!this.#pinned) {
      this.#pinned = true;
      queueMicrotask(this.#unpin);
    }
    return true;
  }

  /**
   * On demand (an `onDemand` host's state getter): copy the newest state if the core published
   * since the last copy, or the watchdog's verdict changed. Nothing but one Atomics.load when
   * neither did; within one synchronous stretch (until the next microtask) the first copy holds,
   * so a message built from several reads (the stream's envelope and fields) shows one cycle.
   */
  protected sync(): void {
    if (this.#pinned) return;
    if (Atomics.load(this.#ctl, CTL.stateSeq) === this.#copiedSeq && this.#stalled === this.#copiedStalled) return;
    this.#copy();
  }

  /** The core answered the last ordered request (CoreLink.callOrdered): write the body commands held back meanwhile. */
  protected commandsReleased(): void {}

  /** After each copy of the core's state: a body adjusts its mirror (e.g. link "lost" while `stalled`). */
  protected mirrored(_stalled: boolean): void {}

  /** Copy the newest state now (after a request: its effect is published before the answer). */
  protected refresh(): void {
    this.#pinned = false; // a request's effect is newer than what this stretch copied
    this.#copy();
  }

  /** The watchdog runs on the idle timer (#onTick) from now on. */
  #watching = false;

  #watch(): void {
    this.#lastProgressMs = this.clock.nowMs();
    this.#watching = true;
  }

  #checkProgress(now: number): void {
    const c = Atomics.load(this.#ctl, CTL.cycles);
    if (c !== this.#lastCycles) {
      this.#lastCycles = c;
      this.#lastProgressMs = now;
      this.#stalled = false;
    } else if (!this.#stalled && !this.#stopping && now - this.#lastProgressMs > this.#stallAfterMs && this.#lastHealth?.link !== "stopped") {
      this.#stalled = true;
      this.stalls++;
    }
  }

  /**
   * BodyRuntime.safetyCounters, from the control words the core writes when they move (no request
   * crosses): its late cycles, and its link changes with this thread's own verdict folded in (a
   * core that stalled or stopped reads "lost" in health, so that counts as a change too).
   */
  safetyCounters(): SafetyCounters {
    const down = this.#stalled || this.#closed ? 1 : 0;
    return { lateCycles: Atomics.load(this.#ctl, CTL.lateCycles), linkChanges: Atomics.load(this.#ctl, CTL.linkChanges) * 2 + down };
  }

  /** Cycles the core has run (its loop's sequence number). */
  get cycles(): number {
    return Atomics.load(this.#ctl, CTL.cycles);
  }

  /** True while this thread follows the core per cycle (a cycle listener, or a host that is not `onDemand`). For tests and benches. */
  get following(): boolean {
    return this.#following;
  }

  /** True while the watchdog finds no new cycle. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * Call `listener` after every cycle the core runs (with the state copied first). On an on-demand
   * host this thread wakes per cycle only while there is such a listener.
   */
  onCycle(listener: (seq: number, nowMs: number) => void): () => void {
    this.#listeners.push(listener);
    this.#startFollowing();
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
    };
  }

  /**
   * Call `listener` every `periodMs` (this thread's timer) when the core ran a cycle since the last
   * call, with the newest state copied first: a consumer that samples (the 20 Hz stream) wakes this
   * thread at its own rate, not at the body's. Returns an unsubscribe.
   */
  onSample(periodMs: number, listener: (seq: number, nowMs: number) => void): () => void {
    if (!(periodMs > 0 && Number.isFinite(periodMs))) throw new RangeError(`periodMs must be a positive number, got ${periodMs}`);
    let last = -1;
    const t = setInterval(() => {
      const cycles = Atomics.load(this.#ctl, CTL.cycles);
      if (cycles === last || this.#closed) return;
      last = cycles;
      this.#pinned = false;
      this.#copy();
      try {
        listener(cycles, this.clock.nowMs());
      } catch (e) {
        console.error(`bodylink: sample listener threw: ${(e as Error)?.stack ?? e}`);
      }
    }, periodMs);
    t.unref();
    return () => clearInterval(t);
  }

  /**
   * Emergency stop through the control words: the request is in shared memory before this returns,
   * and the core engages it at the start of its next cycle whatever this thread does next (blocks,
   * stalls). Resolves with the latch once the core took it, rejects with BL_ERR_CORE_UNRESPONSIVE
   * when it took none within the timeout (it stays requested: a core that cycles again takes it),
   * BL_ERR_CORE_DIED when the core is gone.
   */
  estop(req: EstopRequest): Promise<EstopState> {
    if (this.#closed) return Promise.reject(new BodylinkError("BL_ERR_CORE_DIED", "the real-time core is not running"));
    const n = this.#requestEstop(req);
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
    // Read before the request counts as pending: a pending request makes the authority show the
    // latch last requested, which after a reset is a previous stop's (test/fleet/estop-reply.test.ts).
    const shown = this.authority.estop.latched;
    const t = this.#estopText;
    this.#estopTextLock.begin();
    t.header[0] = encoder.encodeInto(source, t.source).written;
    t.header[1] = encoder.encodeInto(reason, t.reason).written;
    this.#estopTextLock.end();
    Atomics.store(ctl, CTL.estopCategory, category + 1);
    const n = Atomics.add(ctl, CTL.estopRequests, 1) + 1;
    if (!shown) {
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

  emergencyStop(reason: string, category?: StopCategory): Promise<EstopState> {
    return this.estop({ source: "local", reason, ...(category === undefined ? {} : { category }) });
  }
  resetEstop(req: EstopResetRequest): Promise<EstopState> {
    return this.#common.call("resetEstop", this.core.timeoutMs, req).then((s) => {
      this.authority.known(s);
      this.refresh();
      return s;
    });
  }
  /** The latch as known now (never waits). */
  estopState(): EstopState {
    return this.authority.estop;
  }

  /** The core's health; while it is stalled (or does not answer), the last one with the watchdog's verdict. */
  health(opts: HealthOptions = {}): Promise<RobotHealth> {
    if (this.#stalled || this.#closed) return Promise.resolve(this.#verdict(false));
    return this.#common.call("health", this.core.timeoutMs, opts.windowCycles ?? null).then(
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
    const base: RobotHealth = this.#lastHealth ?? {
      body: this.kind,
      link: "starting",
      safety: "none",
      safetyReason: null,
      cycle: emptyCycle(this.periodMs),
      errors: {},
      control: null,
      estop: ESTOP_CLEAR,
      sim: null,
    };
    const down = !answered;
    return {
      ...base,
      ...(down
        ? {
            link: "lost" as const,
            safety: this.#closed ? ("core_stopped" as const) : ("core_stalled" as const),
            safetyReason: this.#closed ? "the real-time core is not running" : `the real-time core stalled: no cycle for more than ${this.#stallAfterMs} ms`,
          }
        : {}),
      errors: this.#withHostErrors(base.errors),
      ...(down ? { estop: this.authority.estop } : {}),
    };
  }

  // ---- lifecycle (the body's, in the core; the worker keeps running) -------------------------

  /** Configure if needed and run the body's cycle (again after `stop()`). */
  async start(): Promise<void> {
    await this.#common.call("start", 10_000);
    this.refresh();
  }

  /** The body to its safe state, its cycle stopped, its link closed; the core's thread stays (start() again). */
  async stop(): Promise<void> {
    if (this.#closed) return;
    await this.#common.call("stop", 10_000);
    this.refresh();
  }

  /** The core's lifecycle (state, last error, driver errors, whether its loop runs). */
  lifecycle(): Promise<CoreLifecycle> {
    return this.#common.call("lifecycle", this.core.timeoutMs);
  }

  /** Resolves once a transition the core's wrapper runs in the background (a driver error) is done. */
  settled(): Promise<void> {
    return this.#common.call("settled", 10_000);
  }

  /** The body's wrapper finalizes (its safe state, link closed; start() refuses from now on); the core's thread stays until shutdown(). */
  async finalize(): Promise<void> {
    await this.#common.call("finalize", 10_000);
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
    if (this.#tick) clearInterval(this.#tick);
  }

  /**
   * What the core's thread allocates over `cycles` of its cycles from the next one: JS heap and
   * external bytes, and the collections meanwhile (runtime/allocation.ts). For benches and tests.
   */
  measureAllocation(cycles: number): Promise<AllocationSample> {
    return this.#common.call("allocation", 10_000 + cycles * this.periodMs * 4, cycles);
  }

  /** Where the core's thread allocates over `cycles` cycles: V8's sampling heap profile, per function. */
  allocationSites(cycles: number, intervalBytes = 256, top = 12): Promise<{ cycles: number; sites: AllocationSite[]; totalBytes: number }> {
    return this.#common.call("allocationSites", 10_000 + cycles * this.periodMs * 4, cycles, intervalBytes, top);
  }

  /** Test hook (a core started with testStalls): block the core's thread for `ms`, or until the file `releasePath` exists; resolves once it is blocked. */
  testStallCore(ms: number, releasePath?: string): Promise<void> {
    const begun = new Promise<void>((resolve) => this.#stallsBegun.push(resolve));
    void this.#common.call("testStall", ms + 10_000, ms, releasePath).catch(() => {});
    return begun;
  }
  readonly #stallsBegun: Array<() => void> = [];

  /** Test hook (a core started with testFaults): the core's thread throws, uncaught, as a bug in it would. */
  testCrashCore(): void {
    void this.#common.call("testCrash", 10_000).catch(() => {});
  }

  /** Test hook (a core started with testFaults): the driver throws in read and/or write until told otherwise. */
  injectDriverFault(f: { read: boolean; write: boolean }): Promise<boolean> {
    return this.#common.call("testFault", this.core.timeoutMs, f);
  }
}

const encoder = new TextEncoder();

function emptyCycle(periodMs: number): RobotHealth["cycle"] {
  const none = { p50: 0, p99: 0, max: 0 };
  return {
    cycles: 0,
    lateCycles: 0,
    lateCyclesOwnWork: 0,
    missedCycles: 0,
    windowCycles: 0,
    periodMs: none,
    execMs: none,
    latenessMs: none,
    jitterP99Ms: 0,
    gc: { collections: 0, ms: none },
    nominalPeriodMs: periodMs,
    core: { cpuMs: null, wakeups: null, spunMs: 0, gcCollections: 0, gcMaxMs: 0, gcByKind: {} },
  };
}
