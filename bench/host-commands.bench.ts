/**
 * `npm run bench -- host-commands`: what a body command costs the main thread now that it crosses
 * through the body's mailbox (validated on the main thread, answered at once) instead of waiting
 * for the core, for the P7 and the TNY-360 threaded cores (P7Host, Tny360Host), in one run:
 *
 * - baseline: a request the core must answer (a lease renewal: a message there and back, awaited);
 * - mailbox command: P7 servoJoints / TNY-360 setVelocity, validated and posted (the call returns
 *   the answer); the same while the core's thread is blocked (the test hook), where the request
 *   waits out its timeout instead.
 *
 * Verdicts (ratios against the baseline measured in the same run, per body): the mailbox command's
 * p50 is below the request's round trip (what the command cost before: it crossed and waited for
 * the core's answer), and a blocked core does not slow it (its p50 while blocked ≤ 2× its quiet p50
 * + 0.01 ms; the p99 is printed too, but the hook's busy core takes one of the machine's CPUs, so
 * the tail measures the machine), while the request gets 503 BL_ERR_CORE_UNRESPONSIVE after its
 * timeout.
 */
import { performance } from "node:perf_hooks";
import { P7Host } from "../src/host/p7-host.js";
import { Tny360Host } from "../src/host/tny360-host.js";
import { quantileOfSorted } from "../src/runtime/timing.js";
import { fmt } from "./util.js";

const QUICK = process.env.BENCH_QUICK === "1";
const COMMANDS = QUICK ? 500 : 5000;
const REQUESTS = QUICK ? 50 : 300;

type Host = P7Host | Tny360Host;

function stats(xs: number[]): { p50: number; p99: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: quantileOfSorted(s, 0.5), p99: quantileOfSorted(s, 0.99), max: s[s.length - 1] ?? Number.NaN };
}

async function measure(name: string, host: Host, command: (lease: string, i: number) => { ok: boolean }): Promise<boolean> {
  const got = await host.authority.acquire("bench", "api", 60_000);
  if (!got.ok) throw new Error("no lease");
  const lease = got.lease.id;
  const requests: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await host.authority.renew(lease, 60_000);
    requests.push(performance.now() - t0);
  }
  const timeCommands = (n: number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = command(lease, i);
      out.push(performance.now() - t0);
      if (!r.ok) throw new Error(`${name}: command refused`);
    }
    return out;
  };
  timeCommands(200); // warm-up
  const quiet = timeCommands(COMMANDS);
  await host.testStallCore(1500);
  const blocked = timeCommands(COMMANDS);
  const t0 = performance.now();
  const refused = await host.authority.renew(lease, 60_000).then(
    () => "answered",
    (e: { code?: string }) => e.code ?? "error",
  );
  const requestBlockedMs = performance.now() - t0;
  const c0 = host.cycles;
  while (host.cycles <= c0 + 2) await new Promise((r) => setTimeout(r, 10)); // the core cycles again

  const r = stats(requests);
  const q = stats(quiet);
  const b = stats(blocked);
  console.log(`${name}: request round trip (lease renewal) p50 ${fmt(r.p50, 3)} ms, p99 ${fmt(r.p99, 3)} ms`);
  console.log(`${name}: mailbox command quiet   p50 ${fmt(q.p50, 4)} ms, p99 ${fmt(q.p99, 4)} ms, max ${fmt(q.max, 3)} ms  (${COMMANDS} calls; p50 ×${fmt(q.p50 / r.p50, 4)} of the round trip)`);
  console.log(
    `${name}: mailbox command blocked p50 ${fmt(b.p50, 4)} ms, p99 ${fmt(b.p99, 4)} ms, max ${fmt(b.max, 3)} ms  (core's thread blocked, spinning on a CPU; p50 ×${fmt(b.p50 / q.p50, 2)} of quiet)`,
  );
  console.log(`${name}: request while blocked: ${refused} after ${fmt(requestBlockedMs, 0)} ms`);
  const cheap = q.p50 < r.p50;
  const unaffected = b.p50 <= 2 * q.p50 + 0.01;
  const bounded = refused === "BL_ERR_CORE_UNRESPONSIVE";
  console.log(
    `${name}: verdict: ${cheap ? "MET" : "NOT MET"} mailbox command p50 below a round trip's; ${unaffected ? "MET" : "NOT MET"} unaffected by a blocked core; ${bounded ? "MET" : "NOT MET"} the request answers 503 within its timeout`,
  );
  await host.authority.release(lease);
  return cheap && unaffected && bounded;
}

export async function run(): Promise<void> {
  console.log(`host commands: ${COMMANDS} commands and ${REQUESTS} requests per body${QUICK ? " (BENCH_QUICK)" : ""}; every figure is main-thread time`);
  const p7 = await P7Host.start({ seed: 1, testStalls: true });
  let ok = true;
  try {
    while (!p7.state.jointValid) await new Promise((r) => setTimeout(r, 10));
    const a = [0.1, 0, 0, 0, 0, 0, 0];
    const b = [0.11, 0, 0, 0, 0, 0, 0];
    ok = (await measure("p7", p7, (lease, i) => p7.servoJoints(lease, i & 1 ? a : b))) && ok;
  } finally {
    await p7.shutdown();
  }
  const tny = await Tny360Host.start({ seed: 1, remote: null, server: null, testStalls: true });
  try {
    while (!tny.state.valid) await new Promise((r) => setTimeout(r, 10));
    ok = (await measure("tny360", tny, (lease, i) => tny.setVelocity(lease, i & 1 ? 0.1 : 0.11, 0, 0, false))) && ok;
  } finally {
    await tny.shutdown();
  }
  console.log(`host commands: overall verdict ${ok ? "MET" : "NOT MET"}`);
}
