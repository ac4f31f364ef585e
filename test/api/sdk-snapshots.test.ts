/**
 * SDK snapshots, deterministic: a fake WebSocket delivers messages the real server code encoded
 * (StateStream.encode on a simulated NAO and P7), and the test owns the SDK's clock. Checks the
 * frozen-snapshot contract and every null rule: before the first state, after the link is lost,
 * on a length mismatch, when stale, after a disconnect.
 */
import { afterEach, describe, expect, it } from "vitest";
import { API_ORDER } from "../../src/bodies/nao/joints.js";
import { ApiError, type BodyClient, BodylinkClient, type WebSocketConstructor, type WebSocketEventLike, type WebSocketLike } from "../../src/client/index.js";
import { SimClock } from "../../src/runtime/clock.js";
import { adapterFor } from "../../src/serve/api/build.js";
import { StateStream } from "../../src/serve/api/stream.js";
import { simNao, simP7, simTny, step } from "./helpers.js";

type Listener = (ev: WebSocketEventLike) => void;

class FakeWs implements WebSocketLike {
  static all: FakeWs[] = [];
  readyState = 0;
  readonly #l: Record<string, Listener[]> = { open: [], close: [], error: [], message: [] };
  constructor(readonly url: string) {
    FakeWs.all.push(this);
  }
  addEventListener(type: "open" | "close" | "error" | "message", listener: (ev: object) => void): void {
    this.#l[type]!.push(listener);
  }
  close(code = 1000, reason = ""): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    for (const l of this.#l.close!) l({ code, reason });
  }
  // test side
  serverOpen(): void {
    this.readyState = 1;
    for (const l of this.#l.open!) l({});
  }
  send(msg: unknown): void {
    const data = typeof msg === "string" ? msg : JSON.stringify(msg);
    for (const l of this.#l.message!) l({ data });
  }
  drop(): void {
    this.close(1006, "gone");
  }
}

interface Rig {
  client: BodylinkClient;
  ws: FakeWs;
  clock: { t: number };
}

function hello(body: "nao" | "p7" | "tny360", names: readonly string[]) {
  return { type: "hello", body, api_version: 1, joint_names: names, rate_hz: 20, epoch_ms: 0 };
}

async function rig(body: "nao" | "p7" | "tny360" = "nao", expectBody?: "nao" | "p7"): Promise<Rig> {
  FakeWs.all = [];
  const clock = { t: 1000 };
  const client = new BodylinkClient("http://127.0.0.1:9", {
    WebSocket: FakeWs,
    now: () => clock.t,
    reconnect: false,
    ...(expectBody ? { expectBody } : {}),
  });
  const ws = FakeWs.all[0]!;
  expect(ws.url).toBe("ws://127.0.0.1:9/v1/stream");
  ws.serverOpen();
  const names = body === "nao" ? API_ORDER : body === "p7" ? ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7"] : TNY_NAMES;
  ws.send(hello(body, names));
  if (!expectBody || expectBody === body) await client.ready;
  return { client, ws, clock };
}

/** Real stream messages from simulated robots, as parsed JSON. */
async function naoMessages(count: number): Promise<Array<Record<string, unknown>>> {
  const clock = new SimClock();
  const robot = await simNao(clock);
  const stream = new StateStream(adapterFor(robot));
  const out = [];
  for (let i = 0; i < count; i++) {
    await step(robot, clock, 4);
    out.push(JSON.parse(stream.encode()!.toString()) as Record<string, unknown>);
  }
  stream.close();
  return out;
}

async function p7Message(): Promise<Record<string, unknown>> {
  const clock = new SimClock();
  const robot = await simP7(clock);
  const adapter = adapterFor(robot);
  const stream = new StateStream(adapter);
  await step(robot, clock, 5);
  const m = JSON.parse(stream.encode()!.toString()) as Record<string, unknown>;
  stream.close();
  adapter.close();
  return m;
}

const TNY_NAMES = Array.from({ length: 14 }, (_, i) => `j${i}`);

async function tnyMessage(): Promise<Record<string, unknown>> {
  const clock = new SimClock();
  const robot = await simTny(clock);
  const stream = new StateStream(adapterFor(robot));
  await step(robot, clock, 5);
  const m = JSON.parse(stream.encode()!.toString()) as Record<string, unknown>;
  stream.close();
  return m;
}

const clients: BodylinkClient[] = [];
/** The NAO facet of a client built without connect() (so typed for no body). */
const nao = (c: BodylinkClient) => (c as BodyClient<"nao">).nao;
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describe("SDK snapshots", () => {
  it("returns null before the first state, then deep-frozen snapshots carrying the source stamp", async () => {
    const { client, ws, clock } = await rig();
    clients.push(client);
    expect(client.body).toBe("nao");
    expect(client.jointNames).toEqual([...API_ORDER]);
    for (const g of [client.getJointState(), client.getMotorState(), client.getImuState(), client.getState(), client.getBodyState(), nao(client).getBatteryState()]) {
      expect(g).toBeNull();
    }
    const [m] = await naoMessages(1);
    clock.t = 2000;
    ws.send(m);
    const j = client.getJointState()!;
    expect(j).not.toBeNull();
    expect(j.seq).toBe(m!.seq);
    expect(j.timestampMs).toBe(m!.timestamp_ms);
    expect(j.epochMs).toBe(m!.epoch_ms);
    expect(j.angles).toEqual(m!.joint_positions);
    expect(j.efforts).toEqual(m!.joint_currents);
    expect(j.effortUnit).toBe("A");
    expect(j.names).toEqual([...API_ORDER]);
    for (const o of [j, j.angles, j.velocities, j.efforts, j.names]) expect(Object.isFrozen(o)).toBe(true);
    // ESM test files are strict mode: writing to a frozen snapshot throws.
    expect(() => {
      (j as { seq: number }).seq = 1;
    }).toThrow(TypeError);
    expect(() => {
      (j.angles as number[])[0] = 99;
    }).toThrow(TypeError);
    expect(() => (j.angles as number[]).push(1)).toThrow(TypeError);
    const motors = client.getMotorState()!;
    expect(motors.temperatures).toEqual(m!.joint_temperatures);
    expect(motors.errorIds).toEqual(m!.joint_status);
    const imu = client.getImuState()!;
    expect(imu.linearAcceleration).toEqual((m!.imu as { linear_acceleration: number[] }).linear_acceleration);
    expect(Object.isFrozen(imu.angularVelocity)).toBe(true);
    // getState: all three from the same cycle, and the body's own fields deep-frozen.
    const s = client.getState()!;
    expect(s.joints.seq).toBe(s.seq);
    expect(s.motors!.seq).toBe(s.seq);
    expect(s.imu.seq).toBe(s.seq);
    expect(Object.isFrozen(s)).toBe(true);
    const battery = (s.fields as { battery: { charge: number } }).battery;
    expect(Object.isFrozen(battery)).toBe(true);
    expect(() => {
      (battery as { charge: number }).charge = 0;
    }).toThrow(TypeError);
    // The same message gives the same snapshot object (built once).
    expect(client.getJointState()).toBe(j);
    // NAO getters.
    const b = nao(client).getBatteryState()!;
    const mb = m!.battery as { charge: number; current: number; temperature: number; charging: boolean };
    expect(b).toMatchObject({ charge: mb.charge, currentA: mb.current, temperatureLola: mb.temperature, charging: mb.charging });
    expect(nao(client).getSonarState()!.leftM).toBe((m!.sonar as number[])[0]);
    expect(nao(client).getFootState()!.leftPressureKg).toEqual(m!.left_foot_pressure);
    expect(nao(client).getTouchState()!.chestButton).toBe(false);
    expect(nao(client).getHeadState()!.voltageV).toBe((m!.head as { voltage: number }).voltage);
  });

  it("returns null when a length does not match the body, or a value is not a finite number", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m] = await naoMessages(1);
    const short = { ...m!, joint_positions: (m!.joint_positions as number[]).slice(0, 25) };
    ws.send(short);
    expect(client.getJointState()).toBeNull();
    expect(client.getState()).toBeNull();
    expect(client.getMotorState()).not.toBeNull(); // the other models are still fine
    expect(client.getImuState()).not.toBeNull();
    ws.send({ ...m!, joint_temperatures: [1, 2, 3] });
    expect(client.getMotorState()).toBeNull();
    ws.send({ ...m!, imu: { ...(m!.imu as object), angular_velocity: [0, null, 0] } });
    expect(client.getImuState()).toBeNull();
    ws.send({ ...m!, joint_status: [...(m!.joint_status as number[]).slice(1), -1] });
    expect(client.getMotorState()).toBeNull(); // error ids are non-negative integers
    ws.send({ ...m!, sonar: [1] });
    expect(nao(client).getSonarState()).toBeNull();
    ws.send(m);
    expect(client.getState()).not.toBeNull();
  });

  it("returns null while the body link is lost, and after the stream disconnects", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m1, m2] = await naoMessages(2);
    ws.send(m1);
    expect(client.getJointState()).not.toBeNull();
    ws.send({ ...m1!, link: "lost" });
    expect(client.getJointState()).toBeNull();
    expect(client.getState()).toBeNull();
    ws.send({ ...m2!, link: "degraded" });
    expect(client.getJointState()).not.toBeNull(); // degraded still delivers current data
    const events: string[] = [];
    client.on("disconnected", (e) => events.push(`disconnected ${e.code} reconnect=${e.willReconnect}`));
    ws.drop();
    expect(events).toEqual(["disconnected 1006 reconnect=false"]);
    expect(client.connected).toBe(false);
    expect(client.getJointState()).toBeNull();
  });

  it("returns null when the newest state is older than the staleness bound (default 250 ms)", async () => {
    const { client, ws, clock } = await rig();
    clients.push(client);
    const ms = await naoMessages(3);
    ws.send(ms[0]);
    clock.t += 249;
    expect(client.getJointState()).not.toBeNull();
    expect(client.ageMs()).toBe(249);
    clock.t += 2;
    expect(client.getJointState()).toBeNull();
    // A message delivered on time is current again ...
    const dt = (ms[1]!.timestamp_ms as number) - (ms[0]!.timestamp_ms as number);
    clock.t = 1000 + dt;
    ws.send(ms[1]);
    expect(client.ageMs()).toBe(0);
    expect(client.getJointState()!.seq).toBe(ms[1]!.seq);
    // ... but one that arrives 400 ms later than its source time allows is stale on arrival
    // (a backlog somewhere), whatever the two machines' wall clocks say.
    clock.t += 450;
    ws.send(ms[2]);
    expect(client.ageMs()).toBeGreaterThan(250);
    expect(client.getJointState()).toBeNull();
  });

  it("maps the P7's message to the same models (7 joints, efforts in N·m, raw error ids)", async () => {
    const { client, ws } = await rig("p7");
    clients.push(client);
    const m = await p7Message();
    ws.send(m);
    const j = client.getJointState()!;
    expect(j.angles).toEqual(m.joint_positions);
    expect(j.efforts).toEqual(m.joint_efforts);
    expect(j.effortUnit).toBe("N·m");
    expect(client.getMotorState()!.errorIds).toEqual(m.error_ids);
    const g = client.getImuState()!.linearAcceleration;
    expect(Math.hypot(...g)).toBeGreaterThan(9);
    expect(() => nao(client).getBatteryState()).toThrow(/is for a nao body/); // the NAO's facet, on a P7 [BL_ERR_CLIENT_NOT_THIS_BODY]
    ws.send({ ...m, joint_efforts: [1, 2, 3, 4, 5, 6] });
    expect(client.getJointState()).toBeNull();
  });

  it("maps the TNY-360's message: 14 joints, IMU; no motor model (its servos report no temperature or errors)", async () => {
    const { client, ws } = await rig("tny360");
    clients.push(client);
    const m = await tnyMessage();
    ws.send(m);
    const j = client.getJointState()!;
    expect(j.angles).toEqual(m.joint_positions);
    expect(j.angles).toHaveLength(14);
    expect(j.effortUnit).toBe("N·m");
    expect(client.getImuState()!.linearAcceleration).toEqual((m.imu as { linear_acceleration: number[] }).linear_acceleration);
    expect(client.getMotorState()).toBeNull();
    const st = client.getState()!; // complete without a motor model: this body has none
    expect(st.motors).toBeNull();
    expect(st.joints.seq).toBe(st.imu.seq);
    expect((client.getBodyState() as unknown as { locomotion: object }).locomotion).toBeDefined();
    // A real robot reports no efforts and no IMU rates (null): those models are null, nothing is invented.
    ws.send({ ...m, joint_efforts: new Array(14).fill(null), imu: { ...(m.imu as object), angular_velocity: [null, null, null] } });
    expect(client.getJointState()).toBeNull();
    expect(client.getImuState()).toBeNull();
    expect(client.getState()).toBeNull();
  });

  it("refuses a server of another body when expectBody is set", async () => {
    const { client } = await rig("p7", "nao");
    await expect(client.ready).rejects.toMatchObject({ code: "BL_ERR_CLIENT_WRONG_BODY" });
    expect(client.connected).toBe(false);
  });

  it("needs a WebSocket implementation and says how to pass one", () => {
    // Type level: the browser's WebSocket fits the option (ws's is used in sdk.test.ts).
    const browser: WebSocketConstructor | undefined = (globalThis as { WebSocket?: typeof globalThis.WebSocket }).WebSocket;
    void browser;
    const g = globalThis as { WebSocket?: unknown };
    if (g.WebSocket) return; // Node ≥ 22 has one
    expect(() => new BodylinkClient("http://127.0.0.1:9")).toThrow(/pass \{ WebSocket \}/);
    expect(() => new BodylinkClient("ftp://x", { WebSocket: FakeWs })).toThrow(/must start with http/);
  });
});

describe("NAO joints by name", () => {
  it("getJoints() reads each of the 26 names from one message; null when any of its columns does not fit", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m] = await naoMessages(1);
    ws.send(m);
    const j = nao(client).getJoints()!;
    expect(Object.isFrozen(j)).toBe(true);
    expect(j.seq).toBe(m!.seq);
    API_ORDER.forEach((name, i) => {
      expect(j[name]).toEqual({
        positionRad: (m!.joint_positions as number[])[i],
        velocityRadS: (m!.joint_velocities as number[])[i],
        currentA: (m!.joint_currents as number[])[i],
        temperatureC: (m!.joint_temperatures as number[])[i],
        stiffness: (m!.joint_stiffness as number[])[i],
        status: (m!.joint_status as number[])[i],
      });
    });
    expect(j.RHipYawPitch).toEqual(j.LHipYawPitch);
    for (const key of ["joint_positions", "joint_velocities", "joint_currents", "joint_temperatures", "joint_stiffness", "joint_status"]) {
      ws.send({ ...m!, [key]: (m![key] as number[]).slice(1) });
      expect(nao(client).getJoints(), key).toBeNull();
    }
  });
});

describe("waitForState / waitForMessage", () => {
  it("resolves the current complete state at once, else the next one; the same object getState() returns", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m1, m2] = await naoMessages(2);
    const pending = client.waitForState();
    expect(client.listenerCount("state")).toBe(1);
    ws.send(m1);
    const s1 = await pending;
    expect(s1).toBe(client.getState());
    expect(s1.seq).toBe(m1!.seq);
    expect(client.listenerCount("state")).toBe(0); // nothing left behind
    expect(await client.waitForState()).toBe(s1); // current: at once
    // A condition: the first state that satisfies it.
    const later = client.waitForState((s) => s.seq === m2!.seq);
    ws.send(m1);
    ws.send(m2);
    expect((await later).seq).toBe(m2!.seq);
  });

  it("skips incomplete states; waitForMessage takes any message (a real TNY-360's is never complete)", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m] = await naoMessages(1);
    const state = client.waitForState(undefined, { timeoutMs: 100 });
    const message = client.waitForMessage();
    ws.send({ ...m!, joint_positions: [1] });
    expect((await message).joint_positions).toEqual([1]);
    const e = await state.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ code: "BL_ERR_CLIENT_NO_STATE", status: 504 });
    expect((e as ApiError).message).toBe("no complete state from http://127.0.0.1:9 within 100 ms; is the body's link up? (GET /v1/health says)");
    const cond = await client.waitForMessage(() => false, { timeoutMs: 10 }).catch((x: unknown) => x);
    expect((cond as ApiError).message).toMatch(/^no state message matching the condition from /);
  });

  it("ends on close (BL_ERR_CLIENT_CLOSED), on the caller's abort, and on a condition that throws; no listener stays", async () => {
    const { client, ws } = await rig();
    clients.push(client);
    const [m] = await naoMessages(1);
    const ac = new AbortController();
    const aborted = client.waitForState(undefined, { signal: ac.signal });
    ac.abort(new Error("user gave up"));
    await expect(aborted).rejects.toThrow("user gave up");
    const throwing = client.waitForState(() => {
      throw new Error("bad condition");
    });
    ws.send(m);
    await expect(throwing).rejects.toThrow("bad condition");
    const waiting = client.waitForState(() => false);
    const closed = client.close();
    await expect(waiting).rejects.toMatchObject({ code: "BL_ERR_CLIENT_CLOSED" });
    await closed;
    expect(client.listenerCount("state")).toBe(0);
    await expect(client.waitForState()).rejects.toMatchObject({ code: "BL_ERR_CLIENT_CLOSED" });
  });
});
