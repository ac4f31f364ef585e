/**
 * A stalled core never freezes the API (issue 9): the main thread never waits for the NAO's core.
 * `bodylink serve` with the test hook that blocks the core's thread for 8 s (SIGUSR2 with
 * BODYLINK_TEST_STALL_CORE_MS): meanwhile reads answer from shared memory, requests that need the
 * core answer 503 BL_ERR_CORE_UNRESPONSIVE after the request timeout, health says the core
 * stalled, and an e-stop is refused with that code too but stays requested in the control words:
 * the core engages it at its first cycle after the stall.
 */
import { describe, expect, it } from "vitest";
import { startServe } from "./serve-rig.js";

const json = { "content-type": "application/json" };

async function until(cond: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("a stalled real-time core", () => {
  it("leaves the API answering: reads from shared memory, 503 BL_ERR_CORE_UNRESPONSIVE for requests, an e-stop engaged at the next cycle", async () => {
    const rig = await startServe([], { BODYLINK_TEST_HOOKS: "1", BODYLINK_TEST_STALL_CORE_MS: "8000" });
    try {
      const api = rig.apiUrl;
      const lease = (await (await fetch(`${api}/v1/control`, { method: "POST", headers: json, body: JSON.stringify({ owner: "alice", lease_ms: 30_000 }) })).json()) as { lease_id: string };
      expect(lease.lease_id).toMatch(/^[0-9a-f-]{36}$/);
      // A command before the stall goes through the mailbox and answers at once.
      const cmd = await fetch(`${api}/v1/commands/joints`, { method: "POST", headers: { ...json, "x-bodylink-lease": lease.lease_id }, body: JSON.stringify({ stiffness: new Array(26).fill(0.5) }) });
      expect(cmd.status).toBe(200);

      rig.child.kill("SIGUSR2"); // the core's thread blocks for 8 s
      await until(async () => ((await (await fetch(`${api}/v1/health`)).json()) as { link: string }).link === "lost", "the watchdog to see the stall", 2500);

      // Reads: from the control words and the lease mirror, no core needed.
      const control = (await (await fetch(`${api}/v1/control`)).json()) as { held: boolean; holder: { owner: string } };
      expect(control).toMatchObject({ held: true, holder: { owner: "alice" } });
      // A command is validated here and posted to the mailbox: answered without the core.
      const queued = await fetch(`${api}/v1/commands/joints`, { method: "POST", headers: { ...json, "x-bodylink-lease": lease.lease_id }, body: JSON.stringify({ stiffness: new Array(26).fill(0.25) }) });
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
      const refused = await fetch(`${api}/v1/commands/joints`, { method: "POST", headers: { ...json, "x-bodylink-lease": lease.lease_id }, body: JSON.stringify({ stiffness: new Array(26).fill(1) }) });
      expect(((await refused.json()) as { code: string }).code).toBe("BL_ERR_ESTOP_LATCHED");

      // … and the core engages it at its first cycle after the stall: latched there, stiffness 0.
      await until(async () => ((await (await fetch(`${api}/v1/health`)).json()) as { link: string }).link !== "lost", "the core to cycle again", 15_000);
      const after = (await (await fetch(`${api}/v1/health`)).json()) as { estop: { latched: boolean; reason: string; category: number }; control: unknown };
      expect(after.estop).toMatchObject({ latched: true, reason: "while stalled", category: 0 });
      expect(after.control).toBeNull();
      await until(async () => ((await (await fetch(`${api}/v1/state`)).json()) as { joint_stiffness: number[] }).joint_stiffness.every((v) => v === 0), "stiffness 0", 5000);
    } finally {
      await rig.close();
    }
  }, 90_000);
});
