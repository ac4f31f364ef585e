/**
 * Robot API server, in process (fastify inject) on simulated time: routes, units, validation
 * messages, leases, emergency stop, OpenAPI. The stream and the SDK over real sockets are in
 * stream.test.ts and sdk.test.ts.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { API_ORDER, API_TO_LOLA, JOINT_LIMITS } from "../../src/bodies/nao/joints.js";
import { P7_MAX_RAD } from "../../src/bodies/p7/joints.js";
import { ERRORS } from "../../src/errors.js";
import { SimClock } from "../../src/runtime/clock.js";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";
import type { P7Robot } from "../../src/runtime/p7-robot.js";
import { f32 } from "../../src/serve/api/bodies/common.js";
import type { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { appWithRoutes, call, type Json, LEASE, simNao, simP7, simTny, step } from "./helpers.js";
import { TEST_SIM } from "../support/test-sim.js";

describe("NAO robot API (inject, simulated time)", () => {
  let clock: SimClock;
  let robot: NaoRobot;
  let app: FastifyInstance;
  let routes: Set<string>;
  beforeEach(async () => {
    clock = new SimClock();
    robot = await simNao(clock);
    ({ app, routes } = await appWithRoutes(robot));
  });
  afterEach(async () => {
    await app.close();
  });

  it("answers 503 BL_ERR_STATE_NONE before the first cycle, then the state", async () => {
    const before = await call(app, "GET", "/v1/state");
    expect(before.status).toBe(503);
    expect(before.body.code).toBe("BL_ERR_STATE_NONE");
    await step(robot, clock, 3);
    const r = await call(app, "GET", "/v1/state");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ type: "state", body: "nao", seq: robot.state.seq, timestamp_ms: robot.state.timestampMs, link: "ok" });
    expect(r.body.epoch_ms).toBe(robot.state.epochMs);
  });

  it("converts units as seed 000 says: battery °C whole on REST, joints in API order, touch per hand/foot", async () => {
    await step(robot, clock, 2);
    const s = robot.state;
    // Poke values the simulator leaves at 0 so the mapping is visible (read happens before the next cycle).
    s.touch.fill(0);
    s.touch[7] = 1; // left hand, left
    s.touch[9] = 1; // right foot bumper, left
    s.battery[2] = 0.5; // charging
    s.batteryTemperatureC = 28.6;
    s.battery[3] = 2.8;
    const r = (await call(app, "GET", "/v1/state")).body as Json & {
      battery: Json;
      touch: Json;
      joint_positions: number[];
      joint_temperatures: number[];
      joint_currents: number[];
      imu: { linear_acceleration: number[] };
      left_foot_pressure: number[];
      right_foot_pressure: number[];
    };
    expect(r.battery).toEqual({ charge: f32(s.battery[0]!), current: 0.5, temperature: 29, charging: true, status: Math.trunc(s.battery[1]!) });
    expect(r.touch).toEqual({
      chest_button: false,
      head_front: false,
      head_middle: false,
      head_rear: false,
      left_foot: false,
      left_hand: true,
      right_foot: true,
      right_hand: false,
    });
    expect(r.joint_positions).toHaveLength(26);
    for (let i = 0; i < 26; i++) {
      expect(r.joint_positions[i]).toBe(f32(s.position[API_TO_LOLA[i]!]!));
      expect(r.joint_temperatures[i]).toBe(f32(s.temperature[API_TO_LOLA[i]!]!));
      expect(r.joint_currents[i]).toBe(f32(s.current[API_TO_LOLA[i]!]!));
    }
    // RHipYawPitch (API 14) reads the one hip yaw-pitch motor, LoLA's LHipYawPitch (API 8).
    expect(r.joint_positions[API_ORDER.indexOf("RHipYawPitch")]).toBe(r.joint_positions[API_ORDER.indexOf("LHipYawPitch")]);
    expect(r.imu.linear_acceleration).toEqual(Array.from(s.accelerometer, f32));
    expect(r.left_foot_pressure).toEqual(Array.from(s.fsr.subarray(0, 4), f32));
    expect(r.right_foot_pressure).toEqual(Array.from(s.fsr.subarray(4), f32));
    // Discharging: charging false.
    s.battery[2] = -1.2;
    expect(((await call(app, "GET", "/v1/state")).body.battery as Json).charging).toBe(false);
  });

  it("f32 prints float32 values as their shortest decimal and keeps them exact", () => {
    for (const v of [0.1, 1 / 3, -9.81, 2.0857, 1e-7, 12345.678, 0]) {
      const x = f32(v);
      expect(Math.fround(x)).toBe(Math.fround(v));
      expect(String(x).length).toBeLessThanOrEqual(String(Math.fround(v)).length);
    }
    expect(f32(Number.NaN)).toBe(0);
    expect(Object.is(f32(-0), 0)).toBe(true);
  });

  it("serves preferences, boards, info and health", async () => {
    const prefs = await call(app, "GET", "/v1/preferences");
    expect(prefs.status).toBe(200);
    expect(prefs.body.body_id).toBe(robot.prefs!.bodyId);
    expect(prefs.body.values).toHaveLength(76);
    const boards = (await call(app, "GET", "/v1/boards")).body as unknown as Array<Json>;
    expect(boards.length).toBe(robot.boards.length);
    expect(boards[0]).toMatchObject({ name: robot.boards[0]!.name, accepted: robot.boards[0]!.accepted, stored_serial: robot.boards[0]!.storedSerial });
    const info = (await call(app, "GET", "/v1/info")).body;
    expect(info).toMatchObject({ body: "nao", api_version: 1, stream: { path: "/v1/stream", rate_hz: 20 }, lease: { header: LEASE } });
    expect(info.joint_names).toEqual([...API_ORDER]);
    await step(robot, clock, 5);
    const health = (await call(app, "GET", "/v1/health")).body;
    expect(health).toMatchObject({
      body: "nao",
      link: "ok",
      safety_code: "no_holder",
      safety_reason: "no client holds control",
      control: null,
      api: { subscribers: 0, send_slice_ms: { p99: 0, max: 0 } },
    });
    expect((health.cycle as Json).cycles).toBe(5);
    expect(health.cycle).toMatchObject({ window_cycles: 5, core_gc_collections: expect.any(Number), core_gc_max_ms: expect.any(Number) });
    if (process.platform === "linux") {
      expect((health.cycle as Json).core_cpu_ms).toBeGreaterThan(0);
      expect((health.cycle as Json).core_wakeups).toBeGreaterThan(0);
    }
  });

  it("health ?window_cycles=N: the cycle percentiles describe only the N latest cycles", async () => {
    await step(robot, clock, 5); // periods 12 ms
    await clock.advance(30);
    robot.loop.step(); // one period of 30 ms
    const all = (await call(app, "GET", "/v1/health")).body.cycle as Json;
    expect(all).toMatchObject({ cycles: 6, window_cycles: 6, period_ms: { max: 30 } });
    const last = (await call(app, "GET", "/v1/health?window_cycles=1")).body.cycle as Json;
    expect(last).toMatchObject({ cycles: 6, window_cycles: 1, period_ms: { p50: 30, p99: 30, max: 30 }, jitter_p99_ms: 18 });
    await step(robot, clock, 2);
    const two = (await call(app, "GET", "/v1/health?window_cycles=2")).body.cycle as Json;
    expect(two).toMatchObject({ window_cycles: 2, period_ms: { max: 12 }, lateness_ms: { max: 0 } });
    for (const bad of ["0", "2049", "abc", "-3"]) {
      const r = await call(app, "GET", `/v1/health?window_cycles=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.code).toBe("BL_ERR_API_BAD_REQUEST");
    }
  });

  it("refuses bad requests with a 400 that names the field", async () => {
    const got = await call(app, "POST", "/v1/control", { owner: "alice" });
    const id = got.body.lease_id as string;
    const cases: Array<[string, unknown, RegExp]> = [
      ["/v1/commands/joints", { positions: [1, 2, 3] }, /body\/positions must not have fewer than 26 items/],
      ["/v1/commands/joints", { positions: new Array(27).fill(0) }, /body\/positions must not have more than 26 items/],
      ["/v1/commands/joints", { stiffness: [...new Array(25).fill(0), "x"] }, /body\/stiffness\/25 must be number/],
      ["/v1/commands/joints", {}, /body must not have fewer than 1 properties/],
      ["/v1/commands/joints", { position: new Array(26).fill(0) }, /body\/position .*additional properties/],
      ["/v1/commands/leds", { chest: [1, 1] }, /body\/chest must not have fewer than 3 items/],
      ["/v1/commands/sonar", { left: 1, right: true }, /body\/left must be boolean/],
    ];
    for (const [url, payload, msg] of cases) {
      const r = await call(app, "POST", url, payload, id);
      expect(r.status, url).toBe(400);
      expect(r.body.code).toBe("BL_ERR_API_BAD_REQUEST");
      expect(r.body.message).toMatch(msg);
    }
    // JSON cannot say NaN, but 1e400 parses to Infinity: refused, and the message says why.
    const inf = await app.inject({
      method: "POST",
      url: "/v1/commands/joints",
      headers: { [LEASE]: id, "content-type": "application/json" },
      payload: `{"positions":[${new Array(25).fill(0).join(",")},1e400]}`,
    });
    expect(inf.statusCode).toBe(400);
    expect(inf.json().message).toMatch(/body\/positions\/25 must be number.*NaN and Infinity are refused/);
    const bad = await call(app, "POST", "/v1/control", { owner: "bob", lease_ms: 10 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/body\/lease_ms must be >= 50/);
    const notJson = await app.inject({ method: "POST", url: "/v1/control", headers: { "content-type": "application/json" }, payload: "{owner" });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().code).toBe("BL_ERR_API_BAD_REQUEST");
    const nowhere = await call(app, "GET", "/v1/nowhere");
    expect(nowhere).toMatchObject({ status: 404, body: { code: "BL_ERR_API_NO_ROUTE" } });
  });

  it("leases: second client refused naming the holder; expiry frees control without the first acting", async () => {
    const a = await call(app, "POST", "/v1/control", { owner: "alice", lease_ms: 500 });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ owner: "alice", source: "api", lease_ms: 500 });
    const idA = a.body.lease_id as string;
    const until = new Date(a.body.expires_at_epoch_ms as number).toISOString();
    const b = await call(app, "POST", "/v1/control", { owner: "bob" });
    expect(b.status).toBe(409);
    expect(b.body.code).toBe("BL_ERR_AUTH_HELD");
    expect(b.body.message).toContain("alice");
    expect(b.body.message).toContain(until);
    expect(b.body.holder).toMatchObject({ owner: "alice", source: "api", expires_at: until });
    expect((await call(app, "GET", "/v1/control")).body).toEqual({ held: true, holder: b.body.holder });
    // Alice renews once, then "crashes" (does nothing more).
    await clock.advance(400);
    expect((await call(app, "PUT", "/v1/control", { lease_ms: 500 }, idA)).status).toBe(200);
    await clock.advance(400);
    expect((await call(app, "POST", "/v1/control", { owner: "bob" })).status).toBe(409);
    await clock.advance(101);
    const b2 = await call(app, "POST", "/v1/control", { owner: "bob" });
    expect(b2.status).toBe(201);
    // Alice's old lease is now refused, and the answer says who holds control.
    const late = await call(app, "POST", "/v1/commands/sonar", { left: true, right: true }, idA);
    expect(late.status).toBe(403);
    expect(late.body.code).toBe("BL_ERR_AUTH_UNKNOWN_LEASE");
    expect((late.body.holder as Json).owner).toBe("bob");
    expect((await call(app, "PUT", "/v1/control", {}, idA)).status).toBe(403);
    // Release, then releasing again is refused.
    expect((await call(app, "DELETE", "/v1/control", undefined, b2.body.lease_id as string)).body).toEqual({ released: true });
    expect((await call(app, "DELETE", "/v1/control", undefined, b2.body.lease_id as string)).status).toBe(403);
    expect((await call(app, "GET", "/v1/control")).body).toEqual({ held: false, holder: null });
  });

  it("a command without a lease gets a clear 403; renew and release need the header too", async () => {
    for (const [m, url, p] of [
      ["POST", "/v1/commands/joints", { stiffness: new Array(26).fill(0) }],
      ["POST", "/v1/commands/smooth-enable", {}],
      ["PUT", "/v1/control", {}],
      ["DELETE", "/v1/control", undefined],
    ] as const) {
      const r = await call(app, m, url, p);
      expect(r.status, url).toBe(403);
      expect(r.body.code).toBe("BL_ERR_AUTH_REQUIRED");
      expect(r.body.message).toBe(ERRORS.BL_ERR_AUTH_REQUIRED.message);
    }
  });

  it("emergency stop works without a lease, revokes control and latches until an explicit reset", async () => {
    await step(robot, clock, 2);
    expect((await call(app, "GET", "/v1/estop")).body).toEqual({ latched: false, reason: null, source: null, since_ms: null, category: null, phase: "none", default_category: 1 });
    const a = await call(app, "POST", "/v1/control", { owner: "alice" });
    const id = a.body.lease_id as string;
    expect((await call(app, "POST", "/v1/commands/smooth-enable", {}, id)).status).toBe(200);
    // No body and no lease; but a bodylink header, so that no web page could send it blind (issue 10).
    expect((await app.inject({ method: "POST", url: "/v1/estop" })).statusCode).toBe(415);
    const stop = await app.inject({ method: "POST", url: "/v1/estop", headers: { "x-bodylink-client": "curl" } });
    expect(stop.statusCode).toBe(200);
    expect(stop.json()).toMatchObject({ stopped: true, latched: true, reason: "emergency stop (robot API)", source: "api", category: 1 });
    expect((await call(app, "GET", "/v1/control")).body.held).toBe(false);
    await step(robot, clock, 200); // the category-1 crouch is bounded (2 s)
    expect(robot.state.safetyReason).toMatch(/emergency stop latched/);
    expect(Math.max(...robot.state.stiffness)).toBe(0);
    expect((await call(app, "GET", "/v1/estop")).body).toMatchObject({ latched: true, phase: "cut", category: 1 });
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ safety_code: "estop", estop: { latched: true, phase: "cut" } });
    // latched: the old lease, a new lease, and commands are all refused with the latch's code
    const old = await call(app, "POST", "/v1/commands/smooth-enable", {}, id);
    expect(old.status).toBe(409);
    expect(old.body.code).toBe("BL_ERR_ESTOP_LATCHED");
    const again = await call(app, "POST", "/v1/control", { owner: "mallory" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("BL_ERR_ESTOP_LATCHED");
    expect(again.body.message).toMatch(/reset/);
    // a second stop keeps the first one's reason; category 0 is accepted
    const second = await call(app, "POST", "/v1/estop", { reason: "hand in the way", category: 0 });
    expect(second.body).toMatchObject({ reason: "emergency stop (robot API)", category: 1, phase: "cut" });
    // a reset needs a reason
    expect((await call(app, "POST", "/v1/estop/reset", {})).status).toBe(400);
    expect((await call(app, "POST", "/v1/estop", { category: 2 })).status).toBe(400);
    const reset = await call(app, "POST", "/v1/estop/reset", { reason: "area clear" });
    expect(reset.body).toMatchObject({ latched: false, was_latched: true, phase: "none" });
    expect((await call(app, "POST", "/v1/estop/reset", { reason: "again" })).body.was_latched).toBe(false);
    // nothing moves after the reset until a client takes control and commands; then stiffness ramps
    await step(robot, clock, 10);
    expect(Math.max(...robot.state.stiffness)).toBe(0);
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ safety_code: "estop_reset", safety_reason: "emergency stop reset: take control and command to move" });
    const b = await call(app, "POST", "/v1/control", { owner: "alice" });
    expect(b.status).toBe(201);
    expect((await call(app, "POST", "/v1/commands/joints", { stiffness: new Array(26).fill(1) }, b.body.lease_id as string)).status).toBe(200);
    await step(robot, clock, 1);
    expect(Math.max(...robot.state.stiffness)).toBeGreaterThan(0);
    expect(Math.max(...robot.state.stiffness)).toBeLessThan(0.1);
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ safety_code: "none", safety_reason: null });
  });

  it("joint commands: API order to LoLA, out-of-limit positions clamped and listed, RHipYawPitch note", async () => {
    await step(robot, clock, 2);
    const id = (await call(app, "POST", "/v1/control", { owner: "alice" })).body.lease_id as string;
    const positions = API_ORDER.map((n) => (JOINT_LIMITS[n].minRad + JOINT_LIMITS[n].maxRad) / 2);
    positions[0] = 5; // HeadYaw above its limit
    positions[API_ORDER.indexOf("RHipYawPitch")] = positions[API_ORDER.indexOf("LHipYawPitch")]! + 0.1;
    const r = await call(app, "POST", "/v1/commands/joints", { positions, stiffness: new Array(26).fill(1.5) }, id);
    expect(r.status).toBe(200);
    const result = r.body.result as { applied: string[]; clamped: Array<Json>; notes: string[] };
    expect(result.applied).toEqual(["positions", "stiffness"]);
    expect(result.clamped[0]).toEqual({ joint: "HeadYaw", field: "positions", requested: 5, applied: JOINT_LIMITS.HeadYaw.maxRad });
    expect(result.clamped.filter((c) => c.field === "stiffness")).toHaveLength(25); // 26 minus the shared RHipYawPitch
    expect(result.notes.join()).toMatch(/RHipYawPitch .* LHipYawPitch's value was used/);
    const leds = await call(app, "POST", "/v1/commands/leds", { chest: [1, 0, 2], skull: new Array(12).fill(0.5) }, id);
    expect(leds.body.result).toMatchObject({ applied: ["chest", "skull"], clamped: [{ joint: "chest[2]", requested: 2, applied: 1 }] });
    const smooth = await call(app, "POST", "/v1/commands/smooth-disable", {}, id);
    expect((smooth.body.result as Json).estimated_s).toBeGreaterThan(0);
  });

  it(`POST /v1/sim/reset on this project's NAO (${TEST_SIM}): physics lies it down, time 0; kinematic has no world (404)`, async () => {
    await step(robot, clock, 2);
    const id = (await call(app, "POST", "/v1/control", { owner: "t" })).body.lease_id as string;
    const r = await call(app, "POST", "/v1/sim/reset", { pose: "lying" }, id);
    if (TEST_SIM === "kinematic") {
      expect(r).toMatchObject({ status: 404, body: { code: "BL_ERR_CMD_UNSUPPORTED" } });
      expect(r.body.message).toMatch(/nao on the kinematic simulator.*--sim physics/);
      return;
    }
    expect(r.body).toEqual({ ok: true, result: { pose: "lying", time_s: 0 } });
    await step(robot, clock, 20);
    expect((await call(app, "GET", "/v1/state")).body.sim).toMatchObject({ fallen: true });
  });

  it("serves an OpenAPI 3.1 document that validates and lists every route", async () => {
    const r = await app.inject({ url: "/openapi.json" });
    expect(r.statusCode).toBe(200);
    const doc = r.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    await SwaggerParser.validate(structuredClone(doc) as never);
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`);
    expect(documented).toEqual(routes);
    expect(routes).toContain("GET /v1/stream");
    expect(routes).toContain("POST /v1/sim/reset");
    expect(routes).toContain("POST /v1/sim/step");
    expect(routes.size).toBe(21);
  });
});

describe("P7 robot API (inject, simulated time)", () => {
  let clock: SimClock;
  let robot: P7Robot;
  let app: FastifyInstance;
  let routes: Set<string>;
  beforeEach(async () => {
    clock = new SimClock();
    robot = await simP7(clock);
    ({ app, routes } = await appWithRoutes(robot));
  });
  afterEach(async () => {
    await app.close();
  });

  it("serves the three P7 models as one state with 7-joint arrays", async () => {
    expect((await call(app, "GET", "/v1/state")).status).toBe(503);
    await step(robot, clock, 3);
    const snap = robot.getState()!;
    const r = (await call(app, "GET", "/v1/state")).body;
    expect(r).toMatchObject({ body: "p7", seq: snap.seq, timestamp_ms: snap.timestampMs, link: "ok" });
    expect(r.joint_positions).toEqual([...snap.joints.angles]);
    expect(r.joint_efforts).toEqual([...snap.joints.efforts]);
    expect(r.error_ids).toEqual([...snap.motors.errorIds]);
    expect((r.imu as { linear_acceleration: number[] }).linear_acceleration).toEqual([...snap.imu.linearAcceleration]);
    expect((await call(app, "GET", "/v1/info")).body.joint_names).toEqual(["joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7"]);
  });

  it(`runs on this project's arm: ${TEST_SIM} (vitest.config.ts runs this file on both); with physics the state carries sim`, async () => {
    expect(robot.sim.model.kind).toBe(TEST_SIM);
    await step(robot, clock, 3);
    const r = (await call(app, "GET", "/v1/state")).body;
    if (TEST_SIM === "physics") expect(r.sim).toMatchObject({ time_s: robot.sim.timeS, base_position_m: [0, 0, 0], base_orientation_xyzw: [0, 0, 0, 1], fallen: false, contacts: [] });
    else expect(r.sim).toBeUndefined();
    expect((await call(app, "GET", "/v1/health")).body.sim).toMatchObject({ model: TEST_SIM });
  });

  it(`POST /v1/sim/reset on this project's arm (${TEST_SIM}): physics puts it at rest at home, time 0, under the lease and e-stop rules; kinematic refuses (404)`, async () => {
    await step(robot, clock, 2);
    const id = (await call(app, "POST", "/v1/control", { owner: "arm-ctl" })).body.lease_id as string;
    if (TEST_SIM === "kinematic") {
      const r = await call(app, "POST", "/v1/sim/reset", { pose: "home" }, id);
      expect(r).toMatchObject({ status: 404, body: { code: "BL_ERR_CMD_UNSUPPORTED" } });
      expect(r.body.message).toMatch(/kinematic.*--sim physics/);
      return;
    }
    const bent = [0.4, -0.6, 0.3, -0.9, 0.5, 0.6, -0.4];
    expect((await call(app, "POST", "/v1/commands/move-joints", { positions: bent, speed: 3 }, id)).status).toBe(200);
    await step(robot, clock, 150); // 0.6 s: under way
    expect(Math.abs(robot.state.angles[1]!)).toBeGreaterThan(0.3);
    const t0 = robot.sim.timeS;
    expect((await call(app, "POST", "/v1/sim/reset", { pose: "home" })).status).toBe(403);
    expect((await call(app, "POST", "/v1/sim/reset", { pose: "zero" }, id)).status).toBe(400);
    // The state shows the pose at once; the world's time restarts (the state's and health's).
    expect((await call(app, "POST", "/v1/sim/reset", { pose: "home" }, id)).body).toEqual({ ok: true, result: { pose: "home", time_s: 0 } });
    const now = (await call(app, "GET", "/v1/state")).body as Json & { joint_positions: number[]; joint_velocities: number[]; sim: { time_s: number } };
    for (let i = 0; i < 7; i++) expect(Math.abs(now.joint_positions[i]!)).toBeLessThan(1e-9);
    for (let i = 0; i < 7; i++) expect(now.joint_velocities[i]).toBe(0);
    expect(now.sim).toMatchObject({ time_s: 0, base_position_m: [0, 0, 0], fallen: false });
    await step(robot, clock, 50); // the move sent before the reset is over: the arm holds at home
    expect(robot.sim.timeS).toBeCloseTo(0.2, 9);
    expect(robot.sim.timeS).toBeLessThan(t0);
    expect((await call(app, "GET", "/v1/health")).body.sim).toMatchObject({ time_s: robot.sim.timeS });
    for (let i = 0; i < 7; i++) expect(Math.abs(robot.state.angles[i]!)).toBeLessThan(1e-3);
    // A command after the reset moves it.
    expect((await call(app, "POST", "/v1/commands/move-joints", { positions: [0.3, 0, 0, 0, 0, 0, 0], speed: 3 }, id)).status).toBe(200);
    await step(robot, clock, 150);
    expect(robot.state.angles[0]).toBeCloseTo(0.3, 2);
    expect((await call(app, "POST", "/v1/estop", { reason: "test" })).status).toBe(200);
    expect(await call(app, "POST", "/v1/sim/reset", { pose: "home" }, id)).toMatchObject({ status: 409, body: { code: "BL_ERR_ESTOP_LATCHED" } });
  });

  it("keeps serving the last complete state with link lost, so clients see why it stopped", async () => {
    await step(robot, clock, 2);
    const seq = robot.getState()!.seq;
    robot.simulateLinkLoss();
    await step(robot, clock, 2);
    const r = (await call(app, "GET", "/v1/state")).body;
    expect(r).toMatchObject({ seq, link: "lost" });
  });

  it("commands: move refused outside limits (400 naming the joint), accepted inside, clear-error, e-stop", async () => {
    await step(robot, clock, 2);
    const id = (await call(app, "POST", "/v1/control", { owner: "arm-ctl" })).body.lease_id as string;
    const tooFar = [0, 0, 0, 0, 0, 0, P7_MAX_RAD[6]! + 0.5];
    const bad = await call(app, "POST", "/v1/commands/move-joints", { positions: tooFar }, id);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("BL_ERR_CMD_INVALID");
    expect(bad.body.message).toMatch(/joint7/);
    const ok = await call(app, "POST", "/v1/commands/move-joints", { positions: [0.2, -0.2, 0, -0.5, 0, 0.1, 0], speed: 100 }, id);
    expect(ok.status).toBe(200);
    const res = ok.body.result as { eta_s: number; speed_rad_s: number[] };
    expect(res.eta_s).toBeGreaterThan(0);
    expect(res.speed_rad_s[0]).toBeCloseTo(Math.PI); // clamped to joint 1's maximum
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] }, id)).status).toBe(200);
    expect((await call(app, "POST", "/v1/commands/clear-error", { joint: 9 }, id)).body.message).toMatch(/body\/joint must be <= 6/);
    const cleared = await call(app, "POST", "/v1/commands/clear-error", {}, id);
    expect(cleared.body).toEqual({ ok: true, result: { cleared_joints: [] } });
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] })).status).toBe(403);
    expect((await call(app, "POST", "/v1/estop", { reason: "test" })).status).toBe(200);
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] }, id)).status).toBe(409);
  });

  it("serves an OpenAPI document that validates and lists every route", async () => {
    const doc = (await app.inject({ url: "/openapi.json" })).json() as { paths: Record<string, Record<string, unknown>> };
    await SwaggerParser.validate(structuredClone(doc) as never);
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`);
    expect(documented).toEqual(routes);
    expect(routes).toContain("POST /v1/commands/move-joints");
  });
});

describe("TNY-360 robot API (inject, simulated time)", () => {
  let clock: SimClock;
  let robot: Tny360Robot;
  let app: FastifyInstance;
  let routes: Set<string>;
  beforeEach(async () => {
    clock = new SimClock();
    robot = await simTny(clock);
    ({ app, routes } = await appWithRoutes(robot));
  });
  afterEach(async () => {
    await app.close();
  });

  it("serves the quadruped's state: 14 joints in JointId order, IMU with gravity, no temperature sensor", async () => {
    await step(robot, clock, 4); // (the simulator has a valid state from creation)
    const r = (await call(app, "GET", "/v1/state")).body as Json & {
      joint_positions: number[];
      joint_temperatures: unknown[];
      imu: { linear_acceleration: number[] };
      paws: { grounded: boolean[] };
    };
    expect(r).toMatchObject({ type: "state", body: "tny360", seq: robot.state.seq, link: robot.state.link, source: "sim" });
    expect(r.joint_positions).toEqual(Array.from(robot.state.joints.positionRad, f32));
    expect(r.joint_temperatures).toEqual(new Array(14).fill(null));
    expect(Math.hypot(...r.imu.linear_acceleration)).toBeGreaterThan(9);
    expect(r.paws.grounded).toHaveLength(4);
    expect((await call(app, "GET", "/v1/info")).body.joint_names).toEqual([...robot.jointNames]);
  });

  it("commands need the lease; out-of-limit joint targets are refused; e-stop needs none", async () => {
    await step(robot, clock, 2);
    expect((await call(app, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0 })).status).toBe(403);
    const id = (await call(app, "POST", "/v1/control", { owner: "walker" })).body.lease_id as string;
    expect((await call(app, "POST", "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0.2 }, id)).body).toEqual({ ok: true, result: { forwarded: false } });
    await step(robot, clock, 10); // the firmware's decision loop takes requests at 30 Hz
    expect((await call(app, "GET", "/v1/state")).body.locomotion).toMatchObject({ target_velocity: { x: f32(0.1), yaw: f32(0.2) } });
    expect((await call(app, "POST", "/v1/commands/gait", { gait: "Trot" }, id)).status).toBe(400);
    expect((await call(app, "POST", "/v1/commands/gait", { gait: "Run" }, id)).status).toBe(200);
    const far = await call(app, "POST", "/v1/commands/joint", { joint: 2, position: 3.5 }, id); // knee max is 150°
    expect(far.status).toBe(400);
    expect(far.body.code).toBe("BL_ERR_CMD_INVALID");
    const smooth = await call(app, "POST", "/v1/commands/smooth-enable", {}, id);
    expect((smooth.body.result as Json).estimated_s).toBeGreaterThan(0);
    expect((await call(app, "POST", "/v1/estop", {})).status).toBe(200);
    expect((await call(app, "GET", "/v1/control")).body.held).toBe(false);
    await step(robot, clock, 10);
    expect((await call(app, "GET", "/v1/state")).body.locomotion).toMatchObject({ target_velocity: { x: 0, y: 0, yaw: 0 } });
  });

  it("POST /v1/sim/reset: the kinematic TNY-360 has no world to reset (404; the physics one: test/sim/sim-reset-serve.test.ts)", async () => {
    await step(robot, clock, 2);
    const id = (await call(app, "POST", "/v1/control", { owner: "walker" })).body.lease_id as string;
    const r = await call(app, "POST", "/v1/sim/reset", { pose: "stand" }, id);
    expect(r).toMatchObject({ status: 404, body: { code: "BL_ERR_CMD_UNSUPPORTED" } });
    expect(r.body.message).toMatch(/tny360 on the kinematic simulator.*--sim physics/);
    expect((await call(app, "POST", "/v1/sim/reset", { pose: "crouch" }, id)).status).toBe(400); // the NAO's pose, not the TNY-360's
  });

  it("serves an OpenAPI document that validates and lists every route", async () => {
    const doc = (await app.inject({ url: "/openapi.json" })).json() as { paths: Record<string, Record<string, unknown>> };
    await SwaggerParser.validate(structuredClone(doc) as never);
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`);
    expect(documented).toEqual(routes);
    expect(routes).toContain("POST /v1/commands/velocity");
  });
});

describe("routes outside the OpenAPI document", () => {
  it("are exactly the dashboard's page routes, and they answer", async () => {
    const robot = await simNao();
    const { app, pages } = await appWithRoutes(robot);
    expect([...pages].sort()).toEqual(["GET /", "GET /dashboard/:file"]);
    const page = await app.inject({ url: "/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    await app.close();
  });
});
