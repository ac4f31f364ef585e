/**
 * `npm run bench -- lola`: bodylink on a stock NAO (`serve --lola-upstream`), as three processes
 * on loopback: an upstream (a simulated bodylink NAO serving LoLA, byte-exact with LoLA, with one
 * reader slot), the proxy (`serve --lola-upstream UPSTREAM --lola-path DOWNSTREAM`), and this
 * process with two clients: a direct reader of the upstream (the baseline) and the proxy's
 * controlling client, which answers every message with a full command as LoLA clients do.
 *
 * - Added latency: for each message, when the proxy's client received it minus when the direct
 *   client received the same message (the proxy forwards the upstream's values byte for byte, so
 *   messages are matched by their 896 bytes). Target p99 < 0.5 ms. Shown against the baseline's
 *   own jitter (the upstream's inter-arrival spread at the direct client), measured in the same run.
 * - CPU share at 83 Hz: the proxy's user+system time over the window (from /proc), against the
 *   upstream's, a whole simulated body runtime, measured over the same window.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { LolaCommandWriter } from "../src/wire/lola/command-message.js";
import { NaoState } from "../src/bodies/nao/state.js";
import { LolaSensorWriter } from "../src/wire/lola/sensor-message.js";
import { LolaSensorReader } from "../src/wire/lola/sensor-reader.js";
import { bytesPerCall, fmt, median, timeIt } from "./util.js";

const ROOT = new URL("..", import.meta.url).pathname;
const WINDOW_MS = 8000;
const CLK_TCK = 100; // Linux USER_HZ

function serve(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<void>; output: () => string } {
  const child = spawn(process.execPath, [join(ROOT, "bin/bodylink.js"), "serve", "--api-port", "0", "--no-tny", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve ${args.join(" ")} did not start: ${out}`)), 60_000);
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      if (out.includes("Ctrl-C to stop")) {
        clearTimeout(t);
        resolve();
      }
    });
    child.stderr!.on("data", (b: Buffer) => {
      out += b.toString();
    });
    child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
  return { child, ready, output: () => out };
}

function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14, 15 of stat)
}

/** A client that timestamps each complete 896-byte message. */
function lolaClient(path: string, onMessage: (msg: Buffer, atMs: number) => void): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let pending: Buffer = Buffer.alloc(0);
    s.on("data", (b: Buffer) => {
      const at = performance.now();
      pending = pending.length ? Buffer.concat([pending, b]) : b;
      while (pending.length >= 896) {
        onMessage(pending.subarray(0, 896), at);
        pending = pending.subarray(896);
      }
    });
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
}

async function connectRetry(path: string, onMessage: (msg: Buffer, atMs: number) => void): Promise<Socket> {
  for (let i = 0; ; i++) {
    try {
      return await lolaClient(path, onMessage);
    } catch (e) {
      if (i > 200) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const q = (sorted: number[], p: number) => quantileOfSorted(sorted, p);

/**
 * In one process, no sockets: what the proxy adds per message in code. Decoding the upstream's
 * 896 bytes into a NaoState, against writing the same message (our LoLA server's per-cycle work,
 * measured in the same run), interleaved rounds, medians; and the bytes each allocates.
 */
function codecs(): void {
  const s = new NaoState();
  for (let i = 0; i < 25; i++) s.position[i] = Math.sin(i) * 0.5;
  s.battery.set([0.75, -32708, -1.25, 2.8]);
  const w = new LolaSensorWriter();
  const msg = Uint8Array.from(w.write(s));
  const into = new NaoState();
  const r = new LolaSensorReader(into);
  const read = () => {
    r.decode(msg);
  };
  const write = () => {
    w.write(s);
  };
  const rs: number[] = [];
  const ws: number[] = [];
  for (let k = 0; k < 7; k++) {
    rs.push(timeIt(read, 120, k === 0 ? 5000 : 500));
    ws.push(timeIt(write, 120, k === 0 ? 5000 : 500));
  }
  const nsRead = median(rs);
  const nsWrite = median(ws);
  const noop = bytesPerCall(() => {}, 200_000);
  const alloc = bytesPerCall(read, 200_000);
  console.log(`in-process: decoding an upstream message ${fmt(nsRead, 0)} ns (${fmt(nsRead / nsWrite, 2)}× writing one, ${fmt(nsWrite, 0)} ns, the baseline); allocates ${fmt(alloc, 2)} B per message, an empty function ${fmt(noop, 2)} B (target 0) ${alloc <= noop + 1 ? "PASS" : "FAIL"}`);
}

export async function run(): Promise<void> {
  codecs();
  const dir = mkdtempSync(join(tmpdir(), "bl-bench-up-"));
  const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt") };
  const upPath = join(dir, "upstream.sock");
  const downPath = join(dir, "bodylink.sock");
  const upstream = serve(["--name", "bench-upstream", "--lola-path", upPath, "--lola-readers", "1"], env);
  const children: ChildProcess[] = [upstream.child];
  try {
    await upstream.ready;
    const proxy = serve(["--name", "bench-proxy", "--lola-upstream", upPath, "--lola-path", downPath], env);
    children.push(proxy.child);
    await proxy.ready;

    // Arrivals are joined after the window: the two copies of a message can be handled in either
    // order within one turn of this process's event loop.
    const direct = new Map<string, number>();
    const directTimes: number[] = [];
    const proxied: Array<[string, number]> = [];
    const proxyTimes: number[] = [];
    let measuring = false;
    const dSock = await connectRetry(upPath, (m, at) => {
      if (!measuring) return;
      direct.set(m.toString("latin1"), at);
      directTimes.push(at);
    });
    const command = new LolaCommandWriter().setFloats("Stiffness", new Float32Array(25)); // a full command, stiffness 0
    const pSock: Socket = await connectRetry(downPath, (m, at) => {
      pSock.write(command.bytes); // a LoLA client answers every message
      if (!measuring) return;
      proxyTimes.push(at);
      proxied.push([m.toString("latin1"), at]);
    });
    await new Promise((r) => setTimeout(r, 1500)); // warm-up: JIT, first collections, the proxy's first cycles
    const cpu0 = { proxy: cpuTicks(proxy.child.pid!), upstream: cpuTicks(upstream.child.pid!), t: performance.now() };
    measuring = true;
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    measuring = false;
    const wallS = (performance.now() - cpu0.t) / 1000;
    const proxyCpu = (cpuTicks(proxy.child.pid!) - cpu0.proxy) / CLK_TCK / wallS;
    const upstreamCpu = (cpuTicks(upstream.child.pid!) - cpu0.upstream) / CLK_TCK / wallS;
    dSock.destroy();
    pSock.destroy();
    // The proxy's own work per cycle (read, arbitrate, command upstream; without the sends to its clients).
    const apiUrl = /robot API: (http:\/\/\S+)/.exec(proxy.output())?.[1];
    const health = apiUrl ? ((await (await fetch(`${apiUrl}/v1/health`)).json()) as { cycle?: { exec_ms?: { p50: number; p99: number } } }) : null;

    const added: number[] = [];
    let unmatched = 0;
    for (const [key, at] of proxied) {
      const t = direct.get(key);
      if (t === undefined) unmatched++;
      else added.push(at - t);
    }
    added.sort((a, b) => a - b);
    const gaps = (ts: number[]) => ts.slice(1).map((t, i) => t - ts[i]!);
    const spread = (ts: number[]) => {
      const g = gaps(ts).sort((a, b) => a - b);
      return q(g, 0.99) - q(g, 0.5);
    };
    const baseJitter = spread(directTimes);
    const proxyJitter = spread(proxyTimes);
    const rate = proxyTimes.length / wallS;
    console.log(`messages: upstream ${directTimes.length} (${fmt(directTimes.length / wallS, 1)} Hz), through the proxy ${proxyTimes.length} (${fmt(rate, 1)} Hz), matched byte for byte ${added.length}, not matched ${unmatched} (sent before or after the window, or missed by the direct client)`);
    console.log(`added latency upstream → downstream: p50 ${fmt(q(added, 0.5), 3)} ms, p99 ${fmt(q(added, 0.99), 3)} ms, max ${fmt(added.at(-1) ?? Number.NaN, 3)} ms (target p99 < 0.5 ms) ${q(added, 0.99) < 0.5 ? "PASS" : "FAIL"}`);
    console.log(`inter-arrival spread (p99 − p50): direct client of the upstream ${fmt(baseJitter, 3)} ms (baseline), proxy's client ${fmt(proxyJitter, 3)} ms (${fmt(proxyJitter / baseJitter, 2)}× the baseline)`);
    if (health?.cycle?.exec_ms) console.log(`proxy's cycle (its own work, from /v1/health): p50 ${fmt(health.cycle.exec_ms.p50, 3)} ms, p99 ${fmt(health.cycle.exec_ms.p99, 3)} ms`);
    console.log(`CPU at ${fmt(rate, 0)} Hz: proxy ${fmt(proxyCpu * 100, 1)} % of a core, upstream (a whole simulated body runtime) ${fmt(upstreamCpu * 100, 1)} % (proxy/upstream ${fmt(proxyCpu / upstreamCpu, 2)}×); load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
  } finally {
    for (const c of children) c.kill("SIGINT");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
    rmSync(dir, { recursive: true, force: true });
  }
}
