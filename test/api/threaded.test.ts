/**
 * The robot API in front of the THREADED P7 and TNY-360 cores (src/host/p7-host.ts,
 * tny360-host.ts), as `bodylink serve` builds it: the same state and command contract as in front
 * of the in-thread robots (test/api/server.test.ts), each command answered by the core in its
 * worker, the state read from the host's mirror. Real time: reads wait for the core's next state.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { P7_MAX_RAD } from "../../src/bodies/p7/joints.js";
import { P7Host } from "../../src/host/p7-host.js";
import { Tny360Host } from "../../src/host/tny360-host.js";
import type { P7Robot } from "../../src/runtime/p7-robot.js";
import type { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { f32 } from "../../src/serve/api/bodies/common.js";
import { appWithRoutes, call, type Json } from "./helpers.js";


async function eventually(ok: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("P7 robot API in front of the threaded core", () => {
  let host: P7Host;
  let app: FastifyInstance;
  beforeAll(async () => {
    host = await P7Host.start({ seed: 3 });
    ({ app } = await appWithRoutes(host as unknown as P7Robot));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await host?.shutdown();
  });

  it("serves the arm's state from the core: 7-joint arrays with the core's stamp", async () => {
    await eventually(async () => (await call(app, "GET", "/v1/state")).status === 200, "a state");
    const r = (await call(app, "GET", "/v1/state")).body as Json & { joint_positions: number[]; error_ids: number[] };
    expect(r).toMatchObject({ body: "p7", link: "ok" });
    expect(r.seq as number).toBeGreaterThan(0);
    expect(r.joint_positions).toHaveLength(7);
    expect(r.error_ids).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ body: "p7", link: "ok" });
  });

  it("commands: refused outside limits (400 naming the joint), accepted inside and carried out by the core, clear-error, lease, e-stop", async () => {
    const id = (await call(app, "POST", "/v1/control", { owner: "arm-ctl" })).body.lease_id as string;
    const bad = await call(app, "POST", "/v1/commands/move-joints", { positions: [0, 0, 0, 0, 0, 0, P7_MAX_RAD[6]! + 0.5] }, id);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("BL_ERR_CMD_INVALID");
    expect(bad.body.message).toMatch(/joint7/);
    const ok = await call(app, "POST", "/v1/commands/move-joints", { positions: [0.2, -0.2, 0, -0.5, 0, 0.1, 0], speed: 100 }, id);
    expect(ok.status).toBe(200);
    const res = ok.body.result as { eta_s: number; speed_rad_s: number[] };
    expect(res.eta_s).toBeGreaterThan(0);
    expect(res.speed_rad_s[0]).toBeCloseTo(Math.PI); // clamped to joint 1's maximum
    // the core moves the arm: the state the API serves shows joint 1 on its way to 0.2 rad
    await eventually(async () => ((await call(app, "GET", "/v1/state")).body.joint_positions as number[])[0]! > 0.05, "joint 1 moving");
    expect((await call(app, "POST", "/v1/commands/clear-error", {}, id)).body).toEqual({ ok: true, result: { cleared_joints: [] } });
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] })).status).toBe(403);
    expect((await call(app, "POST", "/v1/estop", { reason: "test" })).status).toBe(200);
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] }, id)).status).toBe(409);
    expect((await call(app, "GET", "/v1/estop")).body).toMatchObject({ latched: true, reason: "test" });
    expect((await call(app, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
  });
});

describe("TNY-360 robot API in front of the threaded core", () => {
  let host: Tny360Host;
  let app: FastifyInstance;
  beforeAll(async () => {
    host = await Tny360Host.start({ seed: 5, remote: null, server: null });
    ({ app } = await appWithRoutes(host as unknown as Tny360Robot));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await host?.shutdown();
  });

  it("serves the quadruped's state from the core: 14 joints in JointId order, IMU with gravity, no temperature sensor", async () => {
    await eventually(async () => (await call(app, "GET", "/v1/state")).status === 200, "a state");
    const r = (await call(app, "GET", "/v1/state")).body as Json & { joint_positions: number[]; joint_temperatures: unknown[]; imu: { linear_acceleration: number[] }; paws: { grounded: boolean[] } };
    expect(r).toMatchObject({ type: "state", body: "tny360", link: "ok", source: "sim" });
    expect(r.joint_positions).toHaveLength(14);
    expect(r.joint_temperatures).toEqual(new Array(14).fill(null));
    expect(Math.hypot(...r.imu.linear_acceleration)).toBeGreaterThan(9);
    expect(r.paws.grounded).toHaveLength(4);
  });

  it("commands need the lease and reach the core; out-of-limit joint targets are refused; e-stop needs none", async () => {
    expect((await call(app, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0 })).status).toBe(403);
    const id = (await call(app, "POST", "/v1/control", { owner: "walker" })).body.lease_id as string;
    expect((await call(app, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0.2 }, id)).body).toEqual({ ok: true, result: { forwarded: false } });
    await eventually(async () => {
      const l = (await call(app, "GET", "/v1/state")).body.locomotion as { target_velocity: { x: number; yaw: number } };
      return l.target_velocity.x === f32(0.1) && l.target_velocity.yaw === f32(0.2);
    }, "the decision loop taking the velocity");
    expect((await call(app, "POST", "/v1/commands/gait", { gait: "Run" }, id)).status).toBe(200);
    const far = await call(app, "POST", "/v1/commands/joint", { joint: 2, position: 3.5 }, id); // knee max is 150°
    expect(far.status).toBe(400);
    expect(far.body.code).toBe("BL_ERR_CMD_INVALID");
    const smooth = await call(app, "POST", "/v1/commands/smooth-enable", {}, id);
    expect(smooth.status).toBe(200);
    expect((smooth.body.result as { estimated_s: number }).estimated_s).toBeGreaterThan(0);
    expect((await call(app, "POST", "/v1/estop", { reason: "test" })).status).toBe(200);
    expect((await call(app, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0 }, id)).status).toBe(409);
    await eventually(async () => ((await call(app, "GET", "/v1/state")).body.locomotion as { target_velocity: { x: number } }).target_velocity.x === 0, "velocity 0 after the e-stop");
  });
});
