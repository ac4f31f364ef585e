/**
 * A stalled core never freezes the API (issue 9): the main thread never waits for the NAO's core.
 * `bodylink serve` with the test hook that blocks the core's thread (SIGUSR2 with
 * BODYLINK_TEST_STALL_CORE_MS) until the test has done what it does during the stall
 * (ServeRig.release: never a guess at how long a loaded machine takes): meanwhile reads answer from shared memory, requests that need the
 * core answer 503 BL_ERR_CORE_UNRESPONSIVE after the request timeout, health says the core
 * stalled, and an e-stop is refused with that code too but stays requested in the control words:
 * the core engages it at its first cycle after the stall. The same for the P7 and the TNY-360:
 * their body commands are validated on the main thread and cross through their mailboxes, so they
 * answer during the stall and take effect when the core cycles again; one posted under a lease
 * that ended meanwhile (the e-stop revoked it) is dropped and counted (errors.staleCommands).
 */
import { describe, expect, it } from "vitest";
import { startServe } from "./serve-rig.js";

const json = { "content-type": "application/json" };
/** The stall's bound: only a test that never releases it (ServeRig.release) sees it end, ms. */
const STALL = { BODYLINK_TEST_HOOKS: "1", BODYLINK_TEST_STALL_CORE_MS: "60000" };

/**
 * How long a wait here may take before it counts as a hang: only that, never a bound on how fast
 * (the watchdog's 2.5 s once failed a suite run at a load of ~10).
 */
const HANG_MS = 15_000;

async function until(cond: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The three bodies' tests run concurrently (consecutive concurrent suites run together): each its
// own \`serve\`, stalled and released by the test (no bound on how fast); one after the other they
// spent most of their ~12 s waiting (5.5 s of CPU).
describe.concurrent("a stalled real-time core", () => {
  it("leaves the API answering: reads from shared memory, 503 BL_ERR_CORE_UNRESPONSIVE for requests, an e-stop engaged at the next cycle", async () => {
    const rig = await startServe([], STALL);
    try {
      const api = rig.apiUrl;
      const lease = (await (await fetch(`${api}/v1/control`, { method: "POST", headers: json, body: JSON.stringify({ owner: "alice", lease_ms: 30_000 }) })).json()) as { lease_id: string };
      expect(lease.lease_id).toMatch(/^[0-9a-f-]{36}$/);
      // A command before the stall goes through the mailbox and answers at once.
      const cmd = await fetch(`${api}/v1/commands/joints`, { method: "POST", headers: { ...json, "x-bodylink-lease": lease.lease_id }, body: JSON.stringify({ stiffness: new Array(26).fill(0.5) }) });
      expect(cmd.status).toBe(200);

      rig.stall(); // the core's thread blocks until rig.release()
      await until(async () => ((await (await fetch(`${api}/v1/health`)).json()) as { link: string }).link === "lost", "the watchdog to see the stall", HANG_MS);

      // Reads: from the control words and the lease mirror, no core needed.
      const control = (await (await fetch(`${api}/v1/control`)).json()) as { held: boolean; holder: { owner: string } };
      expect(control).toMatchObject({ held: true, holder: { owner: "alice" } });
      // A command is validated here and posted to the mailbox: answered without the core.
      const queued = await fetch(`${api}/v1/commands/joints`, {
        method: "POST",
        headers: { ...json, "x-bodylink-lease": lease.lease_id },
        body: JSON.stringify({ stiffness: new Array(26).fill(0.25) }),
      });
      expect(queued.status).toBe(200);
      // Requests the core must answer: a clear code, after the timeout, not a frozen API.
      const acquire = await fetch(`${api}/v1/control`, { method: "PUT", headers: { ...json, "x-bodylink-lease": lease.lease_id }, body: JSON.stringify({ lease_ms: 30_000 }) });
      expect(acquire.status).toBe(503);
      expect(((await acquire.json()) as { code: string }).code).toBe("BL_ERR_CORE_UNRESPONSIVE");
      const health = (await (await fetch(`${api}/v1/health`)).json()) as { link: string; safety_code: string; safety_reason: string; errors: { coreStalls: number } };
      expect(health.link).toBe("lost");
      expect(health.safety_reason).toMatch(/the real-time core stalled/);
      expect(health.safety_code).toBe("core_stalled");
      expect(health.errors.coreStalls).toBeGreaterThanOrEqual(1);
      // The e-stop: refused with the code (the core ran no cycle), but latched on the host at once …
      const stop = await fetch(`${api}/v1/estop`, { method: "POST", headers: json, body: JSON.stringify({ category: 0, reason: "while stalled" }) });
      expect(stop.status).toBe(503);
      const stopBody = (await stop.json()) as { code: string; message: string };
      expect(stopBody.code).toBe("BL_ERR_CORE_UNRESPONSIVE");
      expect(stopBody.message).toMatch(/engages at the core's next cycle/);
      expect(((await (await fetch(`${api}/v1/estop`)).json()) as { latched: boolean }).latched).toBe(true);
      const refused = await fetch(`${api}/v1/commands/joints`, {
        method: "POST",
        headers: { ...json, "x-bodylink-lease": lease.lease_id },
        body: JSON.stringify({ stiffness: new Array(26).fill(1) }),
      });
      expect(((await refused.json()) as { code: string }).code).toBe("BL_ERR_ESTOP_LATCHED");

      // … and the core engages it at its first cycle after the stall: latched there, stiffness 0.
      rig.release();
      await until(async () => ((await (await fetch(`${api}/v1/health`)).json()) as { link: string }).link !== "lost", "the core to cycle again", HANG_MS);
      const after = (await (await fetch(`${api}/v1/health`)).json()) as { estop: { latched: boolean; reason: string; category: number }; control: unknown };
      expect(after.estop).toMatchObject({ latched: true, reason: "while stalled", category: 0 });
      expect(after.control).toBeNull();
      await until(async () => ((await (await fetch(`${api}/v1/state`)).json()) as { joint_stiffness: number[] }).joint_stiffness.every((v) => v === 0), "stiffness 0", HANG_MS);
    } finally {
      await rig.close();
    }
  }, 90_000);
});

type Health = { link: string; safety_reason: string; errors: Record<string, number>; estop: { latched: boolean }; control: unknown };
const get = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;
const post = (url: string, body: unknown, lease?: string) => fetch(url, { method: "POST", headers: { ...json, ...(lease ? { "x-bodylink-lease": lease } : {}) }, body: JSON.stringify(body) });

/**
 * SIGUSR2 blocks the core until `cyclingAgain`; resolves once the watchdog saw it and the state has
 * stopped moving for 250 ms (a loaded machine can make the watchdog see a short stall of its own).
 */
async function stallCore(rig: Awaited<ReturnType<typeof startServe>>): Promise<void> {
  rig.stall();
  const seq = async () => (await get<{ seq: number }>(`${rig.apiUrl}/v1/state`)).seq;
  await until(
    async () => {
      if ((await get<Health>(`${rig.apiUrl}/v1/health`)).link !== "lost") return false;
      const s0 = await seq();
      await new Promise((r) => setTimeout(r, 250));
      return (await seq()) === s0;
    },
    "the core to stall",
    HANG_MS,
  );
}
/** Ends the stall; resolves once the core cycles again. */
async function cyclingAgain(rig: Awaited<ReturnType<typeof startServe>>): Promise<void> {
  rig.release();
  await until(async () => (await get<Health>(`${rig.apiUrl}/v1/health`)).link !== "lost", "the core to cycle again", HANG_MS);
}
async function expectUnresponsive(r: Response): Promise<void> {
  expect(r.status).toBe(503);
  expect(((await r.json()) as { code: string }).code).toBe("BL_ERR_CORE_UNRESPONSIVE");
}

/**
 * Stall the core, post `command` (accepted: the mailbox), then an e-stop (503: the core ran no
 * cycle; it stays requested). At its next cycle the core engages the stop first, which revokes the
 * lease, then finds the command's lease ended: dropped and counted once, latched, nobody in control.
 */
async function staleAfterEstop(rig: Awaited<ReturnType<typeof startServe>>, command: () => Promise<Response>): Promise<void> {
  const api = rig.apiUrl;
  await stallCore(rig);
  expect((await command()).status).toBe(200);
  await expectUnresponsive(await post(`${api}/v1/estop`, { reason: "while stalled" }));
  await cyclingAgain(rig);
  await until(async () => ((await get<Health>(`${api}/v1/health`)).errors.staleCommands ?? 0) >= 1, "the stale command counted", HANG_MS);
  const h = await get<Health>(`${api}/v1/health`);
  expect(h.estop.latched).toBe(true);
  expect(h.control).toBeNull();
  expect(h.errors.staleCommands).toBe(1);
}

describe.concurrent("a stalled P7 core", () => {
  // The stall lasts until every step below is done (each 503 alone waits 500 ms), however loaded the machine.
  it("answers motion commands through the mailbox (carried out after the stall), 503 for what needs the arm, drops a command of a lease that ended", async () => {
    const rig = await startServe([], STALL, { body: "p7" });
    try {
      const api = rig.apiUrl;
      const joint1 = async () => (await get<{ joint_positions: number[] }>(`${api}/v1/state`)).joint_positions[0]!;
      await until(async () => (await fetch(`${api}/v1/state`)).status === 200, "a state", 10_000);
      const lease = ((await (await fetch(`${api}/v1/control`, { method: "POST", headers: json, body: JSON.stringify({ owner: "arm", lease_ms: 30_000 }) })).json()) as { lease_id: string }).lease_id;

      await stallCore(rig);
      expect(await get(`${api}/v1/control`)).toMatchObject({ held: true, holder: { owner: "arm" } });
      // Validated on this thread with the in-thread rules and answers, no core needed …
      const bad = await post(`${api}/v1/commands/move-joints`, { positions: [0, 0, 0, 0, 0, 0, 9] }, lease);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { message: string }).message).toMatch(/joint7 \(index 6\).*outside its limits/);
      expect((await post(`${api}/v1/commands/servo-joints`, { positions: [0, 0, 0, 0, 0, 0, 0] })).status).toBe(403);
      // What only the core can answer: the code, after the request timeout (the request stays queued:
      // clearError holds the arm where it is, so a move posted after it reaches the core after it).
      await expectUnresponsive(await post(`${api}/v1/commands/clear-error`, {}, lease));
      await expectUnresponsive(await fetch(`${api}/v1/control`, { method: "PUT", headers: { ...json, "x-bodylink-lease": lease }, body: JSON.stringify({ lease_ms: 30_000 }) }));
      // … and a move is accepted at once while the core is blocked.
      const move = await post(`${api}/v1/commands/move-joints`, { positions: [0.5, 0, 0, 0, 0, 0, 0], speed: 2 }, lease);
      expect(move.status).toBe(200);
      expect(((await move.json()) as { result: { eta_s: number } }).result.eta_s).toBeGreaterThan(0);
      expect(await joint1()).toBeCloseTo(0, 3); // nothing moved yet

      await cyclingAgain(rig);
      await until(async () => (await joint1()) > 0.45, "the mailbox's move carried out", 10_000);

      // A command under the lease, then an e-stop (it revokes the lease) before the core cycles again:
      // at its next cycle the core engages the stop first, then finds the command's lease ended.
      await staleAfterEstop(rig, () => post(`${api}/v1/commands/servo-joints`, { positions: [-0.5, 0, 0, 0, 0, 0, 0] }, lease));
      expect(await joint1()).toBeGreaterThan(0.4); // it never went for -0.5
    } finally {
      await rig.close();
    }
  }, 90_000);
});

describe.concurrent("a stalled TNY-360 core", () => {
  it("answers typed commands through the mailbox (carried out after the stall), 503 for what needs the body, drops a command of a lease that ended", async () => {
    const rig = await startServe([], STALL, { body: "tny360" });
    try {
      const api = rig.apiUrl;
      const gait = async () => (await get<{ locomotion: { gait: string } }>(`${api}/v1/state`)).locomotion.gait;
      await until(async () => (await fetch(`${api}/v1/state`)).status === 200, "a state", 10_000);
      const lease = ((await (await fetch(`${api}/v1/control`, { method: "POST", headers: json, body: JSON.stringify({ owner: "dog", lease_ms: 30_000 }) })).json()) as { lease_id: string }).lease_id;
      expect(await gait()).toBe("Walk");

      await stallCore(rig);
      expect(await get(`${api}/v1/control`)).toMatchObject({ held: true, holder: { owner: "dog" } });
      // Validated on this thread with the in-thread rules and answers, no core needed …
      const far = await post(`${api}/v1/commands/joint`, { joint: 2, position: 3.5 }, lease);
      expect(far.status).toBe(400);
      expect(((await far.json()) as { message: string }).message).toMatch(/joint\.setAngle: out of range/);
      expect((await post(`${api}/v1/commands/gait`, { gait: "Run" })).status).toBe(403);
      // … and accepted into the mailbox while the core is blocked.
      const run = await post(`${api}/v1/commands/gait`, { gait: "Run" }, lease);
      expect(run.status).toBe(200);
      expect(await run.json()).toEqual({ ok: true, result: { forwarded: false } });
      // What only the core can answer: the code, after the request timeout.
      await expectUnresponsive(await post(`${api}/v1/commands/smooth-enable`, {}, lease));
      await expectUnresponsive(await post(`${api}/v1/commands/leg`, { leg: 0, x: 0.09, y: 0.1, z: 0 }, lease));
      expect(await gait()).toBe("Walk"); // not yet

      await cyclingAgain(rig);
      await until(async () => (await gait()) === "Run", "the mailbox's gait carried out", 10_000);

      // A command under the lease, then an e-stop (it revokes the lease) before the core cycles again.
      await staleAfterEstop(rig, () => post(`${api}/v1/commands/gait`, { gait: "Creep" }, lease));
      expect(await gait()).toBe("Run"); // never Creep
    } finally {
      await rig.close();
    }
  }, 90_000);
});
