/**
 * POST /v1/sim/reset on the physics P7 and TNY-360 as a user runs them: `serve --body X --sim
 * physics` in real time, the core in its worker, over the real REST route (the NAO's:
 * nao-physics-serve.test.ts). After a reset the state's `sim` shows the pose at once (base
 * position, fallen), the world's time restarts (the state's and health's), and a command after it
 * moves the robot; the rules are a command's (the lease, the e-stop latch). One runtime per body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { P7Fields, SimWorld, Tny360Fields } from "../../src/client/messages.js";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

useRuntimeDir("bl-simreset-");

interface Answer<T> {
  status: number;
  json: T & { code?: string; message?: string };
}
async function call<T = Record<string, unknown>>(rt: RunningRuntime, method: string, path: string, body?: unknown, lease?: string): Promise<Answer<T>> {
  const r = await fetch(`${rt.record.apiUrl}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(lease ? { "x-bodylink-lease": lease } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, json: (await r.json()) as Answer<T>["json"] };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Poll the state until `ok` holds (real time, a loaded machine: generous). */
async function until<S>(read: () => Promise<S>, ok: (s: S) => boolean, ms = 10_000): Promise<S> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await read();
    if (ok(s) || Date.now() > end) return s;
    await sleep(50);
  }
}
const health = async (rt: RunningRuntime) => (await call<{ sim: { time_s: number; model: string } }>(rt, "GET", "/v1/health")).json.sim;

async function serve(body: "p7" | "tny360"): Promise<{ rt: RunningRuntime; lease: string }> {
  const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body, seed: 3, gcEveryMs: 0, sim: "physics" });
  expect(rt.inThreadRobot).toBeNull(); // the core in its worker: the route goes through the typed core request
  const lease = (await call<{ lease_id: string }>(rt, "POST", "/v1/control", { owner: "reset-test", lease_ms: 60_000 })).json.lease_id;
  return { rt, lease };
}

/** The rules of a command: no lease 403, a pose of another body 400, latched 409 (the e-stop reset again after). */
async function expectCommandRules(rt: RunningRuntime, lease: string, pose: string, otherBodysPose: string): Promise<void> {
  expect((await call(rt, "POST", "/v1/sim/reset", { pose })).status).toBe(403);
  expect((await call(rt, "POST", "/v1/sim/reset", { pose: otherBodysPose }, lease)).status).toBe(400);
  expect((await call(rt, "POST", "/v1/estop", { reason: "reset test", category: 0 })).status).toBe(200);
  expect((await call(rt, "POST", "/v1/sim/reset", { pose }, lease)).json.code).toBe("BL_ERR_ESTOP_LATCHED");
  expect((await call(rt, "POST", "/v1/estop/reset", { reason: "reset test done" })).status).toBe(200);
}

describe("serve --body p7 --sim physics: POST /v1/sim/reset", () => {
  let rt: RunningRuntime;
  let lease: string;
  beforeAll(async () => {
    ({ rt, lease } = await serve("p7"));
  }, 90_000);
  afterAll(() => rt?.close());
  type State = P7Fields & { sim: SimWorld };
  const state = async () => (await call<State>(rt, "GET", "/v1/state")).json;

  it("puts the arm at rest at home, time 0, in the state at once; a move after it moves it", async () => {
    const bent = [0.4, -0.6, 0.3, -0.9, 0.5, 0.6, -0.4];
    expect((await call(rt, "POST", "/v1/commands/move-joints", { positions: bent, speed: 3 }, lease)).status).toBe(200);
    const moved = await until(state, (s) => Math.abs(s.joint_positions[3]! - bent[3]!) < 0.01);
    expect(moved.joint_positions[3]).toBeCloseTo(bent[3]!, 1);
    expect((await health(rt)).time_s).toBeGreaterThan(0.3);

    const r = await call<{ result: { pose: string; time_s: number } }>(rt, "POST", "/v1/sim/reset", { pose: "home" }, lease);
    expect(r.json).toEqual({ ok: true, result: { pose: "home", time_s: 0 } });
    const after = await state();
    for (const q of after.joint_positions) expect(Math.abs(q)).toBeLessThan(1e-3); // a few 4 ms cycles at rest since
    expect(after.sim).toMatchObject({ base_position_m: [0, 0, 0], base_orientation_xyzw: [0, 0, 0, 1], fallen: false, contacts: [] });
    expect(after.sim.time_s).toBeLessThan(0.3);
    expect((await health(rt)).time_s).toBeLessThan(0.3);
    await sleep(300);
    for (const q of (await state()).joint_positions) expect(Math.abs(q)).toBeLessThan(1e-3); // it holds there

    expect((await call(rt, "POST", "/v1/commands/move-joints", { positions: [0.3, 0, 0, 0, 0, 0, 0], speed: 3 }, lease)).status).toBe(200);
    const again = await until(state, (s) => Math.abs(s.joint_positions[0]! - 0.3) < 0.005);
    expect(again.joint_positions[0]).toBeCloseTo(0.3, 2);
  }, 60_000);

  it("follows a command's rules: the lease, a pose of its own, the e-stop latch", async () => {
    await expectCommandRules(rt, lease, "home", "stand");
  }, 30_000);
});

describe("serve --body tny360 --sim physics: POST /v1/sim/reset", () => {
  let rt: RunningRuntime;
  let lease: string;
  beforeAll(async () => {
    ({ rt, lease } = await serve("tny360"));
  }, 90_000);
  afterAll(() => rt?.close());
  type State = Tny360Fields & { sim: SimWorld };
  const state = async () => (await call<State>(rt, "GET", "/v1/state")).json;
  const reset = (pose: string) => call<{ result: { pose: string; time_s: number } }>(rt, "POST", "/v1/sim/reset", { pose }, lease);

  it("stand: on four paws at the origin, joints on, time 0; a velocity after it walks it; rest and lying lie it down", async () => {
    const boot = await state();
    expect(boot.sim.base_position_m[2]).toBeLessThan(0.07); // it boots limp on its folded legs
    expect((await reset("stand")).json).toEqual({ ok: true, result: { pose: "stand", time_s: 0 } });
    const now = await state();
    expect(now.sim.time_s).toBeLessThan(0.3);
    expect((await health(rt)).time_s).toBeLessThan(0.3);
    expect(now.locomotion.enabled_mask).toBe(0x3fff);
    expect(Math.hypot(now.sim.base_position_m[0]!, now.sim.base_position_m[1]!)).toBeLessThan(0.01);
    // a second of simulated time on (a slow machine's real-time factor can be ~0.5: wait for it, not for a wall-clock second)
    const standing = await until(state, (s) => s.sim.time_s > 1, 20_000);
    expect(standing.sim.time_s).toBeGreaterThan(1);
    expect(standing.sim.fallen).toBe(false);
    expect(standing.sim.base_position_m[2]).toBeGreaterThan(0.11);
    expect(standing.paws.grounded).toEqual([true, true, true, true]);

    // A command after the reset moves it: 1.5 s of simulated time at 0.1 m/s (renewed every 100 ms as a client keeps it alive).
    const x0 = standing.sim.base_position_m[0]!;
    let walked = standing;
    while (walked.sim.time_s < standing.sim.time_s + 1.5) {
      expect((await call(rt, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0 }, lease)).status).toBe(200);
      await sleep(100);
      walked = await state();
    }
    expect(walked.sim.base_position_m[0]! - x0).toBeGreaterThan(0.05);
    expect(walked.sim.fallen).toBe(false);

    // A reset while walking: back at the origin, the velocity gone.
    expect((await reset("stand")).status).toBe(200);
    const back = await state();
    expect(Math.hypot(back.sim.base_position_m[0]!, back.sim.base_position_m[1]!)).toBeLessThan(0.01);
    // The odometry starts again at the reset: it is the base's displacement from the origin the reset
    // put it at, in that state (the body settles a little on its paws: ~1 mm after the cycles a
    // loaded machine runs before this read, so not 0 itself), nothing of the walk before.
    expect(Math.abs(back.odometry.x)).toBeLessThan(0.01);
    expect(back.odometry.x).toBeCloseTo(back.sim.base_position_m[0]!, 3);
    await sleep(500);
    const still = await state();
    expect(still.locomotion.target_velocity).toEqual({ x: 0, y: 0, yaw: 0 });
    expect(Math.hypot(still.sim.base_position_m[0]!, still.sim.base_position_m[1]!)).toBeLessThan(0.02);

    expect((await reset("lying")).status).toBe(200);
    const lying = await until(state, (s) => s.sim.fallen && s.sim.contacts.some((c) => c.link === "Body"), 3000);
    expect(lying.sim.fallen).toBe(true); // on its back
    expect(lying.locomotion.enabled_mask & 0x0fff).toBe(0);

    expect((await reset("rest")).status).toBe(200);
    await sleep(500);
    const rest = await state();
    expect(rest.sim.fallen).toBe(false);
    expect(rest.sim.base_position_m[2]).toBeLessThan(0.07);
    expect(rest.locomotion.enabled_mask & 0x0fff).toBe(0);
  }, 60_000);

  it("follows a command's rules: the lease, a pose of its own, the e-stop latch", async () => {
    await expectCommandRules(rt, lease, "stand", "home");
  }, 30_000);
});
