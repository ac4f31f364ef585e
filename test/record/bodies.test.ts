/**
 * Recordings of the AIRBOT P7 and the TNY-360, their core in its worker (the core records into its
 * own ring): `serve --record` as the CLI builds it (startRuntime), driven through the robot API like
 * a client, read back with @mcap/core's indexed reader: the channels and schemas, one state message
 * per cycle with that cycle's values (what the API served for that seq), and the events.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { McapIndexedReader } from "@mcap/core";
import { describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";
import { viewerJson } from "../../src/record/viewer-schema.js";
import { checkMcapFileStrict, loadStrictZstd } from "../support/mcap-strict.js";
import { P7Host } from "../../src/host/p7-host.js";
import WebSocket from "ws";
import { TnyClient } from "../../src/client/tny/index.js";
import { actionSpec } from "../../src/wire/tny/constants.js";
import { decodeFrame } from "../../src/wire/tny/decode.js";
import { ReplayDriver } from "../../src/replay/driver.js";
import { verifyRecording } from "../../src/verify/verify.js";
import { DECOMPRESS_HANDLERS, FileReadable, loadZstd } from "../../src/record/mcap-io.js";

// the recordings and the runtime records of this file
const dir = useRuntimeDir("bl-rec-bodies-");

type Json = Record<string, unknown>;
type Body = "p7" | "tny360";

async function eventually(ok: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function call(rt: RunningRuntime, method: string, path: string, body?: unknown, lease?: string): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (lease) headers["x-bodylink-lease"] = lease;
  const r = await fetch(`${rt.record.apiUrl}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: r.status, body: (await r.json()) as Json };
}

/** What one recorded run gives the checks. */
interface Run {
  file: string;
  /** GET /v1/state answers taken while recording (the API's values for their seq). */
  served: Json[];
  /** Health's cycle count while recording, and at the end. */
  cyclesSeen: number;
  lines: string[];
}

/** A command per body that changes what the state carries (the arm moves; the quadruped's targets change). */
const COMMAND: Record<Body, { path: string; body: Json }> = {
  p7: { path: "/v1/commands/move-joints", body: { positions: [0.3, -0.2, 0, -0.4, 0, 0.1, 0], speed: 1 } },
  tny360: { path: "/v1/commands/velocity", body: { x: 0.05, y: 0, yaw: 0.1 } },
};

const ping = actionSpec("system", "ping");
const voltage = actionSpec("power", "getVoltage");
const SERVO = [0.25, -0.15, 0.05, -0.35, 0.02, 0.12, -0.01];

async function record(body: Body): Promise<Run> {
  const file = join(dir, `${body}.mcap`);
  // The fault hooks (a P7's link loss) for this core only.
  process.env.BODYLINK_TEST_HOOKS = "1";
  process.env.BODYLINK_TEST_FAULTS = "1";
  const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body, record: file, seed: 3 }).finally(() => {
    delete process.env.BODYLINK_TEST_HOOKS;
    delete process.env.BODYLINK_TEST_FAULTS;
  });
  const served: Json[] = [];
  let cyclesSeen = 0;
  try {
    expect(rt.host).not.toBeNull();
    await eventually(async () => (await call(rt, "GET", "/v1/state")).status === 200, "a state");
    const lease = (await call(rt, "POST", "/v1/control", { owner: "rec-test" })).body.lease_id as string;
    expect(typeof lease).toBe("string");
    expect((await call(rt, "POST", COMMAND[body].path, COMMAND[body].body, lease)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 60));
      served.push((await call(rt, "GET", "/v1/state")).body);
    }
    if (body === "p7") {
      const servo = await call(rt, "POST", "/v1/commands/servo-joints", { positions: SERVO }, lease);
      expect(servo.status, JSON.stringify(servo.body)).toBe(200);
      expect((await call(rt, "POST", "/v1/commands/move-joints", { positions: [0, 0, 0, 0, 0, 0, 0.9] }, "not-the-lease")).status).toBe(403); // refused: not recorded
      expect((await call(rt, "POST", "/v1/commands/clear-error", { joint: 2 }, lease)).status).toBe(200);
    }
    expect((await call(rt, "POST", "/v1/estop", { reason: "recorded e-stop" })).status).toBe(200);
    expect((await call(rt, "POST", "/v1/estop/reset", { reason: "done" })).status).toBe(200);
    if (body === "tny360") {
      // A TNY-360 API client (the server runs in the core's thread).
      const client = await TnyClient.connect(rt.record.tnyUrl!, { WebSocket });
      try {
        await client.system.ping();
        expect(typeof (await client.power.getVoltage())).toBe("number");
      } finally {
        client.close();
      }
    }
    if (rt.host instanceof P7Host) {
      // The arm's link drops and comes back (the simulator's hook, in the core's thread).
      const p7 = rt.host;
      expect(await p7.testLinkLoss(true)).toBe(true);
      const at = p7.cycles;
      await eventually(() => p7.cycles > at + 5, "cycles without the arm");
      await p7.testLinkLoss(false);
      await eventually(() => p7.link === "ok", "the link back");
    }
    await eventually(async () => ((await call(rt, "GET", "/v1/health")).body.cycle as { cycles: number }).cycles > 150, "150 cycles");
    cyclesSeen = ((await call(rt, "GET", "/v1/health")).body.cycle as { cycles: number }).cycles;
  } finally {
    await rt.close("test over");
  }
  return { file, served, cyclesSeen, lines: rt.lines };
}

interface Read {
  topics: Map<string, { encoding: string; schemaName: string; schema: string }>;
  counts: Map<string, number>;
  states: Json[];
  events: Json[];
  commands: Json[];
  /** Raw channels' messages (the TNY-360 API server's frames), with the connection in the order they came. */
  raw: Map<string, Uint8Array[]>;
  logTimes: Map<string, bigint[]>;
}

async function read(file: string, body: Body): Promise<Read> {
  await loadZstd();
  const readable = await FileReadable.open(file);
  try {
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: DECOMPRESS_HANDLERS });
    const topics = new Map<string, { encoding: string; schemaName: string; schema: string }>();
    const counts = new Map<string, number>();
    for (const c of reader.channelsById.values()) {
      const s = reader.schemasById.get(c.schemaId);
      topics.set(c.topic, { encoding: c.messageEncoding, schemaName: s?.name ?? "", schema: s ? new TextDecoder().decode(s.data) : "" });
      counts.set(c.topic, Number(reader.statistics?.channelMessageCounts.get(c.id) ?? 0n));
    }
    const states: Json[] = [];
    const events: Json[] = [];
    const commands: Json[] = [];
    const raw = new Map<string, Uint8Array[]>();
    const logTimes = new Map<string, bigint[]>();
    for await (const m of reader.readMessages({ validateCrcs: true })) {
      const topic = reader.channelsById.get(m.channelId)!.topic;
      const times = logTimes.get(topic) ?? [];
      times.push(m.logTime);
      logTimes.set(topic, times);
      if (reader.channelsById.get(m.channelId)!.messageEncoding !== "json") {
        raw.set(topic, [...(raw.get(topic) ?? []), m.data]);
        continue;
      }
      const j = JSON.parse(new TextDecoder().decode(m.data)) as Json;
      if (topic === `/${body}/state`) states.push(j);
      if (topic === "/events") events.push(j);
      if (topic === `/${body}/command`) commands.push(j);
    }
    return { topics, counts, states, events, commands, raw, logTimes };
  } finally {
    await readable.close();
  }
}

/** The API's state fields (without the envelope the stream and REST add). */
function fields(m: Json): Json {
  const { type: _t, body: _b, seq: _s, timestamp_ms: _ts, epoch_ms: _e, link: _l, cycle: _c, valid: _v, ...rest } = m;
  return rest;
}

const files = new Map<string, { run: Run; got: Read }>();

describe.each(["p7", "tny360"] as const)("serve --body %s --record", (body) => {
  it("one state message per cycle with the API's values, the events, monotonic times", async () => {
    const run = await record(body);
    const got = await read(run.file, body);
    files.set(body, { run, got });
    // Driven (commands, an e-stop, a TNY-360 client, a lost link): strict MCAP, in log-time order.
    await loadStrictZstd();
    expect(checkMcapFileStrict(run.file, { requireLogTimeOrder: true }).problems).toEqual([]);
    expect(run.lines.join("\n")).toMatch(/real-time core in its own thread/);
    expect([...got.topics.keys()].sort()).toEqual(
      ["/api/state", "/events", "/log", `/${body}/state`, `/${body}/tf`, `/${body}/scene`, ...(body === "p7" ? ["/p7/command"] : ["/tny360/api/reply", "/tny360/api/request"])].sort(),
    );
    const st = got.topics.get(`/${body}/state`)!;
    expect(st.encoding).toBe("json");
    expect(st.schemaName).toBe(body === "p7" ? "bodylink.P7State" : "bodylink.Tny360State");
    const schema = JSON.parse(st.schema) as { properties: Record<string, unknown> };
    for (const k of ["seq", "cycle", "valid", "link", "joint_positions"]) expect(Object.keys(schema.properties)).toContain(k);

    // One message per cycle: consecutive cycle numbers, none lost, at least as many as health counted while recording.
    const cycles = got.states.map((s) => s.cycle as number);
    expect(got.counts.get(`/${body}/state`)).toBe(got.states.length);
    expect(got.states.length).toBeGreaterThanOrEqual(run.cyclesSeen - cycles[0]! + 1);
    for (let i = 1; i < cycles.length; i++) expect(cycles[i]).toBe(cycles[i - 1]! + 1);
    expect(cycles[cycles.length - 1]).toBeGreaterThanOrEqual(run.cyclesSeen);
    for (const s of got.states) expect(s).toMatchObject({ type: "state", body });

    // Log times never go back, on any channel.
    for (const [topic, times] of got.logTimes) {
      for (let i = 1; i < times.length; i++) expect(times[i]! >= times[i - 1]!, `${topic} log time ${i}`).toBe(true);
    }

    // The values the API served for a seq are the recorded ones of that seq's cycle (in the
    // viewers' form: a null of the API, e.g. the TNY-360's temperatures, is left out).
    for (const s of run.served) {
      const rec = got.states.find((m) => m.seq === s.seq && m.valid === true);
      expect(rec, `a recorded state for seq ${String(s.seq)}`).toBeDefined();
      expect(fields(rec!)).toEqual(fields(JSON.parse(viewerJson(s, true)) as Json));
      expect(rec!.epoch_ms).toBe(s.epoch_ms);
    }
    // The command reached the body: later states carry it.
    const last = got.states[got.states.length - 1]!;
    if (body === "p7") {
      expect((last.joint_positions as number[])[0]).toBeGreaterThan(0.01);
      // Every command the arm took, with the values it applied, in order; the refused one is not there.
      expect(got.commands.map((c) => c.command)).toEqual(["move_joints", "servo_joints", "clear_error"]);
      expect(got.commands[0]).toMatchObject({ positions: COMMAND.p7.body.positions, speed_rad_s: [1, 1, 1, 1, 1, 1, 1] });
      expect(got.commands[1]!.positions).toEqual(SERVO);
      expect(got.commands[2]).toMatchObject({ command: "clear_error", joint: 2 });
      const cs = got.commands.map((c) => c.cycle as number);
      expect(cs[0]! <= cs[1]! && cs[1]! <= cs[2]!).toBe(true);
      expect(cs[0]).toBeGreaterThanOrEqual(cycles[0]!);
    } else expect(got.states.some((m) => ((m.locomotion as Json).target_velocity as Json).x === 0.05)).toBe(true);

    if (body === "tny360") {
      // The API server's frames as on the wire: the client's two requests, each answered (same msg_id).
      const requests = (got.raw.get("/tny360/api/request") ?? []).map(decodeFrame);
      const replies = (got.raw.get("/tny360/api/reply") ?? []).map(decodeFrame);
      expect(requests.map((r) => `${(r as { module: number }).module}.${(r as { action: number }).action}`)).toEqual([ping, voltage].map((a) => `${a.module.code}.${a.action.code}`));
      expect(replies.map((r) => r.msgId).sort()).toEqual(requests.map((r) => r.msgId).sort());
    }
    const types = got.events.map((e) => e.type);
    for (const t of ["recording_started", "lease_acquired", "estop", "estop_reset", "recording_stopped"]) expect(types).toContain(t);
    expect(JSON.stringify(got.events.find((e) => e.type === "estop"))).toMatch(/recorded e-stop/);
    if (body === "p7") {
      // A link change is an event at the cycle that showed it; those cycles' states say they are not valid.
      const links = got.events.filter((e) => e.type === "link");
      expect(links.map((e) => `${String(e.from)}>${String(e.to)}`)).toEqual(["ok>lost", "lost>ok"]);
      const lost = got.states.filter((m) => m.link === "lost");
      expect(lost.length).toBeGreaterThanOrEqual(5);
      expect(lost.every((m) => m.valid === false)).toBe(true);
      expect(lost[0]!.cycle).toBe(links[0]!.seq);
    }
  }, 90_000);

  it("verify and replay refuse it in one line naming the body (they read NAO chest-board frames)", async () => {
    const f = files.get(body)!.run.file;
    await expect(verifyRecording(f)).rejects.toThrow(new RegExp(`records a ${body} \\(metadata body=${body}\\): verify works on NAO recordings`));
    await expect(ReplayDriver.load(f)).rejects.toThrow(new RegExp(`records a ${body} .*: replay works on NAO recordings`));
  });
});

describe("bodylink record --body tny360 (the CLI, its default threaded core)", () => {
  it("records from the core's worker, the TNY-360 API server in it too, and finishes the file after --duration", async () => {
    const file = join(dir, "cli-tny.mcap");
    const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt-cli") };
    const out = await promisify(execFile)(process.execPath, ["bin/bodylink.js", "record", file, "--body", "tny360", "--duration", "1", "--api-port", "0", "--tny-port", "0"], { env, timeout: 60_000 });
    expect(out.stdout).toMatch(/real-time core in its own thread/);
    expect(out.stdout).toMatch(/TNY-360 API: .*in the real-time core's thread/);
    expect(out.stdout).toMatch(/recorded [\d,]+ messages/);
    const got = await read(file, "tny360");
    expect([...got.topics.keys()].sort()).toEqual(["/api/state", "/events", "/log", "/tny360/api/reply", "/tny360/api/request", "/tny360/scene", "/tny360/state", "/tny360/tf"]);
    const cycles = got.states.map((m) => m.cycle as number);
    expect(cycles.length).toBeGreaterThan(20);
    for (let i = 1; i < cycles.length; i++) expect(cycles[i]).toBe(cycles[i - 1]! + 1);
  }, 90_000);
});
