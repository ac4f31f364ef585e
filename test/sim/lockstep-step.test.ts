/**
 * Lockstep for robot API clients (`serve --lockstep`, POST /v1/sim/step) and the simulated time in
 * /v1/health and the stream. Each body runs on a lockstep clock that only the lease holder's step
 * requests move: a step answers once its cycles have run (the state's seq and timestamp moved by
 * exactly that many), needs the lease, is refused while an e-stop is latched, and is refused in
 * real time. Health's `sim` says which clock drives simulated time and how fast it ran; in real
 * time a physics NAO in its worker runs at about 1× and says so in its stream's `sim` too.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { BodyKind } from "../../src/bodies/registry.js";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

useRuntimeDir("bl-step-");
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(body: BodyKind, extra: { lockstep?: boolean; sim?: "physics" | "kinematic" } = {}): Promise<RunningRuntime> {
  const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body, seed: 1, gcEveryMs: 0, ...extra });
  cleanups.push(() => rt.close());
  return rt;
}

/** The answers' fields these tests read (each answer has some of them). */
interface Json {
  lease_id: string;
  code: string;
  seq: number;
  timestamp_ms: number;
  result: { cycles: number; time_ms: number };
  sim: { clock: string; model: string; time_s: number; real_time_factor: number } | null | undefined;
}
async function call(rt: RunningRuntime, method: string, path: string, body?: unknown, lease?: string): Promise<{ status: number; json: Json }> {
  const r = await fetch(`${rt.record.apiUrl}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(lease ? { "x-bodylink-lease": lease } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, json: (await r.json()) as Json };
}
const lease = async (rt: RunningRuntime): Promise<string> => {
  const r = await call(rt, "POST", "/v1/control", { owner: "stepper", lease_ms: 1000 });
  expect(r.status).toBe(201);
  return r.json.lease_id;
};
const state = async (rt: RunningRuntime): Promise<Json> => (await call(rt, "GET", "/v1/state")).json;

describe("POST /v1/sim/step (serve --lockstep)", () => {
  for (const [body, periodMs] of [
    ["p7", 4],
    ["tny360", 5],
    ["nao", 12],
  ] as const) {
    it(`${body}: a step runs exactly its cycles of simulated time, under the lease and e-stop rules`, async () => {
      const rt = await serve(body, { lockstep: true });
      expect(rt.lines.join("\n")).toMatch(/lockstep/);
      expect((await call(rt, "POST", "/v1/sim/step", { cycles: 1 })).status).toBe(403); // no lease
      const id = await lease(rt);
      // Time stands still between steps: nothing runs while nobody steps.
      await call(rt, "POST", "/v1/sim/step", { cycles: 1 }, id);
      const s0 = await state(rt);
      await new Promise((r) => setTimeout(r, 200));
      expect((await state(rt)).seq).toBe(s0.seq);
      const step = await call(rt, "POST", "/v1/sim/step", { cycles: 250 }, id);
      expect(step.status).toBe(200);
      expect(step.json.result.cycles).toBe(250);
      const s1 = await state(rt);
      expect(s1.seq - s0.seq).toBe(250);
      expect(s1.timestamp_ms - s0.timestamp_ms).toBeCloseTo(250 * periodMs, 6);
      expect(step.json.result.time_ms).toBeCloseTo(s1.timestamp_ms, 6);
      // The lease (1 s) outlives a step of many times its length: every cycle renews it.
      expect((await call(rt, "POST", "/v1/sim/step", { cycles: Math.ceil(3000 / periodMs) }, id)).status).toBe(200);
      const h = (await call(rt, "GET", "/v1/health")).json;
      expect(h.sim?.clock).toBe("lockstep");
      expect(h.sim!.time_s).toBeGreaterThan(3);
      expect(h.sim!.real_time_factor).toBeGreaterThan(0);
      // Bad sizes are refused by the schema.
      expect((await call(rt, "POST", "/v1/sim/step", { cycles: 0 }, id)).status).toBe(400);
      expect((await call(rt, "POST", "/v1/sim/step", { cycles: 1e6 }, id)).status).toBe(400);
      // An e-stop: no step while latched (the lease is gone too).
      expect((await call(rt, "POST", "/v1/estop", { reason: "step test" })).status).toBeLessThan(300);
      const refused = await call(rt, "POST", "/v1/sim/step", { cycles: 1 }, id);
      expect(refused.status).toBe(409);
      expect(refused.json.code).toBe("BL_ERR_ESTOP_LATCHED");
    });
  }

  it("is refused in real time (404 BL_ERR_CMD_UNSUPPORTED); health reports the real-time clock", async () => {
    const rt = await serve("p7");
    const id = await lease(rt);
    const r = await call(rt, "POST", "/v1/sim/step", { cycles: 1 }, id);
    expect(r.status).toBe(404);
    expect(r.json.code).toBe("BL_ERR_CMD_UNSUPPORTED");
    await new Promise((res) => setTimeout(res, 1200));
    const h = (await call(rt, "GET", "/v1/health")).json;
    expect(h.sim).toMatchObject({ clock: "real-time", model: "kinematic" });
    expect(h.sim!.time_s).toBeGreaterThan(0.5);
    // Real time: about 1 (less only if this loaded machine stalled the core for more than a step's catch-up).
    expect(h.sim!.real_time_factor).toBeGreaterThan(0.5);
    expect(h.sim!.real_time_factor).toBeLessThan(1.1);
  });
});

describe("simulated time in real time: the physics NAO in its worker", () => {
  it("health and the stream's sim report the physics model's time at about 1× real time", async () => {
    const rt = await serve("nao", { sim: "physics" });
    await new Promise((r) => setTimeout(r, 1500));
    const h = (await call(rt, "GET", "/v1/health")).json;
    expect(h.sim).toMatchObject({ clock: "real-time", model: "physics" });
    expect(h.sim!.real_time_factor).toBeGreaterThan(0.5);
    expect(h.sim!.real_time_factor).toBeLessThan(1.1);
    const s = await state(rt);
    expect(s.sim!.time_s).toBeGreaterThan(1);
    expect(s.sim!.real_time_factor).toBeGreaterThan(0.5);
    expect(s.sim!.real_time_factor).toBeLessThan(1.1);
  });

  it("a kinematic NAO has health's sim but no world in its state", async () => {
    const rt = await serve("nao");
    await new Promise((r) => setTimeout(r, 300));
    const h = (await call(rt, "GET", "/v1/health")).json;
    expect(h.sim).toMatchObject({ clock: "real-time", model: "kinematic" });
    expect((await state(rt)).sim).toBeUndefined();
  });
});
