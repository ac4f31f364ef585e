/**
 * The worker side every threaded core shares (one per body: src/rt/nao-worker.ts,
 * p7-worker.ts, tny360-worker.ts give it their body): the body's runtime object runs here with its
 * driver, exchange, safety and arbitration, and the Authority; nothing the main thread does (the
 * robot API, JSON bodies, stream subscribers, a blocked event loop) runs on this thread.
 *
 * What crosses (src/host/core-host.ts is the other side; docs/architecture.md, "Threads"):
 * - state, core → host: after every cycle the body's state into the shared region under a seqlock,
 *   and the cycle count into the control block (the host's watchdog and its cycle listeners);
 * - requests, host → core: prepare-side calls (leases, commands the host validated, e-stop, health,
 *   lifecycle) as messages, answered between cycles: a synchronous one through the shared reply
 *   buffer the host waits on (the host waits for the core, never the other way round), one whose
 *   answer comes later (a TNY-360 RPC) as a message. After every request the state is published
 *   again, so the host sees its effect (a cleared error id) at once;
 * - events, core → host: authority changes, "died".
 *
 * A fatal error (an uncaught exception here) first puts the body in its safe state (the body's
 * `safeNow`, synchronous where the link allows; else `safeLater`, given 200 ms), then tells the
 * host, which exits non-zero with one line.
 */
import { getPriority, setPriority } from "node:os";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { BodylinkError } from "../errors.js";
import type { Authority } from "../runtime/authority.js";
import type { EstopRequest, EstopResetRequest, EstopState, StopCategory } from "../runtime/estop.js";
import type { HealthOptions, RobotHealth } from "../runtime/robot.js";
import { type CoreBaseOptions, type CoreError, type CoreMessage, type CoreReply, CTL, replyRegion, STATE_START } from "./core-shm.js";
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

/** A request handler: runs on the core's thread between cycles; may return a promise (answered as a message). */
export type CoreHandler<R> = (robot: R, ...args: never[]) => unknown;

/** The driver faults a test can switch on (CoreBaseOptions.testFaults). */
export interface DriverFaults {
  read: boolean;
  write: boolean;
}

/** What one body gives the shared worker. */
export interface CoreBody<R extends CoreRobot, O extends CoreBaseOptions> {
  /** The body's state channel over the shared buffer (the core publishes the robot's state into it). */
  channel(buffer: SharedArrayBuffer, start: number, ctl: Int32Array): { publish(robot: R): void };
  /** Build the runtime object (not started). `wrapDriver` is the test-fault proxy or the identity. */
  create(options: O, wrapDriver: <D extends object>(driver: D) => D): Promise<R>;
  /** The body's own requests, besides the common ones (leases, e-stop, health, lifecycle). */
  handlers: Record<string, CoreHandler<R>>;
  /** Servers that belong to the real-time path (the NAO's LoLA server); what `ready` should say about them. */
  serve?(robot: R, options: O, port: MessagePort): Promise<{ close(): Promise<void>; ready: Record<string, unknown> }>;
  /** The body's own facts for the host (preferences, boards …). */
  ready?(robot: R): Record<string, unknown>;
  /** After every cycle, once the state is published (perform side: allocation-free). The NAO's recording tap. */
  afterCycle?(robot: R, seq: number): void;
  /** The body's driver name (health, serve's lines). */
  transport(robot: R): string;
  /** Dying: the safe state now, synchronously if the link allows; true when it is confirmed sent. */
  safeNow(robot: R): boolean;
  /** Dying, when `safeNow` could not confirm it: the asynchronous safe state (given 200 ms). */
  safeLater(robot: R): Promise<void>;
  /** Dying: what the body was left in, for the one line serve prints ("its last frame … at stiffness 0"). */
  diedDetail(robot: R, confirmed: boolean): string;
}

const COMMON: Record<string, CoreHandler<CoreRobot>> = {
  acquire: (r, owner: string, source: "api" | "cli", leaseMs: number) => {
    const got = r.authority.acquire(owner, source, leaseMs);
    return got.ok ? { ok: true, id: got.lease.id } : got;
  },
  renew: (r, id: string, leaseMs: number) => r.authority.renew(id, leaseMs),
  release: (r, id: string) => r.authority.release(id),
  revoke: (r) => r.authority.revoke(),
  holder: (r) => r.authority.holder(),
  isHeld: (r, id: string) => r.authority.isHeld(id),
  estopState: (r) => r.estopState(),
  estop: (r, req: never) => r.estop(req),
  resetEstop: (r, req: never) => r.resetEstop(req),
  // JSON has no undefined: the host sends null for "the whole ring".
  health: (r, windowCycles: number | null) => r.health(windowCycles === null ? {} : { windowCycles }),
  // The lifecycle, driven from the host like the wrapper itself (test/rt/lifecycle.test.ts).
  start: (r) => r.start(),
  stop: (r) => r.stop(),
  lifecycle: (r) => ({ state: r.lifecycle.state, lastError: r.lifecycle.lastError, driverErrors: r.lifecycle.driverErrors, running: r.lifecycle.loop.running, timing: r.lifecycle.timing }),
  settled: (r) => r.lifecycle.settled(),
  finalize: (r) => r.shutdown(),
};

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
      if (key === "read" && faults.read) return () => { throw new Error("injected read fault"); };
      if (key === "write" && faults.write) return () => { throw new Error("injected write fault"); };
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * Ask the scheduler for this thread first, where allowed. On Linux the nice value is per thread, so
 * this raises the core's thread only, not the servers'; an unprivileged user may not lower it
 * (EACCES): then it stays as it is, and `ready` says so. HAL goes further (SCHED_FIFO).
 */
function raisePriority(nice: number): number | null {
  try {
    setPriority(0, nice);
    return getPriority(0);
  } catch {
    return null;
  }
}

/** Run `body`'s core on this worker thread (call once, from the body's worker entry). */
export function runCore<R extends CoreRobot, O extends CoreBaseOptions>(body: CoreBody<R, O>): void {
  const port = parentPort!;
  const { buffer, options } = workerData as { buffer: SharedArrayBuffer; options: O };
  const ctl = new Int32Array(buffer, 0, CTL.words);
  const channel = body.channel(buffer, STATE_START, ctl);
  const reply = replyRegion(buffer);
  const encoder = new TextEncoder();
  const faults: DriverFaults = { read: false, write: false };
  const handlers: Record<string, CoreHandler<R>> = { ...(COMMON as Record<string, CoreHandler<R>>), ...body.handlers };
  // test hooks ("test…") exist only in a core started for tests
  for (const name of Object.keys(handlers)) if (name.startsWith("test") && !options.testFaults) delete handlers[name];
  if (options.testFaults) {
    handlers.testFault = (_r, f: DriverFaults) => {
      faults.read = f.read;
      faults.write = f.write;
      return true;
    };
  }
  let robot: R | null = null;
  let closeServers: (() => Promise<void>) | null = null;
  const post = (m: CoreMessage): void => port.postMessage(m);

  const answer = (id: number, value: CoreReply): void => {
    let json = JSON.stringify(value);
    if (json.length * 3 > reply.length) json = JSON.stringify({ ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: "core reply too large" } });
    const { written } = encoder.encodeInto(json, reply);
    Atomics.store(ctl, CTL.replyLength, written);
    Atomics.store(ctl, CTL.replyId, id);
    Atomics.notify(ctl, CTL.replyId);
  };

  port.on("message", (m: { type: "call"; id: number; method: string; args: unknown[]; async?: boolean } | { type: "stop" }) => {
    if (m.type === "stop") {
      void stop().then(() => process.exit(0));
      return;
    }
    const r = robot;
    const h = handlers[m.method];
    const respond = (value: CoreReply): void => {
      if (r) channel.publish(r); // the host reads the request's effect at once
      if (m.async) post({ type: "reply", id: m.id, reply: value });
      else answer(m.id, value);
    };
    if (!r || !h) return respond({ ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: `core: no ${m.method}` } });
    try {
      const v = (h as (r: R, ...a: unknown[]) => unknown)(r, ...m.args);
      if (v instanceof Promise) {
        if (!m.async) return respond({ ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: `core: ${m.method} answers later; call it asynchronously` } });
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
    const finish = () => {
      post({ type: "died", message: (e as Error)?.message ?? String(e), detail: r ? body.diedDetail(r, sent) : "the body was not started" });
      process.exit(70);
    };
    if (sent || !r) finish();
    else void Promise.race([body.safeLater(r), new Promise((res) => setTimeout(res, 200))]).then(finish, finish);
  });

  async function main(): Promise<void> {
    const nice = raisePriority(options.nice ?? -10);
    const r = await body.create(options, options.testFaults ? (d) => faultable(d, faults) : (d) => d);
    robot = r;
    await r.start();
    channel.publish(r);
    const served = body.serve ? await body.serve(r, options, port) : null;
    if (served) closeServers = () => served.close();
    // After the servers' listeners (the NAO's LoLA server): their clients' messages leave first,
    // then the host gets the state (it is on nobody's path from the body to a client).
    const after = body.afterCycle;
    r.onCycle((seq) => {
      channel.publish(r);
      Atomics.store(ctl, CTL.cycles, seq);
      after?.(r, seq);
    });
    for (const ev of ["acquired", "released", "estop", "reset"] as const) {
      r.authority.on(ev, (...args: unknown[]) => post({ type: "event", event: ev, args: JSON.parse(JSON.stringify(args)) as unknown[] }));
    }
    if (options.testCrashAfterMs) {
      setTimeout(() => {
        throw new Error("test hook: the real-time core crashes (BODYLINK_TEST_CRASH_CORE_MS)");
      }, options.testCrashAfterMs);
    }
    post({ type: "ready", defaultStopCategory: r.defaultStopCategory, transport: body.transport(r), nice, ...body.ready?.(r), ...served?.ready });
  }

  main().catch((e: unknown) => {
    post({ type: "failed", error: errorOf(e) });
    void stop().then(() => process.exit(1));
  });
}
