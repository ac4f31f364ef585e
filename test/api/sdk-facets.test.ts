/**
 * The SDK's per-body facets at run time, against the real API server on loopback for each body:
 * the right body's facet commands the robot; another body's facet (reachable only past the types,
 * e.g. from JavaScript) fails with one ApiError code before anything is sent. The typing itself is tested by test/api/sdk-facets.types.ts (npm run lint).
 */
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { BODY_KINDS } from "../../src/bodies/registry.js";
import {
  ApiError,
  type BodyClient,
  type BodylinkClient,
  connect,
  FACETS,
  type FetchLike,
  NAO_JOINT_NAMES,
  type NaoJoints,
  type NaoJointTargets,
  type RobotClient,
  type RobotState,
} from "../../src/client/index.js";
import { MonotonicClock } from "../../src/runtime/clock.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { type AnyRobot, simNao, simP7, simTny } from "./helpers.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function serve(robot: AnyRobot, port = 0): Promise<RunningApiServer> {
  await robot.start();
  const server = await startApiServer(robot, { port });
  cleanup.push(async () => {
    await server.close();
    await robot.stop();
  });
  return server;
}

/** A client whose every REST request is counted (to show a refused call sent nothing). */
async function counted(url: string): Promise<{ c: RobotClient; sent: string[] }> {
  const sent: string[] = [];
  const f: FetchLike = (u, init) => {
    sent.push(`${init.method} ${u.replace(url, "")}`);
    return fetch(u, init);
  };
  const c = await connect(url, { WebSocket, fetch: f });
  cleanup.push(() => c.close());
  return { c, sent };
}

const firstState = (c: BodylinkClient) => new Promise((resolve) => c.once("state", resolve));

/** Reach a facet the types hide (as JavaScript would). */
const facet = (c: BodylinkClient, kind: string) => (c as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[kind]!;

async function refused(p: unknown): Promise<ApiError> {
  const e = await Promise.resolve(p).then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

describe("per-body facets chosen by the server's hello", () => {
  it("every registry body has a facet, reachable as client[body], that names its body", async () => {
    expect(Object.keys(FACETS)).toEqual(BODY_KINDS);
    const server = await serve(await simP7(new MonotonicClock()));
    const { c } = await counted(server.url);
    for (const kind of BODY_KINDS) {
      expect(facet(c, kind)).toBeInstanceOf(FACETS[kind]);
      expect((facet(c, kind) as unknown as { kind: string }).kind).toBe(kind);
      expect(facet(c, kind)).toBe(facet(c, kind)); // built once
    }
  });

  it("P7: its facet moves the arm; the NAO's fails with BL_ERR_CLIENT_NOT_THIS_BODY and sends nothing", async () => {
    const server = await serve(await simP7(new MonotonicClock()));
    const { c, sent } = await counted(server.url);
    await firstState(c);
    expect(c.body).toBe("p7");
    if (c.body !== "p7") return;
    await c.acquireControl({ leaseMs: 2000 });
    const { etaS } = await c.p7.moveJoints([0.1, 0, 0, 0, 0, 0, 0], { speedRadS: 1 });
    expect(etaS).toBeGreaterThan(0);
    // Read inside a state event: the state is current there (a loaded machine may stale it later).
    expect(await new Promise((resolve) => c.once("state", () => resolve(c.p7.getBodyState()?.body)))).toBe("p7");
    const before = sent.length;

    const e = await refused(facet(c, "nao").setLeds!({ chest: [1, 0, 0] }));
    expect(e.code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    expect(e.status).toBe(409);
    expect(e.message).toBe(`nao.setLeds() is for a nao body; the server at ${server.url} serves a p7 body (narrow on client.body, or connect with expectBody)`);
    expect((await refused(facet(c, "tny360").setGait!("Walk"))).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    // A reading of another body throws the same error synchronously (it is not a promise) …
    let thrown: unknown = null;
    try {
      facet(c, "nao").getBatteryState!();
    } catch (x) {
      thrown = x;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    expect(sent.slice(before)).toEqual([]);
    // The flat body methods the client had before 0.1.0 are gone, at run time too (docs/api.md).
    const flat = [
      "getBatteryState",
      "getTouchState",
      "getFootState",
      "getSonarState",
      "getHeadState",
      "fetchPreferences",
      "fetchBoards",
      "setJointTargets",
      "setLeds",
      "setSonar",
      "smoothEnable",
      "smoothDisable",
      "moveJoints",
      "servoJoints",
      "clearError",
      "setVelocity",
      "setPosture",
      "setEnabledMask",
      "setGait",
      "setJointTarget",
      "setLegPosition",
    ];
    expect(flat.filter((m) => m in c)).toEqual([]);
  });

  it("NAO: LEDs, joints and sonar through its facet; the P7's fails", async () => {
    const server = await serve(await simNao(new MonotonicClock()));
    const { c } = await counted(server.url);
    if (c.body !== "nao") throw new Error(`expected a nao, got ${c.body}`);
    const nao = c.nao;
    const read = await new Promise<[number | undefined, boolean, number | undefined]>((resolve) =>
      c.once("state", () => resolve([nao.getBatteryState()?.charge, nao.getTouchState() !== null, nao.getBodyState()?.joint_positions.length])),
    );
    expect(read[0]).toBeGreaterThan(0);
    expect(read[1]).toBe(true);
    expect(read[2]).toBe(26);
    await c.acquireControl({ leaseMs: 2000 });
    expect((await c.nao.setLeds({ chest: [1, 0, 0] })).applied).toEqual(["chest"]);
    expect((await c.nao.setJointTargets({ stiffness: new Array(26).fill(0.2) })).applied).toEqual(["stiffness"]);
    expect((await c.nao.setSonar({ left: true, right: false })).applied.length).toBeGreaterThan(0);
    expect(await c.nao.fetchBoards()).toBeInstanceOf(Array);
    expect((await refused(facet(c, "p7").moveJoints!([0, 0, 0, 0, 0, 0, 0]))).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    // A command the server refuses is still the server's ApiError (the body check passed).
    await c.releaseControl();
    expect((await refused(c.nao.setLeds({ chest: [1, 0, 0] }))).code).toBe("BL_ERR_AUTH_REQUIRED");
  });

  it("TNY-360: gait and joints through its facet", async () => {
    const server = await serve(await simTny(new MonotonicClock()));
    const { c } = await counted(server.url);
    await new Promise((resolve) => c.once("message", resolve));
    if (c.body !== "tny360") throw new Error(`expected a tny360, got ${c.body}`);
    await c.acquireControl({ leaseMs: 2000 });
    expect(await c.tny360.setGait("Walk")).toEqual({ forwarded: false });
    expect(await c.tny360.setJointTargets({ positions: new Array(14).fill(0) })).toEqual({ forwarded: false });
    expect((await refused(c.tny360.setJointTargets({ positions: [9] }))).status).toBe(400); // the server's check
    expect((await refused(facet(c, "nao").setSonar!({ left: true, right: true }))).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
  });

  it("before the first hello every facet refuses, naming no body", async () => {
    const { BodylinkClient: Client } = await import("../../src/client/index.js");
    const c = new Client("http://127.0.0.1:1", { WebSocket, reconnect: false, connectTimeoutMs: 200 });
    cleanup.push(() => c.close());
    const e = await refused(facet(c, "p7").clearError!());
    expect(e.code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    expect(e.message).toMatch(/serves no body yet \(not connected\)/);
  });

  it("a client stays with its first body: a reconnect that finds another body is refused", async () => {
    const nao = await serve(await simNao(new MonotonicClock()));
    const c = await connect(nao.url, { WebSocket, reconnect: { initialDelayMs: 50, maxDelayMs: 100 } });
    cleanup.push(() => c.close());
    const errors: unknown[] = [];
    c.on("error", (e) => errors.push(e));
    const down = new Promise((resolve) => c.once("disconnected", resolve));
    const port = nao.port;
    await cleanup.shift()!(); // the NAO's server and robot stop
    await down;
    const wrong = new Promise((resolve) => c.on("error", (e) => (e as ApiError).code === "BL_ERR_CLIENT_WRONG_BODY" && resolve(e)));
    await serve(await simP7(new MonotonicClock()), port); // a P7 takes the port over
    const e = (await wrong) as ApiError;
    expect(e.message).toContain("serves a p7 body, not nao");
    expect(c.body).toBe("nao");
    expect(c.connected).toBe(false);
  });
});

describe("NAO joints by name (client.nao.getJoints, setJointTargets with names)", () => {
  /** A NAO client whose joint commands are recorded as sent (the JSON body of each POST /v1/commands/joints). */
  async function naoClient(): Promise<{ c: BodyClient<"nao">; bodies: Array<{ positions?: number[]; stiffness?: number[] }> }> {
    const server = await serve(await simNao(new MonotonicClock()));
    const bodies: Array<{ positions?: number[]; stiffness?: number[] }> = [];
    const f: FetchLike = (u, init) => {
      if (u.endsWith("/v1/commands/joints") && init.body) bodies.push(JSON.parse(init.body) as { positions?: number[]; stiffness?: number[] });
      return fetch(u, init);
    };
    const c = await connect(server.url, { WebSocket, fetch: f, expectBody: "nao" });
    cleanup.push(() => c.close());
    return { c, bodies };
  }

  it("reads every joint by name; both HipYawPitch names read LoLA's one motor (its slot 7)", async () => {
    const { c } = await naoClient();
    // Read inside the state's own turn: it is current there (a loaded machine may stale it later).
    const [state, joints] = await new Promise<[RobotState, NaoJoints | null]>((resolve) => c.once("state", (s) => resolve([s, c.nao.getJoints()])));
    expect(joints).not.toBeNull();
    const j = joints!;
    expect(Object.isFrozen(j) && Object.isFrozen(j.HeadYaw)).toBe(true);
    expect(j.seq).toBe(state.seq);
    expect(NAO_JOINT_NAMES).toHaveLength(26);
    NAO_JOINT_NAMES.forEach((name, i) => {
      expect(j[name].positionRad, name).toBe(state.joints.angles[i]);
      expect(j[name].currentA, name).toBe(state.joints.efforts[i]);
    });
    expect(j.RHipYawPitch).toEqual(j.LHipYawPitch);
    expect(j.RHipYawPitch.positionRad).toBe(state.joints.angles[NAO_JOINT_NAMES.indexOf("LHipYawPitch")]);
  });

  it("a command by name: unnamed joints hold (measured at first, then this client's last targets); one HipYawPitch name sets the motor", async () => {
    const { c, bodies } = await naoClient();
    const first = await c.waitForState();
    await c.acquireControl({ leaseMs: 2000 });
    const r = await c.nao.setJointTargets({ positions: { HeadYaw: 0.5 }, stiffness: { HeadYaw: 0.8 } });
    expect(r.applied).toEqual(["positions", "stiffness"]);
    const [b1] = bodies;
    expect(b1!.positions![0]).toBe(0.5);
    expect(b1!.positions).toHaveLength(26);
    // A new holder's stiffness is 0 until it commands: the unnamed joints stay limp.
    expect(b1!.stiffness).toEqual(NAO_JOINT_NAMES.map((n) => (n === "HeadYaw" ? 0.8 : 0)));
    // With no stiffness sent, the legs did not move: the unnamed positions are the measured ones.
    for (const i of [10, 11, 16, 17]) expect(Math.abs(b1!.positions![i]! - first.joints.angles[i]!)).toBeLessThan(0.01);
    // The next command by name starts from what this client sent, not from a new measurement.
    await c.nao.setJointTargets({ positions: { HeadPitch: 0.1, RHipYawPitch: -0.2 } });
    const b2 = bodies[1]!;
    expect(b2.stiffness).toBeUndefined();
    expect(b2.positions![0]).toBe(0.5);
    expect(b2.positions![1]).toBe(0.1);
    expect(b2.positions!.filter((_, i) => i > 1 && NAO_JOINT_NAMES[i] !== "LHipYawPitch" && NAO_JOINT_NAMES[i] !== "RHipYawPitch")).toEqual(
      b1!.positions!.filter((_, i) => i > 1 && NAO_JOINT_NAMES[i] !== "LHipYawPitch" && NAO_JOINT_NAMES[i] !== "RHipYawPitch"),
    );
    // RHipYawPitch alone sets both names (the runtime reads LHipYawPitch's): no note, and it reaches the motor.
    expect([b2.positions![NAO_JOINT_NAMES.indexOf("LHipYawPitch")], b2.positions![NAO_JOINT_NAMES.indexOf("RHipYawPitch")]]).toEqual([-0.2, -0.2]);
    // Both, differing: LHipYawPitch's is used and the answer says so, as for an array.
    const both = await c.nao.setJointTargets({ positions: { LHipYawPitch: -0.1, RHipYawPitch: -0.3 } });
    expect(both.notes.join(" ")).toMatch(/LHipYawPitch's value was used/);
    // An array still works as before (26 values, API order).
    expect((await c.nao.setJointTargets({ positions: b2.positions! })).applied).toEqual(["positions"]);
  });

  it("an unknown joint name is refused before anything is sent; by name without a current state is BL_ERR_STATE_NONE", async () => {
    const { c, bodies } = await naoClient();
    await c.acquireControl({ leaseMs: 2000 });
    const e = await refused(c.nao.setJointTargets({ positions: { Tail: 1 } as unknown as NaoJointTargets["positions"] }));
    expect(e.code).toBe("BL_ERR_CMD_INVALID");
    expect(e.message).toMatch(/no NAO joint "Tail"/);
    await c.close();
    expect((await refused(c.nao.setJointTargets({ positions: { HeadYaw: 0 } }))).code).toBe("BL_ERR_STATE_NONE");
    expect(bodies).toEqual([]);
  });
});

describe("the facet type test cannot silently go away", () => {
  it("test/api/sdk-facets.types.ts is type-checked by npm run lint and keeps its expectations", () => {
    const tsconfig = JSON.parse(readFileSync("tsconfig.json", "utf8")) as { include: string[] };
    expect(tsconfig.include).toContain("test");
    expect(JSON.parse(readFileSync("package.json", "utf8")).scripts.lint).toMatch(/tsc --noEmit -p tsconfig\.json/);
    const src = readFileSync("test/api/sdk-facets.types.ts", "utf8");
    const expectations = src.match(/\/\/ @ts-expect-error /g) ?? [];
    expect(expectations.length).toBeGreaterThanOrEqual(15);
    // setLeds on a P7 client: the issue's own example.
    expect(src).toMatch(/@ts-expect-error setLeds on a P7 client[^\n]*\n\s*await c\.setLeds/);
  });
});
