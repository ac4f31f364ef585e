/**
 * The SDK's per-body facets at run time, against the real API server on loopback for each body:
 * the right body's facet commands the robot; another body's facet (reachable only past the types,
 * e.g. from JavaScript) fails with one ApiError code before anything is sent; the deprecated flat
 * methods keep working. The typing itself is tested by test/api/sdk-facets.types.ts (npm run lint).
 */
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { BODY_KINDS } from "../../src/bodies/registry.js";
import { ApiError, type BodylinkClient, connect, FACETS, type FetchLike, type RobotClient } from "../../src/client/index.js";
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
    // The deprecated flat method: the same one error, no longer a 404 from the server.
    expect((await refused((c as unknown as { setLeds(g: unknown): Promise<unknown> }).setLeds({ chest: [1] }))).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
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
    // … while the deprecated flat NAO getters keep answering null on other bodies, as documented.
    expect((c as unknown as { getBatteryState(): unknown }).getBatteryState()).toBeNull();
    expect(sent.slice(before)).toEqual([]);
  });

  it("NAO: LEDs and joints through its facet; flat calls still work; the P7's fails", async () => {
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
    expect((await c.setSonar({ left: true, right: false })).applied.length).toBeGreaterThan(0); // deprecated flat
    expect(await c.nao.fetchBoards()).toBeInstanceOf(Array);
    expect((await refused(facet(c, "p7").moveJoints!([0, 0, 0, 0, 0, 0, 0]))).code).toBe("BL_ERR_CLIENT_NOT_THIS_BODY");
    // A command the server refuses is still the server's ApiError (the body check passed).
    await c.releaseControl();
    expect((await refused(c.nao.setLeds({ chest: [1, 0, 0] }))).code).toBe("BL_ERR_AUTH_REQUIRED");
  });

  it("TNY-360: gait and joints through its facet; the flat setJointTargets routes to it", async () => {
    const server = await serve(await simTny(new MonotonicClock()));
    const { c } = await counted(server.url);
    await new Promise((resolve) => c.once("message", resolve));
    if (c.body !== "tny360") throw new Error(`expected a tny360, got ${c.body}`);
    await c.acquireControl({ leaseMs: 2000 });
    expect(await c.tny360.setGait("Walk")).toEqual({ forwarded: false });
    expect(await c.setJointTargets({ positions: new Array(14).fill(0) })).toEqual({ forwarded: false });
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
