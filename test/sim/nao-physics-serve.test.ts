/**
 * Issue 21, "Done means", end to end: `serve --sim physics --lockstep` with a LoLA client over the
 * real socket. The client stands the robot up from the crouch it starts in (a 2 s ramp of the zero
 * posture at stiffness 1, as any client would) and holds it 30 s; the robot stands, on its FSRs;
 * a category-0 stop drops it within 3 s, a category-1 stop crouches it. Lockstep makes this
 * simulated time (one cycle per answer), so the machine's load changes only how long it takes.
 * Two runs of the same client record byte-identical LoLA messages.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unpack } from "msgpackr";
import { afterEach, describe, expect, it } from "vitest";
import { computeFeet, FSR_POSITIONS_M } from "../../src/bodies/nao/feet.js";
import { NAO_TOTAL_MASS_KG } from "../../src/bodies/nao/masses.js";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";
import type { NaoBodyModel } from "../../src/sim/nao/model.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { TestLolaClient, tmpSocketPath } from "../lola/client.js";
import { messagesByTopic } from "../record/helpers.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { LOLA_SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

useRuntimeDir("bl-physics-");
const STAND_HEIGHT_M = 0.33309;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const lolaPaths = new WeakMap<RunningRuntime, string>();
const lolaPath = (rt: RunningRuntime): string => lolaPaths.get(rt)!;

async function serve(record?: string): Promise<{ rt: RunningRuntime; model: NaoBodyModel; lolaPath: string }> {
  const lolaPath = tmpSocketPath();
  const rt = await startRuntime({ ...LOLA_SIM_RUNTIME_OPTIONS, body: "nao", sim: "physics", lockstep: true, lolaPath, seed: 1, gcEveryMs: 0, ...(record ? { record } : {}) });
  cleanups.push(() => rt.close());
  lolaPaths.set(rt, lolaPath);
  const model = (rt.inThreadRobot as NaoRobot).sim!.body.model;
  expect(model.kind).toBe("physics");
  return { rt, model, lolaPath };
}

interface SensorFrame {
  Position: number[];
  FSR: number[];
  Accelerometer: number[];
}

/**
 * A scripted LoLA client: answers every sensor message; the first `rampCycles` go from the
 * measured posture to zero (smoothstep), then zero, all at stiffness 1. `onFrame` sees each frame.
 */
async function drive(lolaPath: string, cycles: number, onFrame?: (i: number, f: SensorFrame) => void, rampCycles = 167): Promise<TestLolaClient> {
  const c = await TestLolaClient.connect(lolaPath);
  cleanups.push(() => c.close());
  const w = new LolaCommandWriter();
  const stiffness = new Float32Array(25).fill(1);
  const position = new Float32Array(25);
  let from: number[] | null = null;
  for (let i = 0; i < cycles; i++) {
    const f = unpack(await c.readExact(896, 20_000)) as SensorFrame;
    from ??= f.Position.slice();
    const u = Math.min(1, i / rampCycles);
    const e = u * u * (3 - 2 * u);
    for (let j = 0; j < 25; j++) position[j] = from[j]! * (1 - e);
    onFrame?.(i, f);
    await c.send(w.setFloats("Position", position).setFloats("Stiffness", stiffness).bytes);
  }
  return c;
}

/** Whether (x, y) lies inside the convex quadrilateral of a foot's FSRs (FL, FR, RR, RL around it). */
function insideFsrPolygon(pos: readonly (readonly [number, number])[], x: number, y: number): boolean {
  const ring = [pos[0]!, pos[1]!, pos[3]!, pos[2]!];
  let sign = 0;
  for (let i = 0; i < 4; i++) {
    const [ax, ay] = ring[i]!;
    const [bx, by] = ring[(i + 1) % 4]!;
    const cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
    if (cross !== 0) {
      if (sign !== 0 && Math.sign(cross) !== sign) return false;
      sign = Math.sign(cross);
    }
  }
  return true;
}

const estop = (rt: RunningRuntime, category: 0 | 1) =>
  fetch(`${rt.record.apiUrl}/v1/estop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ category, reason: "physics test" }) });

describe("serve --sim physics --lockstep with a LoLA client", () => {
  it("stands 30 s in the zero posture at stiffness 1 (height, FSR weight, CoP); a category-0 stop drops it within 3 s", async () => {
    const { rt, model, lolaPath } = await serve();
    expect(rt.lines.join("\n")).toMatch(/lockstep/);
    expect(model.basePositionM[2]).toBeLessThan(0.25); // it starts crouched
    let last: SensorFrame | null = null;
    const standCycles = 167 + 2500; // 2 s up, 30 s holding
    const c = await drive(lolaPath, standCycles, (_i, f) => {
      last = f;
    });
    const t = model.timeS;
    expect(t).toBeGreaterThan(32);
    expect(model.fallen).toBe(false);
    expect(Math.abs(model.basePositionM[2]! - STAND_HEIGHT_M)).toBeLessThan(0.02);
    const fsr = last!.FSR;
    const sumKg = fsr.reduce((a, b) => a + b, 0);
    expect(Math.abs(sumKg - NAO_TOTAL_MASS_KG) / NAO_TOTAL_MASS_KG).toBeLessThan(0.1);
    const weight = new Float32Array(2);
    const cop = new Float32Array(4);
    computeFeet(fsr, weight, cop);
    expect(weight[0]).toBeGreaterThan(0.25 * NAO_TOTAL_MASS_KG);
    expect(weight[1]).toBeGreaterThan(0.25 * NAO_TOTAL_MASS_KG);
    expect(insideFsrPolygon(FSR_POSITIONS_M.left, cop[0]!, cop[1]!)).toBe(true);
    expect(insideFsrPolygon(FSR_POSITIONS_M.right, cop[2]!, cop[3]!)).toBe(true);
    expect(last!.Accelerometer[2]).toBeCloseTo(-9.81, 0);
    await c.close();

    // Category 0: stiffness 0 at once. The client goes on answering (that is what moves lockstep time).
    expect((await estop(rt, 0)).status).toBe(200);
    let fellAfterS = Number.NaN;
    const t0 = model.timeS;
    await drive(lolaPath, 250, () => {
      if (model.fallen && Number.isNaN(fellAfterS)) fellAfterS = model.timeS - t0;
    });
    expect(fellAfterS).toBeLessThan(3);
  }, 300_000);

  it("a category-1 stop crouches it: crouched and not fallen 3 s later", async () => {
    const { rt, model, lolaPath } = await serve();
    const c = await drive(lolaPath, 167 + 80);
    expect(model.fallen).toBe(false);
    expect(model.basePositionM[2]).toBeGreaterThan(STAND_HEIGHT_M - 0.02);
    await c.close();
    expect((await estop(rt, 1)).status).toBe(200);
    const t0 = model.timeS;
    await drive(lolaPath, 250);
    expect(model.timeS - t0).toBeGreaterThanOrEqual(3 - 0.02);
    expect(model.fallen).toBe(false);
    expect(model.basePositionM[2]).toBeLessThan(STAND_HEIGHT_M - 0.07); // crouched
    expect((rt.inThreadRobot as NaoRobot).state.stiffness.every((s) => s === 0)).toBe(true); // and cut
  }, 300_000);

  it("the state carries the world (sim: time, pose, fallen, contacts); POST /v1/sim/reset puts it into a pose, under the lease and e-stop rules", async () => {
    const { rt } = await serve();
    const api = rt.record.apiUrl!;
    const post = (path: string, body: unknown, lease?: string) =>
      fetch(`${api}${path}`, { method: "POST", headers: { "content-type": "application/json", ...(lease ? { "x-bodylink-lease": lease } : {}) }, body: JSON.stringify(body) });
    const state = async () =>
      (await (await fetch(`${api}/v1/state`)).json()) as {
        sim?: { time_s: number; base_position_m: number[]; base_orientation_xyzw: number[]; fallen: boolean; contacts: Array<{ link: string; force_n: number }> };
      };
    expect((await post("/v1/sim/reset", { pose: "lying" })).status).toBe(403); // no lease
    const lease = ((await (await post("/v1/control", { owner: "physics-test" })).json()) as { lease_id: string }).lease_id;
    expect((await post("/v1/sim/reset", { pose: "sideways" }, lease)).status).toBe(400);
    const r = await post("/v1/sim/reset", { pose: "lying" }, lease);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ ok: true, result: { pose: "lying", time_s: 0 } });
    // A LoLA client's answers move lockstep time (its commands are refused: the API holds control).
    await (await drive(lolaPath(rt), 100)).close();
    const lying = (await state()).sim!;
    expect(lying.time_s).toBeCloseTo(1.2, 1);
    expect(lying.fallen).toBe(true);
    expect(lying.base_position_m[2]).toBeLessThan(0.1);
    expect(lying.contacts.map((c) => c.link)).toContain("Torso");
    expect(Math.hypot(...lying.base_orientation_xyzw)).toBeCloseTo(1, 5);
    expect((await post("/v1/sim/reset", { pose: "crouch" }, lease)).status).toBe(200);
    await (await drive(lolaPath(rt), 50)).close();
    const crouched = (await state()).sim!;
    expect(crouched.fallen).toBe(false);
    expect(crouched.contacts.map((c) => c.link).sort()).toEqual(["LFoot", "RFoot"]);
    expect(crouched.contacts.reduce((a, c) => a + c.force_n, 0) / 9.81).toBeCloseTo(NAO_TOTAL_MASS_KG, 0);
    // Latched: no reset until the e-stop is reset.
    expect((await estop(rt, 0)).status).toBe(200);
    expect((await post("/v1/sim/reset", { pose: "stand" }, lease)).status).toBeGreaterThanOrEqual(400);
  }, 300_000);

  it("a kinematic simulator has no world in its state", async () => {
    const lolaPathK = tmpSocketPath();
    const rt = await startRuntime({ ...LOLA_SIM_RUNTIME_OPTIONS, body: "nao", sim: "kinematic", lolaPath: lolaPathK, seed: 1, gcEveryMs: 0 });
    cleanups.push(() => rt.close());
    await new Promise((r) => setTimeout(r, 100));
    const s = (await (await fetch(`${rt.record.apiUrl}/v1/state`)).json()) as Record<string, unknown>;
    expect(s.joint_positions).toBeDefined();
    expect("sim" in s).toBe(false);
  }, 60_000);

  it("is deterministic: the same client twice records byte-identical LoLA messages", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bl-lockstep-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true })); // two ~350 KB recordings a run
    const runs: Array<Map<string, string[]>> = [];
    for (const n of [1, 2]) {
      const file = join(dir, `run${n}.mcap`);
      const { rt, lolaPath } = await serve(file);
      const c = await drive(lolaPath, 300, undefined, 100);
      await c.close();
      await rt.close();
      const lola = [...(await messagesByTopic(file))].filter(([topic]) => topic.startsWith("/lola/"));
      runs.push(new Map(lola.map(([topic, msgs]) => [topic, msgs.map((b) => b.toString("hex"))])));
    }
    const [a, b] = runs as [Map<string, string[]>, Map<string, string[]>];
    expect(a.get("/lola/sensor")!.length).toBeGreaterThanOrEqual(300);
    expect(a.get("/lola/command")!.length).toBeGreaterThan(0);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const topic of a.keys()) expect(b.get(topic)).toEqual(a.get(topic));
  }, 300_000);
});
