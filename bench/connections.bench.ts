/**
 * `npm run bench -- connections`: the stop path and the LoLA socket while idle HTTP connections try to
 * take every descriptor (docs/security.md, "Descriptors"). Once ~21,000 idle connections filled every
 * descriptor of the process: new REST requests, the REST e-stop and new LoLA clients all failed.
 *
 * A NAO `bodylink serve` (simulator, the installed entry); measured with no idle connections (the baseline) and then with N idle connections held open
 * by this process (N = 19,000, or 4,000 with --quick; bounded by this process's own descriptor
 * limit): GET /v1/health, a new LoLA client's first frame (each round's client takes control and leaves), the local e-stop socket's round trip
 * (what `bodylink estop` tries first), `bodylink estop` as a process against `bodylink --version`
 * (Node's start), and the runtime's late cycles. Verdict: health answers within 1 s, the LoLA client
 * is served, every stop latches.
 */
import { execFileSync } from "node:child_process";
import { connect, type Socket } from "node:net";
import { readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { requestEstopSocket } from "../src/serve/estop-socket.js";
import { descriptorLimit } from "../src/serve/connection-limit.js";
import { startServe } from "../test/rt/serve-rig.js";
import { fmt, median } from "./util.js";

const QUICK = process.env.BENCH_QUICK === "1" || process.argv.includes("--quick");
const ROUNDS = 5;

interface Phase {
  healthMs: number[];
  lolaFirstFrameMs: number[];
  socketStopMs: number[];
  cliStopMs: number[];
  nodeStartMs: number[];
  latched: number;
  lateCycles: number;
}

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

/** A new LoLA client: ms to its first whole sensor frame (896 bytes), or Infinity after 3 s. */
function lolaFirstFrame(path: string): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = connect(path);
    let n = 0;
    const done = (ms: number) => {
      clearTimeout(timer);
      s.destroy();
      resolve(ms);
    };
    const timer = setTimeout(() => done(Number.POSITIVE_INFINITY), 3000);
    s.on("data", (d) => {
      n += d.length;
      if (n >= 896) done(performance.now() - t0);
    });
    s.on("error", () => done(Number.POSITIVE_INFINITY));
  });
}

async function health(apiUrl: string): Promise<{ ok: boolean; late: number }> {
  try {
    const r = await fetch(`${apiUrl}/v1/health`, { signal: AbortSignal.timeout(3000) });
    const b = (await r.json()) as { cycle?: { late_cycles?: number } };
    return { ok: r.ok, late: b.cycle?.late_cycles ?? Number.NaN };
  } catch {
    return { ok: false, late: Number.NaN };
  }
}

async function reset(apiUrl: string): Promise<void> {
  await fetch(`${apiUrl}/v1/estop/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "bench" }) });
}

async function phase(apiUrl: string, lolaPath: string, estopPath: string, env: NodeJS.ProcessEnv): Promise<Phase> {
  const p: Phase = { healthMs: [], lolaFirstFrameMs: [], socketStopMs: [], cliStopMs: [], nodeStartMs: [], latched: 0, lateCycles: 0 };
  const lateBefore = (await health(apiUrl)).late;
  for (let i = 0; i < ROUNDS; i++) {
    const [hMs, h] = await timed(() => health(apiUrl));
    p.healthMs.push(h.ok ? hMs : Number.POSITIVE_INFINITY);
    p.lolaFirstFrameMs.push(await lolaFirstFrame(lolaPath));
    const [sMs, s] = await timed(() => requestEstopSocket(estopPath, { op: "estop", reason: "bench socket", source: "bench" }).catch(() => null));
    p.socketStopMs.push(s?.ok ? sMs : Number.POSITIVE_INFINITY);
    if (s?.ok && s.estop.latched) p.latched++;
    await reset(apiUrl);
    const [cMs, out] = await timed(async () => {
      try {
        return execFileSync(process.execPath, ["bin/bodylink.js", "estop", "--reason", "bench cli"], { env, encoding: "utf8" });
      } catch {
        return "";
      }
    });
    p.cliStopMs.push(/LATCHED/.test(out) ? cMs : Number.POSITIVE_INFINITY);
    if (/LATCHED/.test(out)) p.latched++;
    await reset(apiUrl);
    const [vMs] = await timed(async () => execFileSync(process.execPath, ["bin/bodylink.js", "--version"], { encoding: "utf8" }));
    p.nodeStartMs.push(vMs);
  }
  p.lateCycles = (await health(apiUrl)).late - lateBefore;
  return p;
}

/**
 * Opens `n` idle TCP connections to the API (they send nothing), 500 at a time as fast as the event loop
 * turns, then waits until the runtime has stopped closing them (no close for 2 s, at most 60 s): the
 * steady state an attacker holding them reaches, measured after the accept backlog has drained.
 */
async function idleConnections(apiUrl: string, n: number): Promise<{ sockets: Socket[]; closedByServer: () => number; openMs: number }> {
  const { hostname, port } = new URL(apiUrl);
  const sockets: Socket[] = [];
  let closed = 0;
  let lastClose = performance.now();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = connect(Number(port), hostname);
    s.on("error", () => {});
    s.once("close", () => {
      closed++;
      lastClose = performance.now();
    });
    sockets.push(s);
    if (i % 500 === 499) await new Promise((r) => setImmediate(r));
  }
  const openMs = performance.now() - t0;
  while (performance.now() - lastClose < 2000 && performance.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 250));
  return { sockets, closedByServer: () => closed, openMs };
}

const row = (name: string, xs: number[], base: number[]) =>
  `${name.padEnd(34)} | ${fmt(median(base), 1).padStart(8)} | ${fmt(median(xs), 1).padStart(8)} (max ${fmt(Math.max(...xs), 1)}) | x${fmt(median(xs) / median(base), 2)}`;

export async function run(): Promise<void> {
  const limit = descriptorLimit() ?? 20_000;
  const n = Math.min(QUICK ? 4000 : 19_000, limit - 512);
  const rig = await startServe();
  try {
    const dir = dirname(rig.lolaPath); // the rig's runtime dir
    const env = { ...process.env, BODYLINK_RUNTIME_DIR: dir };
    const estopFile = readdirSync(dir).find((f) => f.endsWith(".estop"));
    if (!estopFile) throw new Error(`no local e-stop socket in ${dir}`);
    const estopPath = join(dir, estopFile);
    const base = await phase(rig.apiUrl, rig.lolaPath, estopPath, env);
    const idle = await idleConnections(rig.apiUrl, n);
    const loud = await phase(rig.apiUrl, rig.lolaPath, estopPath, env);
    const open = idle.sockets.filter((s) => !s.destroyed).length;
    for (const s of idle.sockets) s.destroy();
    console.log(
      `${n} idle connections opened in ${fmt(idle.openMs / 1000, 1)} s (this process's descriptor limit ${limit}); the runtime closed ${idle.closedByServer()} of them, ${open} still open; ${ROUNDS} rounds${QUICK ? " (QUICK)" : ""}; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    console.log("measure (ms, median)                | baseline | with the idle connections | ratio");
    console.log(row("GET /v1/health", loud.healthMs, base.healthMs));
    console.log(row("new LoLA client, first frame", loud.lolaFirstFrameMs, base.lolaFirstFrameMs));
    console.log(row("e-stop socket round trip", loud.socketStopMs, base.socketStopMs));
    console.log(row("`bodylink estop` (process)", loud.cliStopMs, base.cliStopMs));
    console.log(row("`bodylink --version` (Node start)", loud.nodeStartMs, base.nodeStartMs));
    console.log(`late cycles: ${base.lateCycles} baseline, ${loud.lateCycles} with the connections; stops latched ${base.latched + loud.latched} of ${4 * ROUNDS}`);
    const met = Math.max(...loud.healthMs) <= 1000 && loud.lolaFirstFrameMs.every(Number.isFinite) && base.latched + loud.latched === 4 * ROUNDS;
    console.log(`verdict: ${met ? "MET" : "NOT MET"} (health within 1 s, every new LoLA client served, every stop latched)`);
  } finally {
    await rig.close();
  }
}
