/**
 * `npm run bench -- lola`: bodylink on a stock NAO (`serve --lola-upstream`), as four processes
 * on loopback: an upstream (a simulated bodylink NAO serving LoLA, byte-exact with LoLA, with two
 * reader slots), the proxy (`serve --lola-upstream UPSTREAM --lola-path DOWNSTREAM`, its core in
 * its worker thread), the floor (bench/lola-relay.mjs: a raw relay that only copies the upstream's
 * bytes to one client), and this process with three clients: a direct reader of the upstream, the
 * relay's client, and the proxy's controlling client, which answers every message with a full
 * command as LoLA clients do.
 *
 * - Added latency: for each message, when the proxy's client received it minus when the direct
 *   client received the same message (the proxy forwards the upstream's values byte for byte, so
 *   messages are matched by their 896 bytes). Target p99 < 0.5 ms. The floor, measured in the same
 *   run: the relay's added latency (two process wake-ups and two socket hops, no work at all).
 * - Where the time goes: bench/lola-stamps.cjs (preloaded into every process with --require, never
 *   in production) stamps each socket read and write of a message with process.hrtime.bigint()
 *   (one monotonic clock across processes); the segments are medians and p99 over messages.
 * - CPU share at 83 Hz: the proxy's user+system time over the window (from /proc), against the
 *   relay's and the upstream's (a whole simulated body runtime), measured over the same window.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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

function serve(args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = []): { child: ChildProcess; ready: Promise<void>; output: () => string } {
  // the kinematic upstream robot, explicitly (serve's default is physics): the proxy's cost is measured, not MuJoCo's
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, "bin/bodylink.js"), "serve", "--api-port", "0", "--sim", "kinematic", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
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

/** A client that timestamps (with `now`) each complete 896-byte message. */
function lolaClient(path: string, onMessage: (msg: Buffer, at: number) => void, now: () => number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let pending: Buffer = Buffer.alloc(0);
    s.on("data", (b: Buffer) => {
      const at = now();
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

async function connectRetry(path: string, onMessage: (msg: Buffer, at: number) => void, now: () => number): Promise<Socket> {
  for (let i = 0; ; i++) {
    try {
      return await lolaClient(path, onMessage, now);
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
  console.log(
    `in-process: decoding an upstream message ${fmt(nsRead, 0)} ns (${fmt(nsRead / nsWrite, 2)}× writing one, ${fmt(nsWrite, 0)} ns, the baseline); allocates ${fmt(alloc, 2)} B per message, an empty function ${fmt(noop, 2)} B (target 0) ${alloc <= noop + 1 ? "PASS" : "FAIL"}`,
  );
}

/** FNV-1a over one 896-byte message: the name bench/lola-stamps.cjs gives it in every process. */
function hash896(b: Uint8Array, off: number): number {
  let h = 0x811c9dc5;
  for (let i = off; i < off + 896; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

const KIND = { read: 1, writeStart: 2, writeEnd: 3, commandStart: 4, commandEnd: 5 } as const;

/**
 * One process's stamps (all its threads), per message hash: the first of each kind, µs, and the
 * start of every write of it in order (the upstream writes each message to each of its clients).
 */
function stampsOf(dir: string, pid: number): { byHash: Map<number, Map<number, number>>; writes: Map<number, number[]>; commands: number[] } {
  const byHash = new Map<number, Map<number, number>>();
  const writes = new Map<number, number[]>();
  const commands: number[] = [];
  for (const f of readdirSync(dir).filter((n) => n.startsWith(`${pid}-`))) {
    const b = readFileSync(join(dir, f));
    const a = new Float64Array(b.buffer, b.byteOffset, b.length / 8);
    for (let i = 0; i + 2 < a.length; i += 3) {
      const kind = a[i]!;
      const h = a[i + 1]!;
      const t = a[i + 2]!;
      if (kind === KIND.commandStart) {
        commands.push(t);
        continue;
      }
      if (kind === KIND.commandEnd) continue;
      const m = byHash.get(h) ?? new Map<number, number>();
      byHash.set(h, m);
      if (kind === KIND.writeEnd)
        m.set(kind, t); // the last write's end (the upstream writes each message to 3 clients)
      else if (!m.has(kind)) m.set(kind, t);
      if (kind === KIND.writeStart) {
        const w = writes.get(h) ?? [];
        writes.set(h, w);
        w.push(t);
      }
    }
  }
  commands.sort((x, y) => x - y);
  for (const w of writes.values()) w.sort((x, y) => x - y);
  return { byHash, writes, commands };
}

/** The first value in sorted `xs` at or after `t`, or NaN. */
function firstAtOrAfter(xs: readonly number[], t: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < xs.length ? xs[lo]! : Number.NaN;
}

const WINDOW = Number(process.env.BL_BENCH_WINDOW_MS) || WINDOW_MS;

export async function run(): Promise<void> {
  codecs();
  const dir = mkdtempSync(join(tmpdir(), "bl-bench-up-"));
  const stampsDir = join(dir, "stamps");
  mkdirSync(stampsDir);
  const t0 = process.hrtime.bigint();
  const nowUs = () => Number(process.hrtime.bigint() - t0) / 1000;
  const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt"), BL_BENCH_STAMPS: stampsDir, BL_BENCH_T0_NS: String(t0) };
  const preload = ["--require", join(ROOT, "bench/lola-stamps.cjs")];
  const upPath = join(dir, "upstream.sock");
  const downPath = join(dir, "bodylink.sock");
  const relayPath = join(dir, "relay.sock");
  const upstream = serve(["--name", "bench-upstream", "--lola-path", upPath, "--lola-readers", "2"], env, preload);
  const children: ChildProcess[] = [upstream.child];
  try {
    await upstream.ready;
    const proxy = serve(["--name", "bench-proxy", "--lola-upstream", upPath, "--lola-path", downPath], env, preload);
    children.push(proxy.child);
    await proxy.ready; // the proxy is the upstream's controlling client: it connects first
    const relay = spawn(process.execPath, [...preload, join(ROOT, "bench/lola-relay.mjs"), upPath, relayPath], { env, stdio: ["ignore", "pipe", "inherit"] });
    children.push(relay);
    await new Promise<void>((resolve, reject) => {
      relay.stdout!.on("data", (b: Buffer) => b.toString().includes("relay ready") && resolve());
      relay.once("exit", (code) => reject(new Error(`the relay exited (${code})`)));
    });

    // Arrivals, stamped when this process's callback starts (hrtime, µs since t0), per message hash.
    // Joined after the window: the copies of a message can be handled in either order in one turn.
    let measuring = false;
    const arrivals = { direct: new Map<number, number>(), proxy: new Map<number, number>(), relay: new Map<number, number>() };
    const directBytes = new Set<string>();
    const proxyBytes: string[] = [];
    const directTimes: number[] = [];
    const proxyTimes: number[] = [];
    const record = (into: Map<number, number>, m: Buffer, at: number) => {
      const h = hash896(m, 0);
      if (!into.has(h)) into.set(h, at);
    };
    const dSock = await connectRetry(
      upPath,
      (m, at) => {
        if (!measuring) return;
        record(arrivals.direct, m, at);
        directBytes.add(m.toString("latin1"));
        directTimes.push(at);
      },
      nowUs,
    );
    const rSock = await connectRetry(
      relayPath,
      (m, at) => {
        if (measuring) record(arrivals.relay, m, at);
      },
      nowUs,
    );
    const command = new LolaCommandWriter().setFloats("Stiffness", new Float32Array(25)); // a full command, stiffness 0
    const pSock: Socket = await connectRetry(
      downPath,
      (m, at) => {
        pSock.write(command.bytes); // a LoLA client answers every message
        if (!measuring) return;
        record(arrivals.proxy, m, at);
        proxyBytes.push(m.toString("latin1"));
        proxyTimes.push(at);
      },
      nowUs,
    );
    await new Promise((r) => setTimeout(r, 3000)); // warm-up: JIT (a few hundred cycles), first collections, the readers' admission
    const pids = { proxy: proxy.child.pid!, upstream: upstream.child.pid!, relay: relay.pid! };
    const cpu0 = { proxy: cpuTicks(pids.proxy), upstream: cpuTicks(pids.upstream), relay: cpuTicks(pids.relay), t: performance.now() };
    measuring = true;
    await new Promise((r) => setTimeout(r, WINDOW));
    measuring = false;
    const wallS = (performance.now() - cpu0.t) / 1000;
    const cpu = (k: keyof typeof pids) => (cpuTicks(pids[k]) - cpu0[k]) / CLK_TCK / wallS;
    const proxyCpu = cpu("proxy");
    const relayCpu = cpu("relay");
    const upstreamCpu = cpu("upstream");
    dSock.destroy();
    rSock.destroy();
    pSock.destroy();
    // The proxy's own work per cycle (read, arbitrate, command upstream, our clients' messages).
    const apiUrl = /robot API: (http:\/\/\S+)/.exec(proxy.output())?.[1];
    const health = apiUrl ? ((await (await fetch(`${apiUrl}/v1/health`)).json()) as { cycle?: { exec_ms?: { p50: number; p99: number } } }) : null;
    // Stop every process so each writes its stamps (at exit), then read them.
    for (const c of children) c.kill("SIGINT");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r)))));

    const st = { upstream: stampsOf(stampsDir, pids.upstream), proxy: stampsOf(stampsDir, pids.proxy), relay: stampsOf(stampsDir, pids.relay) };
    const matchedBytes = proxyBytes.filter((m) => directBytes.has(m)).length;
    const added: number[] = [];
    const floor: number[] = [];
    const overFloor: number[] = [];
    const atBench = { proxy: [] as number[], relay: [] as number[] };
    const seg = new Map<string, number[]>();
    const push = (name: string, v: number) => {
      if (!Number.isFinite(v)) return;
      if (!seg.has(name)) seg.set(name, []);
      seg.get(name)!.push(v / 1000);
    };
    for (const [h, bd] of arrivals.direct) {
      const bp = arrivals.proxy.get(h);
      const br = arrivals.relay.get(h);
      if (bp !== undefined) atBench.proxy.push((bp - bd) / 1000);
      if (br !== undefined) atBench.relay.push((br - bd) / 1000);
      // The upstream writes each message to its clients in turn: the controlling one (the proxy)
      // first, then the readers in the order they were admitted (the relay, then the direct
      // client). Each path is measured from the upstream's write to it, so a client's place in
      // that fan-out (0.1–0.5 ms here) counts for no one.
      const w = st.upstream.writes.get(h);
      if (w?.length !== 3) continue;
      const [uProxy, uRelay, uDirect] = w as [number, number, number];
      const hopDirect = bd - uDirect;
      if (bp !== undefined) added.push((bp - uProxy - hopDirect) / 1000);
      if (br !== undefined) floor.push((br - uRelay - hopDirect) / 1000);
      if (bp !== undefined && br !== undefined) overFloor.push((bp - uProxy - (br - uRelay)) / 1000);
      const u = st.upstream.byHash.get(h);
      const uStart = uProxy;
      push("upstream: its writes of the message to 3 clients", (u?.get(KIND.writeEnd) ?? Number.NaN) - uStart);
      push("direct client: upstream's write to it → our callback (the baseline hop)", hopDirect);
      const p = st.proxy.byHash.get(h);
      const pRead = p?.get(KIND.read) ?? Number.NaN;
      const pWrite = p?.get(KIND.writeStart) ?? Number.NaN;
      const pWritten = p?.get(KIND.writeEnd) ?? Number.NaN;
      push("proxy: upstream's write to it → the proxy's read callback", pRead - uProxy);
      push("proxy: read callback → command written upstream (decode, cycle)", firstAtOrAfter(st.proxy.commands, pRead) - pRead);
      push("proxy: read callback → write to our client starts", pWrite - pRead);
      push("proxy: the write to our client (syscall)", pWritten - pWrite);
      if (bp !== undefined) push("proxy: write returned → its client's callback", bp - pWritten);
      const r = st.relay.byHash.get(h);
      const rRead = r?.get(KIND.read) ?? Number.NaN;
      const rWrite = r?.get(KIND.writeStart) ?? Number.NaN;
      push("relay: upstream's write to it → the relay's read callback", rRead - uRelay);
      push("relay: read callback → write starts", rWrite - rRead);
      push("relay: the write (syscall)", (r?.get(KIND.writeEnd) ?? Number.NaN) - rWrite);
      if (br !== undefined) push("relay: write returned → its client's callback", br - (r?.get(KIND.writeEnd) ?? Number.NaN));
    }
    for (const xs of [added, floor, overFloor, atBench.proxy, atBench.relay]) xs.sort((a, b) => a - b);
    const gaps = (ts: number[]) => ts.slice(1).map((t, i) => t - ts[i]!);
    const spread = (ts: number[]) => {
      const g = gaps(ts).sort((a, b) => a - b);
      return (q(g, 0.99) - q(g, 0.5)) / 1000;
    };
    const rate = proxyTimes.length / wallS;
    const stat = (xs: number[]) => `p50 ${fmt(q(xs, 0.5), 3)} ms, p99 ${fmt(q(xs, 0.99), 3)} ms, max ${fmt(xs.at(-1) ?? Number.NaN, 3)} ms`;
    console.log(
      `messages: upstream ${directTimes.length} (${fmt(directTimes.length / wallS, 1)} Hz), through the proxy ${proxyTimes.length} (${fmt(rate, 1)} Hz); byte-identical to one the upstream sent: ${matchedBytes}/${proxyBytes.length} ${matchedBytes === proxyBytes.length && proxyBytes.length > 0 ? "PASS" : "FAIL"}; matched for latency ${added.length} (proxy), ${floor.length} (relay)`,
    );
    console.log(`added latency upstream → downstream, proxy:              ${stat(added)} (target p99 < 0.5 ms)`);
    console.log(`added latency, the floor (raw relay, copies only):        ${stat(floor)} (baseline, same run)`);
    console.log("  (each: its path from the upstream's write to it, to its client's callback, minus the direct client's path for the same message)");
    console.log(
      `  arrival at this process minus the direct client's, fan-out order included: proxy p50 ${fmt(q(atBench.proxy, 0.5), 3)} / p99 ${fmt(q(atBench.proxy, 0.99), 3)} ms, relay p50 ${fmt(q(atBench.relay, 0.5), 3)} / p99 ${fmt(q(atBench.relay, 0.99), 3)} ms`,
    );
    console.log(`the proxy beyond the floor, per message (proxy − relay):  ${stat(overFloor)}; p99 ratio proxy/floor ${fmt(q(added, 0.99) / q(floor, 0.99), 2)}×`);
    console.log("where the time goes (process.hrtime stamps at each socket read/write; median / p99, ms):");
    for (const [name, xs] of seg) {
      xs.sort((a, b) => a - b);
      console.log(`  ${name.padEnd(66)} ${fmt(q(xs, 0.5), 3).padStart(7)} / ${fmt(q(xs, 0.99), 3).padStart(7)}  (n ${xs.length})`);
    }
    console.log(`inter-arrival spread (p99 − p50): direct client of the upstream ${fmt(spread(directTimes), 3)} ms (baseline), proxy's client ${fmt(spread(proxyTimes), 3)} ms`);
    if (health?.cycle?.exec_ms) console.log(`proxy's cycle (its own work, from /v1/health): p50 ${fmt(health.cycle.exec_ms.p50, 3)} ms, p99 ${fmt(health.cycle.exec_ms.p99, 3)} ms`);
    console.log(
      `CPU at ${fmt(rate, 0)} Hz: proxy ${fmt(proxyCpu * 100, 1)} % of a CPU, relay (the floor) ${fmt(relayCpu * 100, 1)} %, upstream (a whole simulated body runtime) ${fmt(upstreamCpu * 100, 1)} % (proxy/upstream ${fmt(proxyCpu / upstreamCpu, 2)}×); load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    );
    const p99 = q(added, 0.99);
    const f99 = q(floor, 0.99);
    const verdict =
      added.length === 0
        ? "FAIL: no message came through the proxy"
        : p99 < 0.5
          ? `PASS: p99 ${fmt(p99, 3)} ms < 0.5 ms`
          : f99 >= 0.5
            ? `NOT MEETABLE ON THIS MACHINE: the floor (a relay that only copies) is itself p99 ${fmt(f99, 3)} ms ≥ 0.5 ms; the proxy's p99 is ${fmt(p99, 3)} ms (${fmt(p99 / f99, 2)}× the floor)`
            : `FAIL: p99 ${fmt(p99, 3)} ms ≥ 0.5 ms while the floor is p99 ${fmt(f99, 3)} ms`;
    console.log(`verdict (added latency, target p99 < 0.5 ms on loopback): ${verdict}`);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGINT");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r)))));
    rmSync(dir, { recursive: true, force: true });
  }
}
