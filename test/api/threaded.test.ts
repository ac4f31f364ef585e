/**
 * The contracts on what users run: the robot API in front of every body's THREADED core (its host
 * on the main thread, src/host/<body>-host.ts, the core in its worker), as `bodylink serve` builds
 * it, and the NAO's LoLA server in that core's thread. One registry-typed rig per body (`RIGS`, a
 * body without one does not compile), one runtime per body for the whole file (started on first
 * use, shut down at the end). Each body answers the same routes as the in-thread robot
 * (test/api/server.test.ts covers those on simulated time), serves its state from the core, and
 * keeps the lease and e-stop contract; then each body's own commands reach its core. Real time:
 * reads wait for the core's next state.
 */
import { unpack } from "msgpackr";
import type { FastifyInstance } from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { stiffnessFromCounts, stiffnessToCounts } from "../../src/bodies/nao/units.js";
import { P7_MAX_RAD } from "../../src/bodies/p7/joints.js";
import { BODY_KINDS, type BodyKind, type BodyTable } from "../../src/bodies/registry.js";
import { NaoHost } from "../../src/host/nao-host.js";
import { P7Host } from "../../src/host/p7-host.js";
import { Tny360Host } from "../../src/host/tny360-host.js";
import { f32 } from "../../src/serve/api/bodies/common.js";
import type { ApiRobot } from "../../src/serve/api/routes/context.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LOLA_SENSOR_KEYS } from "../../src/wire/lola/constants.js";
import { TestLolaClient, tmpSocketPath } from "../lola/client.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { TEST_SIM } from "../support/test-sim.js";
import { type AnyRobot, appWithRoutes, call, type Json, simNao, simP7, simTny } from "./helpers.js";

useRuntimeDir("bodylink-threaded-");

async function eventually(ok: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Host = NaoHost | P7Host | Tny360Host;

interface Rig {
  /** The threaded core as serve starts it. */
  start(): Promise<Host>;
  /** The in-thread robot of the same body (the routes it answers are the contract). */
  inThread(): Promise<AnyRobot>;
  /** Joints in the API's order. */
  readonly joints: number;
  /** A command of this body's own that any lease holder may send, and how its state shows the core took it. */
  readonly command: { readonly path: string; readonly body: object; taken(state: Json): boolean };
}

const LOLA_PATH = tmpSocketPath();
const stiffnessSent = (v: number): number => Math.fround(stiffnessFromCounts(stiffnessToCounts(v)));

const RIGS: BodyTable<Rig> = {
  nao: {
    start: () => NaoHost.start({ seed: 2, usb: false, acceptBoardVersions: [11], gcEveryMs: 100, lola: { path: LOLA_PATH, fallbackPath: null, readers: 0, graceMs: 2000 } }),
    inThread: () => simNao(),
    joints: 26,
    command: { path: "/v1/commands/joints", body: { stiffness: new Array(26).fill(0.25) }, taken: (s) => Math.abs((s.joint_stiffness as number[])[0]! - 0.25) < 0.01 },
  },
  p7: {
    start: () => P7Host.start({ seed: 3, sim: TEST_SIM }),
    inThread: () => simP7(),
    joints: 7,
    command: { path: "/v1/commands/servo-joints", body: { positions: [0.1, 0, 0, 0, 0, 0, 0] }, taken: (s) => (s.joint_positions as number[])[0]! > 0.02 },
  },
  tny360: {
    start: () => Tny360Host.start({ seed: 5, remote: null, server: null }),
    inThread: () => simTny(),
    joints: 14,
    command: { path: "/v1/commands/velocity", body: { x: 0.05, y: 0, yaw: 0 }, taken: (s) => (s.locomotion as { target_velocity: { x: number } }).target_velocity.x === f32(0.05) },
  },
};

/** One runtime per body for the file, started on first use. */
const running = new Map<BodyKind, Promise<{ host: Host; app: FastifyInstance }>>();
function runtime(kind: BodyKind): Promise<{ host: Host; app: FastifyInstance }> {
  let r = running.get(kind);
  if (!r) {
    r = RIGS[kind].start().then(async (host) => ({ host, app: (await appWithRoutes(host as ApiRobot)).app }));
    running.set(kind, r);
  }
  return r;
}
afterAll(async () => {
  for (const r of running.values()) {
    const { host, app } = await r.catch(() => ({ host: null, app: null }));
    await app?.close();
    await host?.shutdown();
  }
}, 30_000);

describe.each(BODY_KINDS)("%s: the robot API in front of the threaded core (what serve runs)", { timeout: 60_000 }, (kind) => {
  it("answers exactly the routes the in-thread robot answers", async () => {
    const { host } = await runtime(kind);
    const threaded = await appWithRoutes(host as ApiRobot);
    const robot = await RIGS[kind].inThread();
    const inThread = await appWithRoutes(robot);
    try {
      expect([...threaded.routes].sort()).toEqual([...inThread.routes].sort());
      expect(threaded.routes.size).toBeGreaterThan(10);
    } finally {
      await threaded.app.close();
      await inThread.app.close();
      await robot.shutdown();
    }
  });

  it("serves the body's state from the core, with the core's stamp", async () => {
    const { app } = await runtime(kind);
    await eventually(async () => (await call(app, "GET", "/v1/state")).status === 200, "a state");
    const r = (await call(app, "GET", "/v1/state")).body as Json & { joint_positions: number[] };
    expect(r).toMatchObject({ type: "state", body: kind, link: "ok" });
    expect(r.seq as number).toBeGreaterThan(0);
    expect(r.joint_positions).toHaveLength(RIGS[kind].joints);
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ body: kind, link: "ok" });
  });

  it("keeps the lease and e-stop contract: 403 without a lease, the command reaches the core with one, 409 while latched, control again after the reset", async () => {
    const { app } = await runtime(kind);
    const cmd = RIGS[kind].command;
    const none = await call(app, "POST", cmd.path, cmd.body);
    expect(none.status).toBe(403);
    const id = (await call(app, "POST", "/v1/control", { owner: `contract-${kind}` })).body.lease_id as string;
    expect(typeof id).toBe("string");
    expect((await call(app, "POST", cmd.path, cmd.body, id)).status).toBe(200);
    await eventually(async () => cmd.taken((await call(app, "GET", "/v1/state")).body), "the core taking the command");
    expect((await call(app, "POST", "/v1/estop", { reason: "contract" })).status).toBe(200);
    const latched = await call(app, "POST", cmd.path, cmd.body, id);
    expect(latched.status).toBe(409);
    expect(latched.body.code).toBe("BL_ERR_ESTOP_LATCHED");
    expect((await call(app, "GET", "/v1/estop")).body).toMatchObject({ latched: true, reason: "contract" });
    expect((await call(app, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
    const again = await call(app, "POST", "/v1/control", { owner: `contract-${kind}` });
    expect(again.status).toBe(201);
    expect((await call(app, "DELETE", "/v1/control", undefined, again.body.lease_id as string)).status).toBe(200);
  });
});

describe("P7: the arm's own commands in front of the threaded core", { timeout: 60_000 }, () => {
  it(`runs on this project's arm: ${TEST_SIM} (vitest.config.ts runs this file on both); the physics arm's world crosses with the state`, async () => {
    const { app } = await runtime("p7");
    await eventually(async () => (await call(app, "GET", "/v1/state")).status === 200, "a state");
    expect((await call(app, "GET", "/v1/health")).body).toMatchObject({ sim: { model: TEST_SIM } });
    const r = (await call(app, "GET", "/v1/state")).body;
    if (TEST_SIM === "physics") expect(r.sim).toMatchObject({ base_position_m: [0, 0, 0], fallen: false });
    else expect(r.sim).toBeUndefined();
  });

  it("refused outside limits (400 naming the joint), accepted inside and carried out by the core, clear-error, lease, e-stop", async () => {
    const { app } = await runtime("p7");
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
    await eventually(async () => ((await call(app, "GET", "/v1/state")).body.joint_positions as number[])[0]! > 0.15, "joint 1 moving");
    expect((await call(app, "POST", "/v1/commands/clear-error", {}, id)).body).toEqual({ ok: true, result: { cleared_joints: [] } });
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] })).status).toBe(403);
    expect((await call(app, "POST", "/v1/estop", { reason: "test" })).status).toBe(200);
    expect((await call(app, "POST", "/v1/commands/servo-joints", { positions: [0, 0, 0, 0, 0, 0, 0] }, id)).status).toBe(409);
    expect((await call(app, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
  });
});

describe("TNY-360: the quadruped's own commands in front of the threaded core", { timeout: 60_000 }, () => {
  it("14 joints, IMU with gravity, no temperature sensor; velocity and gait reach the core; out-of-limit joint targets refused; smooth enable answers its estimate", async () => {
    const { app } = await runtime("tny360");
    await eventually(async () => (await call(app, "GET", "/v1/state")).status === 200, "a state");
    const r = (await call(app, "GET", "/v1/state")).body as Json & { joint_temperatures: unknown[]; imu: { linear_acceleration: number[] }; paws: { grounded: boolean[] } };
    expect(r).toMatchObject({ source: "sim" });
    expect(r.joint_temperatures).toEqual(new Array(14).fill(null));
    expect(Math.hypot(...r.imu.linear_acceleration)).toBeGreaterThan(9);
    expect(r.paws.grounded).toHaveLength(4);
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
    await eventually(async () => ((await call(app, "GET", "/v1/state")).body.locomotion as { target_velocity: { x: number } }).target_velocity.x === 0, "velocity 0 after the e-stop");
    expect((await call(app, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
  });
});

describe("NAO: the LoLA contract on the threaded core (the server in the core's thread)", { timeout: 60_000 }, () => {
  const on = new LolaCommandWriter(["Stiffness"]).setFloats("Stiffness", new Array(25).fill(0.5)).bytes;
  const holder = async (app: FastifyInstance) => ((await call(app, "GET", "/v1/health")).body.control as { owner: string } | null)?.owner ?? null;

  it("a read_exact(896) client gets whole sensor messages with LoLA's keys, one per cycle", async () => {
    const { host } = await runtime("nao");
    expect((host as NaoHost).lolaPath).toBe(LOLA_PATH);
    const c = await TestLolaClient.connect(LOLA_PATH);
    try {
      const t0 = Date.now();
      let last: Record<string, unknown> = {};
      for (let i = 0; i < 25; i++) last = unpack(await c.frame()) as Record<string, unknown>;
      expect(Object.keys(last).sort()).toEqual(LOLA_SENSOR_KEYS.map((k) => k.key).sort());
      expect((last.Position as number[]).length).toBe(25);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(20 * 12 * 0.8); // paced by the 12 ms cycle, not a burst
    } finally {
      await c.close();
    }
  });

  it("the core does not spin before its deadlines unless asked: core_spun_ms stays 0 by default, grows with a lead (--core-spin-ms 0.3)", async () => {
    const spun = async (app: FastifyInstance, cycles: number): Promise<number> => {
      let h: Json = {};
      await eventually(async () => {
        h = (await call(app, "GET", "/v1/health")).body.cycle as Json;
        return (h.cycles as number) >= cycles;
      }, `${cycles} cycles`);
      return h.core_spun_ms as number;
    };
    expect(await spun((await runtime("nao")).app, 50)).toBe(0);
    const host = await NaoHost.start({ seed: 2, usb: false, acceptBoardVersions: [11], gcEveryMs: 100, lola: null, spinMs: 0.3 });
    const { app } = await appWithRoutes(host as ApiRobot);
    try {
      expect(await spun(app, 50)).toBeGreaterThan(0);
    } finally {
      await app.close();
      await host.shutdown();
    }
  });

  it("a command takes control as its lola:client (the API is refused, the stiffness reaches the body); a second controller is refused; hanging up frees control", async () => {
    const { app } = await runtime("nao");
    const c = await TestLolaClient.connect(LOLA_PATH);
    try {
      await c.frame();
      await c.send(on);
      await eventually(async () => /^lola:client#\d+$/.test((await holder(app)) ?? ""), "the LoLA client taking control");
      const refused = await call(app, "POST", "/v1/control", { owner: "api" });
      expect(refused.status).toBe(409);
      c.discard();
      await eventually(async () => {
        await c.send(on);
        return (unpack(await c.frame()) as { Stiffness: number[] }).Stiffness[0] === stiffnessSent(0.5);
      }, "the stiffness in the sensor message");
      const c2 = await TestLolaClient.connect(LOLA_PATH);
      const rest = await c2.rest();
      expect(rest.length).toBeLessThan(896);
      expect((unpack(rest) as { Error: string }).Error).toMatch(/client#\d+ refused: lola:client#\d+ is the controlling client/);
    } finally {
      await c.close();
    }
    await eventually(async () => (await holder(app)) === null, "control freed by the hang-up", 5000);
    const api = await call(app, "POST", "/v1/control", { owner: "api" });
    expect(api.status).toBe(201);
    expect((await call(app, "DELETE", "/v1/control", undefined, api.body.lease_id as string)).status).toBe(200);
  });

  it("an e-stop over the API revokes the LoLA client's control; its commands are ignored until the reset and a reconnect", async () => {
    const { app } = await runtime("nao");
    const c = await TestLolaClient.connect(LOLA_PATH);
    try {
      await c.send(on);
      await eventually(async () => (await holder(app))?.startsWith("lola:") === true, "the LoLA client taking control");
      expect((await call(app, "POST", "/v1/estop", { reason: "lola contract" })).status).toBe(200);
      expect(await holder(app)).toBeNull();
      for (let i = 0; i < 5; i++) {
        await c.send(on);
        await c.frame();
      }
      expect(await holder(app)).toBeNull();
      expect((await call(app, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
    } finally {
      await c.close();
    }
    const c2 = await TestLolaClient.connect(LOLA_PATH);
    try {
      await eventually(async () => {
        await c2.send(on);
        return (await holder(app))?.startsWith("lola:") === true;
      }, "a new connection taking control after the reset");
    } finally {
      await c2.close();
    }
  });
});
