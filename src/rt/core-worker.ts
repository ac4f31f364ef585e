/**
 * The worker side every threaded core shares (one per body: src/rt/nao-worker.ts,
 * p7-worker.ts, tny360-worker.ts give it their body): the body's runtime object runs here with its
 * driver, exchange, safety and arbitration, and the Authority; nothing the main thread does (the
 * robot API, JSON bodies, stream subscribers, a blocked event loop) runs on this thread.
 *
 * What crosses (src/rt/core-shm.ts has the layout; src/host/core-host.ts is the other side;
 * docs/architecture.md, "Threads"). The core never waits for its host:
 * - state, core → host: after every cycle the body's state into the shared region under a seqlock,
 *   and the cycle count into the control words (the host's watchdog and its cycle listeners);
 * - control words and lease mirror, core → host: the lease generation, holder and deadline, the
 *   e-stop latch, after every change (Authority.watch), so the host answers "who holds control"
 *   and checks a lease without asking;
 * - e-stop, host → core: a request counter in the control words, read at the start of every cycle
 *   (Lifecycle.input) and before every request: an e-stop takes effect at the next cycle even if
 *   the host then blocks for good;
 * - the body's own channel (its command mailbox, validated on the host): read at the start of
 *   every cycle too, and before every request (a command posted before a request takes effect
 *   before it, as it would in one thread);
 * - requests, host → core: prepare-side calls (leases, reset, health, lifecycle, the commands
 *   whose answer is the body's) as messages, answered between cycles by message (the host awaits
 *   them with a timeout; it never waits on shared memory). After every request the state is
 *   published again, so the host sees its effect at once;
 * - heartbeat, host → core: a word the host's event loop bumps (CTL.hostBeat); silent past its
 *   bound (CTL.hostTimeoutMs), the core latches a category-1 e-stop itself, source "core", reason
 *   "host unresponsive" (src/rt/host-watch.ts): a wedged main thread leaves a stopped body;
 * - events, core → host: authority changes, e-stop taken, "died".
 *
 * A fatal error (an uncaught exception here) first puts the body in its safe state (the body's
 * `safeNow`, synchronous where the link allows; else `safeLater`, given 200 ms), then tells the
 * host, which exits non-zero with one line.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { BodylinkError } from "../errors.js";
import type { Authority, AuthorityEvents } from "../runtime/authority.js";
import { MonotonicClock, WORKER_WAKE_DEFAULT, type WakeMode } from "../runtime/clock.js";
import type { EstopRequest, EstopResetRequest, EstopState, StopCategory } from "../runtime/estop.js";
import { measureAllocation, sampleAllocationSites } from "../runtime/allocation.js";
import type { HealthOptions, RobotHealth } from "../runtime/robot.js";
import { ESTOP_REQUEST_LAYOUT } from "../shm/control-layout.js";
import { buildViews } from "../shm/layout.js";
import { LeaseMirror } from "../shm/lease-mirror.js";
import { SeqLock } from "../shm/seqlock.js";
import { serveEstopSocket } from "../serve/estop-socket.js";
import { type CoreBaseOptions, type CoreError, type CoreMessage, type CoreNotice, type CoreRegions, type CoreReply, CTL, STATE_START } from "./core-shm.js";
import { type CallMessage, type CommonRequests, type DriverFaults, dispatch, type Handlers, isTestRequest, type RequestTable } from "./core-requests.js";
import { HostWatch, hostUnresponsiveReason, mainThreadWaitClock } from "./host-watch.js";
import type { Lifecycle } from "./lifecycle.js";

/** What a core's runtime object has (NaoRobot, P7Robot, Tny360Robot). */
export interface CoreRobot {
  readonly authority: Authority;
  readonly lifecycle: Lifecycle<unknown, unknown>;
  readonly defaultStopCategory: StopCategory;
  start(): Promise<void>;
  stop(): Promise<void>;
  shutdown(): Promise<void>;
  health(opts?: HealthOptions): RobotHealth;
  estop(req: EstopRequest): EstopState;
  resetEstop(req: EstopResetRequest): EstopState;
  estopState(): EstopState;
  onCycle(listener: (seq: number, nowMs: number) => void): () => void;
}

/** What the runner gives a body's servers in the core's thread. */
export interface CoreControl {
  /**
   * Take what the host posted since the last cycle (an e-stop request, the mailbox) now: a server
   * calls it before it hands a client's command to the robot, so a latch the host requested holds
   * for that command too, not from the next cycle on. Allocation-free when nothing is pending.
   */
  catchUp(): void;
  /**
   * Run `fn` at the start of every cycle, after the e-stop request, the heartbeat and the mailbox
   * were taken (perform side: allocation-free). A server whose clients are read by the cycle
   * rather than by the event loop (the LoLA server's `pollCommands`) reads them here.
   */
  onInput(fn: () => void): void;
}

/** A body's servers in the core's thread (CoreBody.serve). */
export interface ServedByCore<S> {
  close(): Promise<void>;
  /** What `ready` says about them. */
  facts: S;
  /**
   * Dying, once the body's safe state went out: tell every client the state as it is now (the
   * thread exits once it resolves; the NAO's LoLA clients get a last sensor message at stiffness 0
   * before their EOF). Bounded by the server: a client not reading holds the exit a moment at most.
   */
  lastWords?(): Promise<unknown>;
}

/**
 * What one body gives the shared worker. `Q`: its own requests (besides CommonRequests), which its
 * host calls; `Y`: the facts its `ready` carries; `S`: what its servers report once listening.
 */
export interface CoreBody<R extends CoreRobot, O extends CoreBaseOptions, Q extends RequestTable<Q>, Y, S = null> {
  /** The body's state channel over the shared buffer (the core publishes the robot's state into it). */
  channel(buffer: SharedArrayBuffer, start: number, ctl: Int32Array): { publish(robot: R): void };
  /** Build the runtime object (not started). `wrapDriver` is the test-fault proxy or the identity. */
  create(options: O, wrapDriver: <D extends object>(driver: D) => D): Promise<R>;
  /**
   * The body's own host → core channel over its region of the buffer (core-shm.ts): `input` runs at
   * the start of every cycle, after the e-stop request word was read (perform side: allocation-free).
   */
  input?(buffer: SharedArrayBuffer, start: number): (robot: R, nowMs: number) => void;
  /** The body's own requests, besides the common ones (leases, e-stop, health, lifecycle). */
  handlers: Handlers<R, Q>;
  /** Servers that belong to the real-time path (the NAO's LoLA server); what they report once listening. */
  serve?(robot: R, options: O, post: (m: CoreNotice) => void, control: CoreControl): Promise<ServedByCore<S> | null>;
  /** The body's own facts for the host (preferences, boards, where its servers listen …). */
  ready(robot: R, served: S | null): Y;
  /** After every cycle, once the state is published (perform side: allocation-free). The NAO's recording tap. */
  afterCycle?(robot: R, seq: number): void;
  /** The body's driver name (health, serve's lines). */
  transport(robot: R): string;
  /** Its link status as health reports it (`link`), read after every cycle: a constant string, compared by identity. */
  link(robot: R): string;
  /** Dying: the safe state now, synchronously if the link allows; true when it is confirmed sent. */
  safeNow(robot: R): boolean;
  /** Dying, when `safeNow` could not confirm it: the asynchronous safe state (given 200 ms). */
  safeLater(robot: R): Promise<void>;
  /** Dying: what the body was left in, for the one line serve prints ("its last frame … at stiffness 0"). */
  diedDetail(robot: R, confirmed: boolean): string;
}

/** The requests every core answers; the test hooks are answered only by a core started for tests (runCore). */
function commonHandlers<R extends CoreRobot>(post: (m: CoreNotice) => void, faults: DriverFaults): Handlers<R, CommonRequests> {
  return {
    acquire: (r, owner, source, leaseMs) => {
      const got = r.authority.acquire(owner, source, leaseMs);
      return got.ok ? { ok: true, id: got.lease.id } : got;
    },
    renew: (r, id, leaseMs) => r.authority.renew(id, leaseMs),
    release: (r, id) => r.authority.release(id),
    revoke: (r) => r.authority.revoke(),
    holder: (r) => r.authority.holder(),
    isHeld: (r, id) => r.authority.isHeld(id),
    estopState: (r) => r.estopState(),
    estop: (r, req) => r.estop(req),
    resetEstop: (r, req) => r.resetEstop(req),
    health: (r, windowCycles) => r.health(windowCycles === null ? {} : { windowCycles }),
    // The lifecycle, driven from the host like the wrapper itself (test/rt/lifecycle.test.ts).
    start: (r) => r.start(),
    stop: (r) => r.stop(),
    lifecycle: (r) => ({ state: r.lifecycle.state, lastError: r.lifecycle.lastError, driverErrors: r.lifecycle.driverErrors, running: r.lifecycle.loop.running, timing: r.lifecycle.timing }),
    settled: (r) => r.lifecycle.settled(),
    finalize: (r) => r.shutdown(),
    allocation: (r, cycles) => measureAllocation((l) => r.onCycle(l), cycles),
    allocationSites: (r, cycles, intervalBytes, top) => sampleAllocationSites((l) => r.onCycle(l), cycles, intervalBytes, top),
    testStall: (_r, ms, releasePath) => {
      post({ type: "testStalling" }); // delivered while this thread is blocked: the host knows when the stall began
      const end = performance.now() + ms;
      // The core's thread runs nothing else meanwhile: no cycle, no answer. A test ends the stall when
      // it has seen what it waited for (the file appears), not after a guess at how long a loaded machine needs.
      // Blocked, not spinning: a spinning stall took a whole core from the other tests' files for as
      // long as the test ran (core-stall.test: ~15 s of CPU), and a stalled thread runs nothing either way.
      const blocked = new Int32Array(new SharedArrayBuffer(4));
      while (performance.now() < end && !(releasePath !== undefined && existsSync(releasePath))) Atomics.wait(blocked, 0, 0, 2);
      return true;
    },
    testCrash: () => {
      setTimeout(() => {
        throw new Error("test hook: the real-time core crashes (testCrash)");
      }, 0);
      return true;
    },
    testFault: (_r, f) => {
      faults.read = f.read;
      faults.write = f.write;
      return true;
    },
  };
}

export function errorOf(e: unknown): CoreError {
  if (e instanceof BodylinkError) return { code: e.code, status: e.status, message: e.message };
  const errno = (e as NodeJS.ErrnoException)?.code;
  return { code: "BL_ERR_API_INTERNAL", status: 500, message: (e as Error)?.message ?? String(e), ...(typeof errno === "string" ? { errno } : {}) };
}

/** Results carrying a BodylinkError (command refusals) cross as plain data ({ code, status, message }). */
function plain(v: unknown): unknown {
  if (v && typeof v === "object" && "error" in v && (v as { error: unknown }).error instanceof BodylinkError) {
    return { ...(v as object), error: errorOf((v as { error: unknown }).error) };
  }
  return v;
}

/** A driver whose read/write throw while the matching fault is set (test hook only). */
function faultable<D extends object>(driver: D, faults: DriverFaults): D {
  return new Proxy(driver, {
    get(target, key) {
      if (key === "read" && faults.read)
        return () => {
          throw new Error("injected read fault");
        };
      if (key === "write" && faults.write)
        return () => {
          throw new Error("injected write fault");
        };
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * Ask the scheduler for this thread first, where allowed: SCHED_FIFO at `fifo` (util-linux's chrt on
 * this thread's id; HAL runs its real-time thread so), else nice `nice` (per thread on Linux, so
 * the servers keep theirs). An unprivileged user gets neither (EPERM/EACCES): the thread stays as it
 * is, and `ready` says so. Measured at load 15–24 on the 2-core development VM (a bare 12 ms loop
 * in a worker for 15 s, four runs): nice −10 woke 120–240 times more than 6 ms late and 5–6 times
 * more than 24 ms late; SCHED_FIFO with the blocking wake-up (MonotonicClock "block") 0–4 and none.
 */
function raisePriority(fifo: number, nice: number): string {
  if (fifo > 0 && process.platform === "linux") {
    try {
      const tid = readlinkSync("/proc/thread-self").split("/").pop()!;
      execFileSync("chrt", ["-f", "-p", String(fifo), tid], { stdio: "ignore", timeout: 2000 });
      return `SCHED_FIFO ${fifo}`;
    } catch {
      // no chrt, or no privilege: try nice
    }
  }
  try {
    setPriority(0, nice);
    return `nice ${getPriority(0)}`;
  } catch {
    return "default priority (no privilege to raise it)";
  }
}

/**
 * The clock a core's cycle runs on: the wake mode asked for (CoreBaseOptions.wake), else the
 * body's (`fallback`: WORKER_WAKE_DEFAULT, one futex wait per cycle), and the host's requests end
 * its blocking wait early through the wake word (CTL.wake, bumped by CoreLink after every message),
 * so a request is served at once, not at the next cycle. `turnAfterWait`: see
 * MonotonicClockOptions (false for a core whose cycle reads its own inputs). `spinFallback`: the
 * lead when `serve --core-spin-ms` gives none (the NAO's 0: no final spin, docs/performance.md).
 * Call from the body's `create`.
 */
export function coreClock(o: CoreBaseOptions, fallback: WakeMode = WORKER_WAKE_DEFAULT, turnAfterWait = true, spinFallback: number | "auto" = "auto"): MonotonicClock {
  const { buffer } = workerData as { buffer: SharedArrayBuffer };
  return new MonotonicClock({ wake: o.wake ?? fallback, spinMs: o.spinMs ?? spinFallback, interrupt: { words: new Int32Array(buffer, 0, CTL.words), index: CTL.wake }, turnAfterWait });
}

/**
 * Node defines the global `performance` as a lazy accessor: every `performance.now()` in this
 * thread's cycle (the clock, the host watch, the LoLA poll) went through a getter call in an IC
 * stub that the optimiser does not inline (perf: LoadGlobalIC ~2 % of the NAO core's thread). A
 * data property holding the same object is a constant the optimiser folds.
 */
function pinPerformanceGlobal(): void {
  const d = Object.getOwnPropertyDescriptor(globalThis, "performance");
  if (d && !("value" in d)) Object.defineProperty(globalThis, "performance", { value: performance, writable: true, enumerable: true, configurable: true });
}

/** Run `body`'s core on this worker thread (call once, from the body's worker entry). */
export function runCore<R extends CoreRobot, O extends CoreBaseOptions, Q extends RequestTable<Q>, Y, S = null>(body: CoreBody<R, O, Q, Y, S>): void {
  pinPerformanceGlobal();
  const port = parentPort!;
  const { buffer, options, regions } = workerData as { buffer: SharedArrayBuffer; options: O; regions: CoreRegions };
  const ctl = new Int32Array(buffer, 0, CTL.words);
  const channel = body.channel(buffer, STATE_START, ctl);
  const leaseMirror = new LeaseMirror(buffer, regions.leaseStart, ctl, CTL.leaseSeq);
  const estopText = buildViews(ESTOP_REQUEST_LAYOUT, buffer, regions.estopStart);
  const estopTextLock = new SeqLock(ctl, CTL.estopTextSeq);
  const bodyInput = body.input ? body.input(buffer, regions.bodyStart) : null;
  const decoder = new TextDecoder();
  const faults: DriverFaults = { read: false, write: false };
  const post = (m: CoreMessage<Y>): void => port.postMessage(m);
  const common = commonHandlers<R>(post, faults);
  // test hooks ("test…") are answered only by a core started for tests
  const allowed = (method: PropertyKey): boolean => !isTestRequest(method) || (method === "testStall" ? options.testStalls === true : options.testFaults === true);
  const isBodyCall = (m: CallMessage<CommonRequests> | CallMessage<Q>): m is CallMessage<Q> => Object.hasOwn(body.handlers, m.method);
  let robot: R | null = null;
  let closeServers: (() => Promise<void>) | null = null;
  /** CTL.lateCycles and CTL.linkChanges, once the robot runs (main). */
  let publishCounters: (() => void) | null = null;
  let lastWords: (() => Promise<unknown>) | null = null;

  /** The control words and the lease mirror, after every change of holder, deadline or latch (Authority.watch). */
  const publishControl = (r: R): void => {
    const a = r.authority;
    const h = a.activeHolder();
    leaseMirror.publish(h, a.generation);
    Atomics.store(ctl, CTL.leaseGeneration, a.generation);
    Atomics.store(ctl, CTL.leaseHeld, h ? 1 : 0);
    Atomics.store(ctl, CTL.leaseDeadlineCycle, h ? h.expiresAtCycle : 0);
    const e = a.estop;
    Atomics.store(ctl, CTL.estopLatched, e.latched ? 1 + (e.category ?? 0) : 0);
  };

  let estopSeen = 0;
  /**
   * Engage an e-stop the host asked for through the request word, if there is a new one: at the
   * start of every cycle (so it takes effect at the next cycle even if the host then blocks for
   * good) and before every request (a reset or an acquire sent right after an e-stop sees it
   * first). Allocates only when there is a request (its texts; an e-stop is no steady state).
   */
  const pollEstop = (r: R): void => {
    // The check alone, small enough for the optimiser to inline where the cycle calls it (with the
    // taking in the same function it stayed a call into baseline code, ~1.5 % of the proxy's thread).
    const n = Atomics.load(ctl, CTL.estopRequests);
    if (n !== estopSeen) takeEstop(r, n);
  };
  const takeEstop = (r: R, n: number): void => {
    estopSeen = n;
    const code = Atomics.load(ctl, CTL.estopCategory);
    let source = "api";
    let reason = "";
    estopTextLock.read(() => {
      source = decoder.decode(estopText.source.slice(0, estopText.header[0]!));
      reason = decoder.decode(estopText.reason.slice(0, estopText.header[1]!));
    }, 64);
    const state = r.estop({ source, ...(reason ? { reason } : {}), ...(code ? { category: (code - 1) as StopCategory } : {}) });
    Atomics.store(ctl, CTL.estopTaken, n);
    Atomics.notify(ctl, CTL.estopTaken);
    post({ type: "estopTaken", n, state: structuredClone(state) });
  };

  port.on("message", (m: CallMessage<CommonRequests> | CallMessage<Q> | { readonly type: "stop" }) => {
    if (m.type === "stop") {
      void stop().then(() => process.exit(0));
      return;
    }
    const r = robot;
    const respond = (value: CoreReply): void => {
      if (r) {
        channel.publish(r); // the host reads the request's effect at once
        publishCounters?.();
      }
      post({ type: "reply", id: m.id, reply: value });
    };
    const known = isBodyCall(m) || Object.hasOwn(common, m.method);
    if (!r || !known || !allowed(m.method)) return respond({ ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: `core: no ${String(m.method)}` } });
    try {
      pollEstop(r);
      // Commands the host posted before this request take effect before it, as in one thread.
      bodyInput?.(r, performance.now());
      const v = isBodyCall(m) ? dispatch(body.handlers, r, m) : dispatch(common, r, m);
      if (v instanceof Promise) {
        v.then(
          (x) => respond({ ok: true, value: plain(x) }),
          (e: unknown) => respond({ ok: false, error: errorOf(e) }),
        );
      } else respond({ ok: true, value: plain(v) });
    } catch (e) {
      respond({ ok: false, error: errorOf(e) });
    }
  });

  async function stop(): Promise<void> {
    await closeServers?.().catch(() => {});
    closeServers = null;
    await robot?.shutdown().catch(() => {});
  }

  process.on("uncaughtException", (e) => {
    const r = robot;
    let sent = false;
    try {
      if (r) {
        r.authority.revoke();
        sent = body.safeNow(r);
      }
    } catch {
      // the safe state is best effort on the way out
    }
    const finish = async () => {
      try {
        await lastWords?.(); // after the safe state: the clients' last message shows it
      } catch {
        // best effort on the way out
      }
      post({ type: "died", message: (e as Error)?.message ?? String(e), detail: r ? body.diedDetail(r, sent) : "the body was not started" });
      process.exit(70);
    };
    if (sent || !r) void finish();
    else void Promise.race([body.safeLater(r), new Promise((res) => setTimeout(res, 200))]).then(finish, finish);
  });

  async function main(): Promise<void> {
    const scheduling = raisePriority(options.fifoPriority ?? 20, options.nice ?? -10);
    const r = await body.create(options, options.testFaults ? (d) => faultable(d, faults) : (d) => d);
    robot = r;
    r.authority.watch(() => publishControl(r));
    publishControl(r);
    // The host's heartbeat, every cycle: silent past its bound, the core latches a category-1 stop itself.
    const hostWatch = new HostWatch(ctl, mainThreadWaitClock().waited);
    // Wall time, not the cycle's: a lockstep clock (serve --lockstep) runs as fast as its client.
    const watchHost = (): void => {
      if (hostWatch.check(performance.now())) r.estop({ category: 1, source: "core", reason: hostUnresponsiveReason(hostWatch.silentMs, hostWatch.starvedMs, hostWatch.timeoutMs) });
    };
    const inputs: Array<() => void> = [];
    r.lifecycle.input = (now) => {
      pollEstop(r);
      watchHost();
      bodyInput?.(r, now);
      for (let i = 0; i < inputs.length; i++) inputs[i]!();
    };
    await r.start();
    channel.publish(r);
    const control: CoreControl = {
      catchUp: () => {
        pollEstop(r);
        bodyInput?.(r, performance.now());
      },
      onInput: (fn) => {
        inputs.push(fn);
      },
    };
    const served = body.serve ? await body.serve(r, options, post, control) : null;
    if (served?.lastWords) lastWords = () => served.lastWords!();
    // The local e-stop socket on this thread (serve/estop-socket.ts): a pending host request is taken first.
    const estopSocket = options.estopSocket
      ? await serveEstopSocket(options.estopSocket, {
          estop: (req) => {
            pollEstop(r);
            return r.estop(req);
          },
          estopState: () => r.estopState(),
        })
      : null;
    if (served || estopSocket) {
      closeServers = async () => {
        await estopSocket?.close();
        await served?.close();
      };
    }
    // After the servers' listeners (the NAO's LoLA server): their clients' messages leave first,
    // then the host gets the state (it is on nobody's path from the body to a client).
    const after = body.afterCycle;
    const timing = r.lifecycle.loop.timing;
    let late = timing.lateCycles;
    let link = body.link(r);
    Atomics.store(ctl, CTL.lateCycles, late);
    // The safety log's counters, written only when they move: after every cycle, and after every
    // request (stop() changes the link with no cycle after it).
    publishCounters = () => {
      if (timing.lateCycles !== late) {
        late = timing.lateCycles;
        Atomics.store(ctl, CTL.lateCycles, late);
      }
      const l = body.link(r);
      if (l !== link) {
        link = l;
        Atomics.add(ctl, CTL.linkChanges, 1);
      }
    };
    r.onCycle((seq) => {
      channel.publish(r);
      Atomics.store(ctl, CTL.cycles, seq);
      publishCounters!();
      after?.(r, seq);
    });
    for (const ev of ["acquired", "released", "estop", "reset"] as const) {
      r.authority.on(ev, (...args: AuthorityEvents[typeof ev]) => post({ type: "event", event: ev, args: structuredClone(args) }));
    }
    post({ type: "ready", defaultStopCategory: r.defaultStopCategory, transport: body.transport(r), scheduling, estopSocket: estopSocket?.path ?? null, body: body.ready(r, served?.facts ?? null) });
  }

  main().catch((e: unknown) => {
    post({ type: "failed", error: errorOf(e) });
    void stop().then(() => process.exit(1));
  });
}
