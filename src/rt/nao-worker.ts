/**
 * The NAO's real-time core, in its own worker thread (own isolate, own heap, own event loop): the
 * driver (chest board, simulated or USB), the exchange, decoding, arbitration, safety ramps and
 * smooth motions (NaoRobot), the control authority, and the LoLA server (a LoLA client's answer
 * lands in the next cycle, so it is part of the real-time path). Nothing the main thread does (the
 * robot API, JSON bodies, 1,000 stream subscribers, a blocked event loop) runs on this thread.
 *
 * What crosses (src/host/nao-host.ts is the other side; docs/architecture.md, "Threads"):
 * - state, core → host: after every cycle, the NaoState into the shared region under a seqlock
 *   (src/shm/nao-state.ts), and the cycle count into the control block (the host's watchdog);
 * - requests, host → core: prepare-side calls (leases, commands after the host validated them,
 *   smooth motions, e-stop, health) as messages; the answer comes back through the shared reply
 *   buffer, which the host waits on (the host waits for the core, never the other way round);
 * - events, core → host: authority changes, "died".
 *
 * A fatal error (an uncaught exception here) first sends the body its safe state — the last chest
 * frame at stiffness 0, synchronously on the simulator — then tells the host, which exits non-zero.
 */
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { ChestboardDriver } from "../drivers/nao/chestboard.js";
import { LolaUpstreamDriver } from "../drivers/nao/lola-upstream.js";
import { BodylinkError } from "../errors.js";
import { RecordTap, TappedChestboard } from "../record/tap.js";
import { MonotonicClock } from "../runtime/clock.js";
import { NaoRobot } from "../runtime/nao-robot.js";
import { startLolaServer } from "../serve/lola/server.js";
import { NaoStateChannel } from "../shm/nao-state.js";
import { ByteRing } from "../shm/ring.js";
import { openUsbChestboard } from "../transport/usb.js";
import { CTL, type CoreOptions, type CoreReply, REPLY_START, STATE_START } from "./nao-core-shm.js";

const port = parentPort!;
const { buffer, options } = workerData as { buffer: SharedArrayBuffer; options: CoreOptions };
const ctl = new Int32Array(buffer, 0, CTL.words);
const channel = new NaoStateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
const reply = new Uint8Array(buffer, REPLY_START);
const encoder = new TextEncoder();

let robot: NaoRobot | null = null;
let closeLola: (() => Promise<void>) | null = null;

function answer(id: number, value: CoreReply): void {
  let json = JSON.stringify(value);
  if (json.length * 3 > reply.length) json = JSON.stringify({ ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: "core reply too large" } });
  const { written } = encoder.encodeInto(json, reply);
  Atomics.store(ctl, CTL.replyLength, written);
  Atomics.store(ctl, CTL.replyId, id);
  Atomics.notify(ctl, CTL.replyId);
}

function errorOf(e: unknown): { code: string; status: number; message: string } {
  if (e instanceof BodylinkError) return { code: e.code, status: e.status, message: e.message };
  return { code: "BL_ERR_API_INTERNAL", status: 500, message: (e as Error)?.message ?? String(e) };
}

type Handler = (r: NaoRobot, ...args: never[]) => unknown;
const HANDLERS: Record<string, Handler> = {
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
  command: (r, leaseId: string, update: never) => r.command(leaseId, update),
  smoothEnable: (r, leaseId: string) => r.smoothEnable(leaseId),
  smoothDisable: (r, leaseId: string) => r.smoothDisable(leaseId),
  estop: (r, req: never) => r.estop(req),
  resetEstop: (r, req: never) => r.resetEstop(req),
  // JSON has no undefined: the host sends null for "the whole ring".
  health: (r, windowCycles: number | null) => r.health(windowCycles === null ? {} : { windowCycles }),
  motionActive: (r) => r.motionActive,
};

/** Results carrying a BodylinkError (command refusals) cross as plain data ({ code, status, message }). */
function plain(v: unknown): unknown {
  if (v && typeof v === "object" && "error" in v && (v as { error: unknown }).error instanceof BodylinkError) {
    return { ...(v as object), error: errorOf((v as { error: unknown }).error) };
  }
  return v;
}

port.on("message", (m: { type: "call"; id: number; method: string; args: unknown[] } | { type: "stop" }) => {
  if (m.type === "stop") {
    void stop().then(() => process.exit(0));
    return;
  }
  const r = robot;
  const h = HANDLERS[m.method];
  if (!r || !h) return answer(m.id, { ok: false, error: { code: "BL_ERR_API_INTERNAL", status: 500, message: `core: no ${m.method}` } });
  try {
    answer(m.id, { ok: true, value: plain((h as (r: NaoRobot, ...a: unknown[]) => unknown)(r, ...m.args)) });
  } catch (e) {
    answer(m.id, { ok: false, error: errorOf(e) });
  }
});

async function stop(): Promise<void> {
  await closeLola?.().catch(() => {});
  closeLola = null;
  await robot?.shutdown().catch(() => {});
}

/** The safe state when dying: the last frame at stiffness 0 (synchronous on the simulator). */
function safeNow(): boolean {
  const r = robot;
  if (!r) return false;
  r.authority.revoke();
  if (r.driver instanceof LolaUpstreamDriver) return r.driver.deactivateNow();
  return r.driver instanceof ChestboardDriver ? r.driver.deactivateNow() : false;
}

process.on("uncaughtException", (e) => {
  const sent = safeNow();
  const finish = () => {
    port.postMessage({ type: "died", message: (e as Error)?.message ?? String(e), safeFrameSent: sent, stiffness: robot ? Math.max(...robot.state.stiffness) : 0 });
    process.exit(70);
  };
  if (sent || !robot) finish();
  // USB completes later: give the asynchronous safe frame up to 200 ms.
  else void Promise.race([robot.driver.deactivate(), new Promise((r) => setTimeout(r, 200))]).then(finish, finish);
});

/**
 * Ask the scheduler for this thread first, where allowed. On Linux the nice value is per thread, so
 * this raises the core's thread only, not the servers'; an unprivileged user may not lower it
 * (EACCES): then it stays as it is, and health says so. HAL goes further (SCHED_FIFO).
 */
function raisePriority(nice: number): number | null {
  try {
    setPriority(0, nice);
    return getPriority(0);
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const o = options;
  const nice = raisePriority(o.nice ?? -10);
  const clock = new MonotonicClock();
  // Recording: this thread is the one producer of its ring (frames, LoLA bytes, each cycle's state).
  const tap = o.recordRing ? new RecordTap(new ByteRing(o.recordRing), clock) : null;
  const upstream = o.upstream
    ? new LolaUpstreamDriver({ path: o.upstream.path, clock, tap: tap?.lolaUpstream ?? null, ...(o.upstream.stallMs ? { stallMs: o.upstream.stallMs } : {}) })
    : null;
  const r = await NaoRobot.create({
    ...(upstream ? { driver: upstream } : { transport: o.usb ? () => openUsbChestboard() : undefined }),
    clock,
    seed: o.seed,
    acceptBoardVersions: o.acceptBoardVersions,
    youngGcEveryMs: o.gcEveryMs,
    ...(tap && !upstream ? { wrapTransport: (t) => new TappedChestboard(t, tap) } : {}),
  });
  robot = r;
  await r.start();
  channel.publish(r.state);
  let lolaPath: string | null = null;
  if (o.lola) {
    const lolaOpts = {
      readers: o.lola.readers,
      graceMs: o.lola.graceMs,
      ...(o.lola.group !== undefined ? { group: o.lola.group } : {}),
      ...(tap ? { tap: tap.lola } : {}),
      // On top of LoLA: the robot is named by the upstream's messages, and nothing is sent while it is not there.
      ...(upstream ? { robotConfigSource: () => upstream.robotConfig, holdUntilValid: true } : {}),
    };
    const lola = await startLolaServer(r, { path: o.lola.path, ...lolaOpts }).catch((e: unknown) => {
      if (o.lola!.fallbackPath && e instanceof BodylinkError && e.code === "BL_ERR_LOLA_SOCKET") return startLolaServer(r, { path: o.lola!.fallbackPath, ...lolaOpts });
      throw e;
    });
    closeLola = () => lola.close();
    lolaPath = lola.path;
  }
  // After the LoLA server's listener: our clients' messages leave first, then the host and the
  // recorder get the state (neither is on the path from an upstream message to our clients).
  let lateSeen = 0;
  r.onCycle((seq) => {
    channel.publish(r.state);
    Atomics.store(ctl, CTL.cycles, seq);
    if (tap) {
      tap.naoState(r.state);
      const late = r.loop.timing.lateCycles;
      if (late !== lateSeen) {
        lateSeen = late;
        tap.event("late_cycle", seq, `cycle started late (${late} so far)`, { late_cycles: late }); // only when one was late
      }
    }
  });
  for (const ev of ["acquired", "released", "estop", "reset"] as const) {
    r.authority.on(ev, (...args: unknown[]) => port.postMessage({ type: "event", event: ev, args: JSON.parse(JSON.stringify(args)) }));
  }
  if (o.testCrashAfterMs) {
    setTimeout(() => {
      throw new Error("test hook: the real-time core crashes (BODYLINK_TEST_CRASH_CORE_MS)");
    }, o.testCrashAfterMs);
  }
  port.postMessage({
    type: "ready",
    prefs: r.prefs,
    prefsUnavailable: r.prefsUnavailable,
    boards: r.boards,
    lolaPath,
    defaultStopCategory: r.defaultStopCategory,
    transport: upstream ? `lola:${upstream.upstream.path}` : r.driver.name,
    upstreamConnected: upstream ? upstream.upstream.connected : null,
    nice,
  });
}

main().catch((e: unknown) => {
  port.postMessage({ type: "failed", error: errorOf(e) });
  void stop().then(() => process.exit(1));
});
