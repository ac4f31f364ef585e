/**
 * Issue 9 for the other bodies: what test/rt/isolation.test.ts shows for the NAO, for the AIRBOT P7
 * and the TNY-360 on their threaded cores (the default). `bodylink serve --body X`, and one after
 * the other: 200 KB / 1 MB JSON bodies to a command route every 300 ms without a lease, 1,000
 * stream subscribers (another process), a 1 s synchronous stall of the main thread (test hook).
 *
 * On counters only: every large body is refused before it is parsed (403/413) and none moves the
 * body; the core counts (almost) no late cycle and the host's watchdog never saw it stall; the lease,
 * taken before the loads, is still held afterwards (leases are charged against cycles the core
 * ran, and it ran them all). The TNY-360 API server runs in the core's thread: an SDK client that
 * keeps asking during the main-thread stall gets its answers from the core while the main thread
 * is blocked (with `--tny-server main` it would get none until the stall ends).
 *
 * As in the NAO's test, above three times the cores of load the machine decides the wake-ups: the
 * counter assertions are then skipped with one line and what was counted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { LEASE_HEADER } from "../../src/bodies/link.js";
import type { BodyKind } from "../../src/bodies/registry.js";
import { TnyClient } from "../../src/client/tny/index.js";
import { until } from "../lola/client.js";
import { type ServeRig, startServe } from "./serve-rig.js";

interface Health {
  cycle: { cycles: number; late_cycles: number };
  errors: { coreStalls?: number };
  control: { owner: string } | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cores = availableParallelism();
const busy = () => loadavg()[0]! > 3 * cores;

/** Each body's route for the large bodies (every one is refused unparsed: no lease, or too large). */
const ROUTE: { [K in Exclude<BodyKind, "nao">]: string } = { p7: "/v1/commands/servo-joints", tny360: "/v1/commands/velocity" };

describe.each(["p7", "tny360"] as const)("the %s's real-time core under hostile load", (body) => {
  let rig: ServeRig | null = null;
  let subs: ChildProcess | null = null;
  afterEach(async () => {
    subs?.kill("SIGKILL");
    await rig?.close();
  });

  it("refuses every large body unparsed, counts no late cycle and no core stall, keeps the lease; the TNY-360 server answers during a main-thread stall", async (ctx) => {
    const r = await startServe(["--max-subscribers", "1100"], { BODYLINK_TEST_HOOKS: "1" }, { body });
    rig = r;
    const api = r.apiUrl;
    const health = async (): Promise<Health> => (await (await fetch(`${api}/v1/health`)).json()) as Health;
    // A client holds control (a long lease: the point is that the loads do not end it).
    const lease = (await (await fetch(`${api}/v1/control`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ owner: "operator", lease_ms: 60_000 }) })).json()) as { lease_id: string };
    expect(lease.lease_id).toEqual(expect.any(String));
    let h0 = await health();
    for (const t = Date.now(); h0.cycle.cycles < 50 && Date.now() - t < 20_000; h0 = await health()) await sleep(50);

    // (a) 200 KB and 1 MB bodies every 300 ms for 3 s: without a lease, and with the lease but too large
    const big = (kb: number) => JSON.stringify({ positions: Array.from({ length: (kb * 1024) / 20 }, () => 0.123456789012345) });
    const bodies = [big(200), big(1024)];
    const answers: number[] = [];
    const t0 = Date.now();
    for (let i = 0; Date.now() - t0 < 3000; i++) {
      const headers: Record<string, string> = { "content-type": "application/json", ...(i % 4 >= 2 ? { [LEASE_HEADER]: lease.lease_id } : {}) };
      const res = await fetch(`${api}${ROUTE[body]}`, { method: "POST", headers, body: bodies[i % 2]! }).catch(() => null);
      if (res) answers.push(res.status);
      await sleep(300);
    }

    // (b) 1,000 subscribers for 3 s, from another process
    subs = spawn(process.execPath, ["test/rt/subscribers.mjs", `${api.replace(/^http/, "ws")}/v1/stream`, "1000"], { stdio: ["ignore", "pipe", "inherit"] });
    let subsOut = "";
    subs.stdout!.on("data", (d) => {
      subsOut += String(d);
    });
    await until(() => /^open$/m.test(subsOut), "1000 subscribers", 30_000);
    await sleep(3000);
    subs.kill("SIGKILL");
    subs = null;

    // (c) the main thread blocked for 1 s; a TNY-360 SDK client keeps asking meanwhile
    let tny: TnyClient | null = null;
    const answeredAt: number[] = [];
    let asking = true;
    const asker = (async () => {
      if (!r.tnyUrl) return;
      tny = await TnyClient.connect(r.tnyUrl, { WebSocket });
      while (asking) {
        await tny.system.ping();
        answeredAt.push(Date.now());
        await sleep(20);
      }
    })();
    if (body === "tny360") await until(() => answeredAt.length > 3, "TNY-360 answers", 10_000);
    const stallFrom = Date.now();
    r.child.kill("SIGUSR2");
    await sleep(2500);
    asking = false;
    await asker;
    (tny as TnyClient | null)?.close();

    const h1 = await health();
    const run = {
      cycles: h1.cycle.cycles - h0.cycle.cycles,
      lateCycles: h1.cycle.late_cycles - h0.cycle.late_cycles,
      coreStalls: (h1.errors.coreStalls ?? 0) - (h0.errors.coreStalls ?? 0),
      holder: h1.control?.owner ?? null,
      statuses: [...new Set(answers)],
      // answers the SDK client got while the main thread was surely blocked
      tnyAnswersInStall: answeredAt.filter((t) => t > stallFrom + 150 && t < stallFrom + 850).length,
    };
    console.log(`${body}: ${JSON.stringify(run)}`);
    // However busy the machine: every large body refused before parsing, none moved the body.
    expect(answers.length).toBeGreaterThan(5);
    for (const s of answers) expect([403, 413]).toContain(s);
    expect(run.holder).toBe("operator");
    if (busy()) {
      console.log(`isolation (${body}): assertions skipped: load average ${loadavg()[0]!.toFixed(1)} on ${cores} cores; counted: ${JSON.stringify(run)}`);
      ctx.skip();
      return;
    }
    // The P7's and TNY-360's late bound is half a period (2 / 2.5 ms, against the NAO's 6 ms), which
    // a 2-core VM running the whole suite misses now and then whatever the loads: a few, not the
    // hundreds a core stalled with the main thread counts (1 s = 200-250 cycles).
    expect(run.lateCycles).toBeLessThanOrEqual(Math.max(3, run.cycles / 100));
    expect(run.coreStalls).toBe(0);
    if (body === "tny360") expect(run.tnyAnswersInStall).toBeGreaterThan(0);
  }, 120_000);
});
