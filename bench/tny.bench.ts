/**
 * TNY-360 API server over loopback: request round trips per second and median latency for ping
 * and body.setVelocity, with 1 and 3 connections (the robot's limit), as a ratio against a raw
 * `ws` echo server measured in the same run with the same client loop (the floor for any
 * WebSocket request/response on this machine).
 *
 * Each connection runs a closed loop: send one request, wait for its reply, send the next.
 * setVelocity runs twice: at 0 m/s (the request path alone) and at 0.2 m/s, where the simulator's
 * gait, ticking on this same thread, costs time the echo server never pays.
 * With 3 connections sending setVelocity, the first holds control and the other two are refused
 * (UnknownError): the split is printed. Each ratio is the median over rounds of the case against
 * the echo measured in the same round (a machine that gets busier between rounds moves both).
 *
 * Those cases run the server on the bench's own thread, beside an in-thread robot, to see the
 * request path alone. What `serve` runs is the next table: the server in the TNY-360 core's worker
 * thread (Tny360Host, as `bodylink serve`), against a raw `ws` echo on a worker thread of its own
 * (bench/tny-echo-worker.mjs), the client on this thread. A second table times the dispatcher
 * alone (no sockets). `--quick` (BENCH_QUICK=1): fewer and shorter rounds, a smoke run.
 *
 * Last, the simulator's 5 ms tick alone: bytes allocated per step in steady state (target 0, as
 * for the NAO) while standing, walking and during a smooth enable, each against the figure of an
 * empty call measured the same way in the same run (the measuring floor).
 */
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import WebSocket, { WebSocketServer } from "ws";
import { TnyClient } from "../src/client/tny/index.js";
import { Tny360Host } from "../src/host/tny360-host.js";
import { Tny360Robot } from "../src/runtime/tny360-robot.js";
import { dispatchTnyFrame, newDispatchStats } from "../src/serve/tny/dispatch.js";
import { startTnyServer } from "../src/serve/tny/server.js";
import { SimTny360 } from "../src/sim/tny360/quadruped.js";
import { actionSpec } from "../src/wire/tny/constants.js";
import { encodeRequest, encodeResponse } from "../src/wire/tny/encode.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { bytesPerCall, fmt, median, timeIt } from "./util.js";

const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const RUN_MS = QUICK ? 200 : 400;
const WARMUP_MS = 100;
/** Cases run in rotation this many times; each figure is the median over rounds (the machine is shared and noisy). */
const ROUNDS = QUICK ? 2 : 5;

interface Result {
  readonly perSecond: number;
  /** This process's CPU time (every thread: client, server, robot) per round trip, µs: what the machine's load moves least. */
  readonly cpuUs: number;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly statuses: Map<number, number>;
}

/** Latencies and reply statuses of one closed-loop case, counted only inside the measuring window. */
class Recorder {
  readonly #lat = new Float64Array(1 << 20);
  #n = 0;
  #count = 0;
  #seconds = 0;
  #cpuUs = 0;
  readonly statuses = new Map<number, number>();
  measuring = false;
  running = true;

  record(latencyUs: number, status: number): void {
    if (!this.measuring) return;
    if (this.#n < this.#lat.length) this.#lat[this.#n++] = latencyUs;
    this.#count++;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  /** Warm up for WARMUP_MS, count for RUN_MS, then tell the loops to stop. */
  async window(): Promise<void> {
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    this.measuring = true;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, RUN_MS));
    this.measuring = false;
    const cpu = process.cpuUsage(cpu0);
    this.#seconds = (performance.now() - t0) / 1000;
    this.#cpuUs = cpu.user + cpu.system;
    this.running = false;
  }

  result(): Result {
    const n = this.#n;
    const sorted = this.#lat.subarray(0, n).sort();
    const at = (q: number) => (n ? quantileOfSorted(sorted, q) : Number.NaN);
    return { perSecond: this.#count / this.#seconds, cpuUs: this.#cpuUs / this.#count, medianUs: at(0.5), p99Us: at(0.99), statuses: this.statuses };
  }
}

async function openRaw(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.binaryType = "nodebuffer";
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

/** Closed loop over raw sockets: `frame` is sent with its msg_id patched per request. */
async function rawLoop(url: string, connections: number, frame: Uint8Array): Promise<Result> {
  const sockets = await Promise.all(Array.from({ length: connections }, () => openRaw(url)));
  const rec = new Recorder();
  const loops = sockets.map(
    (ws) =>
      new Promise<void>((done) => {
        const buf = Buffer.from(frame);
        let id = 0;
        let sentAt = 0;
        const send = (): void => {
          id = (id + 1) & 0xffff;
          buf[2] = id & 0xff;
          buf[3] = id >> 8;
          sentAt = performance.now();
          ws.send(buf, { binary: true });
        };
        ws.on("message", (data: Buffer) => {
          rec.record((performance.now() - sentAt) * 1000, data.length >= 6 ? data[4]! | (data[5]! << 8) : -1);
          if (rec.running) send();
          else done();
        });
        send();
      }),
  );
  await rec.window();
  await Promise.all(loops);
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((r) => {
          ws.once("close", () => r());
          ws.close();
        }),
    ),
  );
  return rec.result();
}

/** Closed loop through the typed client (SDK path: encode, msg_id matching, decode, promises). */
async function clientLoop(url: string, connections: number, call: (c: TnyClient) => Promise<unknown>): Promise<Result> {
  const clients = await Promise.all(Array.from({ length: connections }, () => TnyClient.connect(url, { WebSocket })));
  const rec = new Recorder();
  const loops = clients.map(async (c) => {
    while (rec.running) {
      const t = performance.now();
      let st = 0;
      try {
        await call(c);
      } catch (e) {
        st = (e as { status?: number }).status ?? -1;
      }
      rec.record((performance.now() - t) * 1000, st);
    }
  });
  await rec.window();
  await Promise.all(loops);
  await Promise.all(
    clients.map(
      (c) =>
        new Promise<void>((r) => {
          c.onClose(() => r());
          c.close();
        }),
    ),
  );
  return rec.result();
}

type Case = readonly [string, () => Promise<Result>];

/** The target (Done means of the work that typed the command path): setVelocity round trips over one connection ≥ 0.9× the echo's. */
const TARGET_RATIO = 0.9;

/**
 * The cases in rotation, ROUNDS times; the first is the baseline each other case is divided by
 * within its round. With `judged`, the verdict on that case's round trips (one connection).
 */
async function roundTable(conns: number, drained: () => Promise<void>, cases: readonly Case[], judged?: string): Promise<void> {
  console.log("case                          conns  round trips/s  ratio  CPU µs/rt  ratio  median µs  ratio  p99 µs  replies (last round)");
  const results: Result[][] = cases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < cases.length; i++) {
      results[i]!.push(await cases[i]![1]());
      await drained();
    }
  }
  const base = results[0]!;
  const ratio = (rs: Result[], f: (r: Result) => number): number => median(rs.map((r, k) => f(r) / f(base[k]!)));
  cases.forEach(([name], i) => {
    const rs = results[i]!;
    const rt = median(rs.map((r) => r.perSecond));
    const cpu = median(rs.map((r) => r.cpuUs));
    const lat = median(rs.map((r) => r.medianUs));
    const p99 = median(rs.map((r) => r.p99Us));
    console.log(
      `${name.padEnd(30)}${String(conns).padStart(5)}${fmt(rt, 0).padStart(15)}${fmt(ratio(rs, (r) => r.perSecond)).padStart(7)}${fmt(cpu, 1).padStart(11)}${fmt(ratio(rs, (r) => r.cpuUs)).padStart(7)}${fmt(lat, 0).padStart(11)}${fmt(ratio(rs, (r) => r.medianUs)).padStart(7)}${fmt(p99, 0).padStart(8)}  ${statusText(rs[rs.length - 1]!.statuses)}`,
    );
  });
  const j = judged === undefined ? -1 : cases.findIndex(([name]) => name === judged);
  if (j >= 0) {
    const r = ratio(results[j]!, (x) => x.perSecond);
    const c = ratio(results[j]!, (x) => x.cpuUs);
    console.log(
      `verdict: ${judged} round trips ${fmt(r)}x the echo's (target >= ${TARGET_RATIO}x): ${r >= TARGET_RATIO ? "MET" : "NOT MET"}${QUICK ? " (quick: a smoke run)" : ""}; CPU per round trip ${fmt(c)}x the echo's`,
    );
  }
}

/** The TNY-360 server where `serve` runs it: in the core's worker thread, against an echo on a worker thread. */
async function servePath(pingFrame: Uint8Array, velZeroFrame: Uint8Array, velFrame: Uint8Array): Promise<void> {
  const echoWorker = new Worker(new URL("./tny-echo-worker.mjs", import.meta.url));
  const echoPort = await new Promise<number>((resolve, reject) => {
    echoWorker.once("message", (p: number) => resolve(p));
    echoWorker.once("error", reject);
  });
  const echoUrl = `ws://127.0.0.1:${echoPort}/`;
  const host = await Tny360Host.start({ seed: 1, remote: null, server: { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] } });
  const url = `ws://127.0.0.1:${host.tnyPort}/`;
  // the server's own count is in the other thread: wait out the client's close instead
  const drained = (): Promise<void> => new Promise((r) => setTimeout(r, 20));
  await rawLoop(echoUrl, 1, pingFrame);
  await rawLoop(url, 1, velFrame);
  await drained();
  console.log('\nas serve runs it: the server in the TNY-360 core\'s worker thread (Tny360Host, wake "wait"), the echo on a worker thread, the client here');
  console.log("(CPU per round trip counts every thread, the core's cycle and the host's mirror too: a fixed cost per second that fewer round trips share)");
  await roundTable(
    1,
    drained,
    [
      ["raw ws echo, worker (baseline)", () => rawLoop(echoUrl, 1, pingFrame)],
      ["ping (raw frames)", () => rawLoop(url, 1, pingFrame)],
      ["setVelocity 0 (raw, standing)", () => rawLoop(url, 1, velZeroFrame)],
      ["setVelocity (raw frames)", () => rawLoop(url, 1, velFrame)],
      ["setVelocity (TnyClient)", () => clientLoop(url, 1, (c) => c.body.setVelocity(0.2, 0, 0, true))],
    ],
    "setVelocity (raw frames)",
  );
  await host.shutdown();
  await echoWorker.terminate();
}

function statusText(m: Map<number, number>): string {
  return [...m.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, k]) => `${s === 0 ? "Ok" : `status ${s}`}: ${k}`)
    .join(", ");
}

export async function run(): Promise<void> {
  // baseline: a raw ws echo server, same client loop
  const echo = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => echo.once("listening", () => r()));
  echo.on("connection", (ws) => ws.on("message", (data, isBinary) => ws.send(data as Buffer, { binary: isBinary })));
  const echoAddr = echo.address();
  const echoUrl = `ws://127.0.0.1:${typeof echoAddr === "object" && echoAddr ? echoAddr.port : 0}/`;

  const robot = await Tny360Robot.create();
  await robot.start();
  const server = await startTnyServer(robot, { port: 0 });
  const url = `ws://127.0.0.1:${server.port}/`;

  const ping = actionSpec("system", "ping");
  const setVelocity = actionSpec("body", "setVelocity");
  const pingFrame = encodeRequest(1, ping.module, ping.action, []);
  const velFrame = encodeRequest(1, setVelocity.module, setVelocity.action, [0.2, 0, 0, true]);
  // The same request path with the robot standing: a walking simulator's gait ticks on this thread too
  const velZeroFrame = encodeRequest(1, setVelocity.module, setVelocity.action, [0, 0, 0, true]);

  // the server side lets a closed connection go a moment after the client: wait before the next case
  const drained = async (): Promise<void> => {
    while (server.stats().connections > 0) await new Promise((r) => setTimeout(r, 5));
  };
  // warm both paths up (JIT) before anything is measured, so the first row is not the cold one
  await rawLoop(echoUrl, 1, pingFrame);
  await rawLoop(url, 1, velFrame);
  await drained();

  console.log(`TNY-360 server over loopback: closed loop per connection, median of ${ROUNDS} interleaved rounds of ${RUN_MS} ms${QUICK ? " (quick: a smoke run)" : ""}`);
  console.log("ratios are against a raw ws echo server with the same connections and client loop, per round (throughput: higher is better; latency: lower)");
  console.log("server and robot on this thread (the request path alone)");
  for (const conns of [1, 3]) {
    await roundTable(
      conns,
      drained,
      [
        ["raw ws echo (baseline)", () => rawLoop(echoUrl, conns, pingFrame)],
        ["ping (raw frames)", () => rawLoop(url, conns, pingFrame)],
        ["setVelocity 0 (raw, standing)", () => rawLoop(url, conns, velZeroFrame)],
        ["setVelocity (raw frames)", () => rawLoop(url, conns, velFrame)],
        ["ping (TnyClient)", () => clientLoop(url, conns, (c) => c.system.ping())],
        ["setVelocity (TnyClient)", () => clientLoop(url, conns, (c) => c.body.setVelocity(0.2, 0, 0, true))],
      ],
      conns === 1 ? "setVelocity (raw frames)" : undefined,
    );
  }
  await server.close();
  await robot.stop();
  await new Promise<void>((r) => echo.close(() => r()));

  await servePath(pingFrame, velZeroFrame, velFrame);

  // the dispatcher alone: bytes in, bytes out, no sockets (sim robot, not started: sync replies)
  const quiet = await Tny360Robot.create();
  const lease = quiet.authority.acquire("bench", "tny", 60_000);
  if (!lease.ok) throw new Error(lease.reason);
  const stats = newDispatchStats();
  const leaseOf = (): string => lease.lease.id;
  const baseNs = timeIt(() => encodeResponse(1, 0));
  const pingNs = timeIt(() => dispatchTnyFrame(pingFrame, quiet, leaseOf, stats));
  const velNs = timeIt(() => dispatchTnyFrame(velFrame, quiet, leaseOf, stats));
  // as the server serves it: the lease renewed with every command, against the frame's one clock read
  const renewing = (nowMs?: number): string | null => (quiet.authority.renew(lease.lease.id, 60_000, nowMs) ? lease.lease.id : null);
  const served = (): unknown => dispatchTnyFrame(velFrame, quiet, renewing, stats, quiet.clock.nowMs());
  const servedNs = timeIt(served);
  console.log("\ndispatcher alone (frame → reply bytes)   ns/op    ratio vs encoding an empty Ok   bytes allocated/op");
  console.log(
    `encode empty Ok (baseline)            ${fmt(baseNs, 0).padStart(8)}    ${fmt(1).padStart(8)}                       ${fmt(
      bytesPerCall(() => encodeResponse(1, 0)),
      0,
    )}`,
  );
  console.log(
    `ping                                  ${fmt(pingNs, 0).padStart(8)}    ${fmt(pingNs / baseNs).padStart(8)}                       ${fmt(
      bytesPerCall(() => dispatchTnyFrame(pingFrame, quiet, leaseOf, stats)),
      0,
    )}`,
  );
  console.log(
    `setVelocity                           ${fmt(velNs, 0).padStart(8)}    ${fmt(velNs / baseNs).padStart(8)}                       ${fmt(
      bytesPerCall(() => dispatchTnyFrame(velFrame, quiet, leaseOf, stats)),
      0,
    )}`,
  );
  console.log(`setVelocity, lease renewed, one clock read ${fmt(servedNs, 0).padStart(8)}    ${fmt(servedNs / baseNs).padStart(8)}                       ${fmt(bytesPerCall(served), 0)}`);
  await quiet.stop();

  simStepAllocation();
}

/** A simulator stepped by `step()` at 5 ms (or, with `jitter`, 4.6–5.4 ms, as under a real clock). */
function steppedSim(jitter = false): { sim: SimTny360; step: () => void } {
  // the velocity keep-alive never runs out here, so one command keeps the robot walking
  const sim = new SimTny360({ seed: 3, velocityTimeoutMs: 1e12 });
  // NOTE: time in a typed slot: a fractional time kept in the closure would itself be boxed
  const t = new Float64Array(2);
  const step = jitter
    ? () => {
        t[1] = t[1]! + 1;
        t[0] = t[0]! + 5 + 0.4 * Math.sin(t[1]! * 0.7);
        sim.cycle(t[0]!);
      }
    : () => {
        t[0] = t[0]! + 5;
        sim.cycle(t[0]!);
      };
  sim.cycle(0);
  return { sim, step };
}

function request(sim: SimTny360, module: string, action: string, args: unknown[]): void {
  const spec = actionSpec(module, action);
  const r = sim.handleNow(spec.module, spec.action, args);
  if (r.status !== 0) throw new Error(`${module}.${action}: status ${r.status}`);
}

/** Bytes allocated per simulator tick in steady state, against the measuring floor. */
function simStepAllocation(): void {
  const standing = steppedSim();
  standing.sim.enableSmooth();
  for (let i = 0; i < 400; i++) standing.step();

  const walking = steppedSim();
  walking.sim.enableSmooth();
  for (let i = 0; i < 400; i++) walking.step();
  request(walking.sim, "body", "setVelocity", [0.2, 0.05, 0.3, false]);

  const tilted = steppedSim(true);
  tilted.sim.enableSmooth();
  for (let i = 0; i < 400; i++) tilted.step();
  request(tilted.sim, "body", "setPosture", [0.01, -0.01, 0.11, 0.05, -0.04, 0.1, false]);
  request(tilted.sim, "gait", "setType", [2]);
  request(tilted.sim, "body", "setVelocity", [-0.15, 0.1, -0.5, false]);

  // A smooth enable from STAND takes 730 ticks (REST at 5 %, then STAND at 10 %); when one ends the
  // next starts. Starting and ending one logs a line (allocates): batches of 100 ticks leave most
  // batches inside a running sequence, and the smallest batch is kept.
  const enabling = steppedSim();
  const enablingStep = (): void => {
    if (enabling.sim.state.body.smooth === "idle") enabling.sim.enableSmooth();
    enabling.step();
  };
  let sink = 0;
  const empty = (): void => {
    sink++;
  };
  const SMALL_BATCH = 100;
  const floor = bytesPerCall(empty);
  const floorSmall = bytesPerCall(empty, 20_000, SMALL_BATCH);
  const rows: Array<[string, number, number, number]> = [
    ["standing still (STAND, joints on)", 10_000, bytesPerCall(standing.step), floor],
    ["walking 0.2 m/s, 0.05 m/s, 0.3 rad/s", 10_000, bytesPerCall(walking.step), floor],
    ["walking, Run, tilted, jittery step", 10_000, bytesPerCall(tilted.step), floor],
    ["smooth enable in progress", SMALL_BATCH, bytesPerCall(enablingStep, 20_000, SMALL_BATCH), floorSmall],
  ];
  const stood = standing.sim.state.body.enabledMask === 0x3fff && standing.sim.state.body.smooth === "idle" && !standing.sim.planner.active;
  const ok = stood && walking.sim.planner.active && tilted.sim.planner.active && sink > 0;
  console.log("\nsimulator tick alone (SimTny360.cycle, 5 ms)   batch   bytes/step   floor (empty call, same batch)   target 0: ≤ floor + 1 B");
  for (const [name, batch, bytes, fl] of rows) {
    console.log(`${name.padEnd(44)}${String(batch).padStart(7)}${fmt(bytes).padStart(13)}${fmt(fl).padStart(33)}   ${bytes <= fl + 1 ? "PASS" : "FAIL"}`);
  }
  if (!ok) console.log("(a robot was not in its case's state, standing or walking: the figures above are wrong)");
}
