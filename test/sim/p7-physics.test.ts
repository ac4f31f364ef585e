/**
 * Issue 21 for the AIRBOT P7: MuJoCo under the simulated arm (src/sim/p7/physics/mujoco-p7.ts).
 *
 * - The documented gravity check (docs/simulation.md): the physics arm holding a bent pose reports
 *   non-zero efforts whose signs and sizes are m·g·r, computed here by hand from the model's own
 *   masses and centres of mass and the joints' anchors and axes as MuJoCo places them (and equal to
 *   the tables' point-mass model, bodies/p7/kinematics.ts).
 * - Motion: the servos track the arm service's trajectory within a few mrad, efforts carry the
 *   motion torques on top of gravity, and the IMU reads +g at rest.
 * - Collision: a move through the floor ends on it (the kinematic arm, which has no floor, goes
 *   through), and `POST /v1/sim/reset`'s resetWorld leaves no contact behind.
 * - The e-stop holds the arm against gravity: after either category it comes to rest within
 *   P7_STOP_OVERSHOOT_RAD of where the stop began and then stays within P7_HOLD_SAG_RAD for 5 s.
 * - `serve --body p7 --sim physics --lockstep`: the state and the recording carry `sim`, /p7/tf is
 *   rooted at `world`, and two runs of the same step script record identical states.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { GRAVITY_M_S2, P7_EFFORT_LIMIT_NM, P7_LINK_MASS_KG } from "../../src/bodies/p7/joints.js";
import { P7Kinematics } from "../../src/bodies/p7/kinematics.js";
import { P7_CONTACT_LINKS } from "../../src/bodies/p7/mjcf.js";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { P7SimDriver, physicsP7Model } from "../../src/drivers/p7/sim.js";
import { P7State } from "../../src/bodies/p7/state.js";
import { P7_WRITE_KIND, P7Commands, setP7Write } from "../../src/bodies/p7/commands.js";
import { SimClock } from "../../src/runtime/clock.js";
import { P7_PERIOD_MS, P7Robot } from "../../src/runtime/p7-robot.js";
import { P7Sim } from "../../src/sim/p7/arm-sim.js";
import type { MujocoP7Model } from "../../src/sim/p7/physics/mujoco-p7.js";
import { messagesByTopic } from "../record/helpers.js";
import { leastHeapAllocated } from "../support/allocated.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

const runtimeDir = useRuntimeDir("bl-p7phys-");
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Shoulder forward, elbow bent, wrist turned: every joint but 1 and 7 carries gravity. */
const BENT = [0.4, -0.9, 0.3, -1.2, 0.5, 0.6, -0.4];
const QUIET = { effortNoiseNm: 0, gyroNoiseRadS: 0, accelNoiseMS2: 0 };
/**
 * Stated bounds (docs/simulation.md): how far a category-0 stop at 2.5 rad/s, gravity pulling the
 * same way, carries a joint past the point where it began (the motors brake at their torque limit),
 * and how far the arm sags after it stopped.
 */
const P7_STOP_OVERSHOOT_RAD = 0.08;
const P7_HOLD_SAG_RAD = 1e-3;

function tick(robot: P7Robot, clock: SimClock, cycles = 1): void {
  for (let i = 0; i < cycles; i++) {
    clock.set(clock.nowMs() + P7_PERIOD_MS);
    robot.loop.step();
  }
}

async function physicsRobot(): Promise<{ robot: P7Robot; clock: SimClock; model: MujocoP7Model; lease: string }> {
  const clock = new SimClock();
  const model = (await physicsP7Model()) as MujocoP7Model;
  const robot = await P7Robot.create({ clock, seed: 4, simParams: QUIET, simModel: model });
  tick(robot, clock);
  const r = robot.authority.acquire("api:test", "api", 600_000);
  if (!r.ok) throw new Error(r.reason);
  return { robot, clock, model, lease: r.lease.id };
}

/**
 * m·g·r by hand: for joint i, Σ over the links it carries of m_k · g · (a_i × (c_k − p_i))·ẑ, the
 * torque its motor holds against gravity (z up), from MuJoCo's masses, centres of mass (xipos),
 * joint anchors and axes (xanchor, xaxis) in the current pose.
 */
function handGravityTorques(model: MujocoP7Model): number[] {
  const m = model.mjModel,
    d = model.mjData;
  const mass = m.body_mass as Float64Array;
  const com = d.xipos as Float64Array;
  const anchor = d.xanchor as Float64Array;
  const axis = d.xaxis as Float64Array;
  const out: number[] = [];
  for (let i = 0; i < 7; i++) {
    let t = 0;
    for (let b = i + 1; b <= 7; b++) {
      const rx = com[3 * b]! - anchor[3 * i]!,
        ry = com[3 * b + 1]! - anchor[3 * i + 1]!;
      t += mass[b]! * GRAVITY_M_S2 * (axis[3 * i]! * ry - axis[3 * i + 1]! * rx);
    }
    out.push(t);
  }
  return out;
}

let model0: MujocoP7Model;
beforeAll(async () => {
  model0 = (await physicsP7Model()) as MujocoP7Model;
});

describe("the physics P7 under the arm service", () => {
  it("holding a bent pose, its efforts are gravity's m·g·r: non-zero, same signs and sizes (documented check)", async () => {
    const { robot, clock, model, lease } = await physicsRobot();
    const r = robot.moveJoints(lease, BENT, { speedRadS: 1.5 });
    if (!r.ok) throw r.error;
    tick(robot, clock, Math.ceil(r.etaS * 250) + 250); // the move, then 1 s holding
    const j = robot.getJointState()!;
    for (let i = 0; i < 7; i++) expect(Math.abs(j.angles[i]! - BENT[i]!)).toBeLessThan(1e-4);
    const hand = handGravityTorques(model);
    const tables = new Float64Array(7);
    const k = new P7Kinematics();
    k.update(j.angles);
    k.gravityTorquesNm(tables);
    expect(Array.from(model.mjModel.body_mass as Float64Array).slice(1)).toEqual([...P7_LINK_MASS_KG]);
    for (let i = 0; i < 7; i++) {
      expect(j.efforts[i]).toBeCloseTo(hand[i]!, 3); // within 0.5 mN·m
      expect(hand[i]).toBeCloseTo(tables[i]!, 9);
      if (Math.abs(hand[i]!) > 0.1) expect(Math.sign(j.efforts[i]!)).toBe(Math.sign(hand[i]!));
    }
    // Not a trivial pose: the shoulder, the elbow and joint 3 carry real torque; joints 1 and 7 (vertical axes there) none.
    expect(j.efforts[1]).toBeGreaterThan(10);
    expect(j.efforts[3]).toBeGreaterThan(3);
    expect(Math.abs(j.efforts[0]!)).toBeLessThan(1e-6);
    // The IMU at rest: +g up, in its own frame.
    const imu = robot.getImuState()!;
    expect(Math.hypot(...imu.linearAcceleration)).toBeCloseTo(GRAVITY_M_S2, 4);
    expect(robot.health().sim).toMatchObject({ model: "physics" });
    expect(robot.state.simWorld[0]).toBe(1);
  });

  it("tracks a move within a few mrad of the kinematic arm; a fast move's efforts carry the motion torques on top of gravity", async () => {
    const kin = new P7Sim({ params: QUIET });
    const phys = new P7Sim({ params: QUIET, model: model0 });
    const speeds = new Array(7).fill(2);
    const target = [1.2, -0.9, -0.6, -1.5, 1.0, -0.5, 0.8]; // the flange 13 cm above the floor (-1.4 at the shoulder would put it 7 cm through it)
    const eta = phys.moveTo(target, speeds);
    kin.moveTo(target, speeds);
    let maxErr = 0;
    let maxMotion = 0;
    const k = new P7Kinematics();
    const g = new Float64Array(7);
    for (let s = 0; s < Math.ceil(eta * 250) + 100; s++) {
      phys.step();
      kin.step();
      const a = phys.read()!,
        b = kin.read()!;
      k.update(a.angles);
      k.gravityTorquesNm(g);
      for (let i = 0; i < 7; i++) {
        maxErr = Math.max(maxErr, Math.abs(a.angles[i]! - b.angles[i]!));
        maxMotion = Math.max(maxMotion, Math.abs(a.efforts[i]! - g[i]!));
        expect(Math.abs(a.efforts[i]!)).toBeLessThanOrEqual(P7_EFFORT_LIMIT_NM[i]! + 1e-9);
      }
    }
    expect(maxErr).toBeLessThan(0.01);
    expect(maxMotion).toBeGreaterThan(0.5); // accelerating the links takes torque beyond gravity's
    for (let i = 0; i < 7; i++) expect(phys.read()!.angles[i]).toBeCloseTo(target[i]!, 4);
    phys.model.reset([0, 0, 0, 0, 0, 0, 0]);
  });

  it("cannot pass through the floor: a move folding it down ends on the floor and its base, where the kinematic arm goes through; a reset leaves no contact", async () => {
    const { robot, clock, model, lease } = await physicsRobot();
    const down = [0, -2.5, 0, 0, 0, 0, 0]; // 143° back: the flange 0.34 m below the floor
    const kin = new P7Kinematics();
    kin.update(down);
    expect(kin.flangeM[2]).toBeLessThan(-0.3); // where the kinematic arm would put it
    const r = robot.moveJoints(lease, down, { speedRadS: 1 });
    if (!r.ok) throw r.error;
    tick(robot, clock, Math.ceil(r.etaS * 250) + 500); // the move's time, then 2 s pressing
    const j = robot.getJointState()!;
    kin.update(j.angles);
    expect(kin.flangeM[2]).toBeGreaterThan(-0.01); // on the floor, not through it (soft contact: mm)
    expect(j.angles[1]).toBeGreaterThan(-2.3); // stopped short of the target
    expect(Math.abs(j.velocities[1]!)).toBeLessThan(0.01); // at rest there
    const d = model.mjData;
    expect(d.ncon).toBeGreaterThan(0);
    // The state says which links touch (sim.contacts): the forearm and wrist on the floor.
    const touching = P7_CONTACT_LINKS.filter((_, i) => robot.state.simContacts[i]! > 0);
    expect(touching).toContain("link7");
    expect(touching).not.toContain("link1");
    // The servo pushes toward its target: beyond what holding the arm against gravity takes.
    const g = new Float64Array(7);
    kin.gravityTorquesNm(g);
    expect(Math.abs(j.efforts[1]! - g[1]!)).toBeGreaterThan(5);
    // Back at home through the reset: nothing touches, nothing moves.
    expect(robot.simReset(lease, "home")).toEqual({ ok: true, timeS: 0 });
    expect(model.mjData.ncon).toBe(0);
    expect(Array.from(robot.state.simContacts)).toEqual(new Array(7).fill(0));
    tick(robot, clock, 25);
    for (const q of robot.getJointState()!.angles) expect(Math.abs(q)).toBeLessThan(1e-3);
  });

  it("steps without allocating (the core's cycle: the driver's write and read)", () => {
    const driver = new P7SimDriver({ seed: 2, model: model0 });
    const state = new P7State();
    const command = new P7Commands();
    command.targetsRad.set([0.3, -0.8, 0.2, -1, 0.4, 0.3, -0.2]);
    setP7Write(command, P7_WRITE_KIND.servoJoints, 0);
    let nowMs = 0;
    const cycle = (): void => {
      nowMs += P7_PERIOD_MS;
      driver.write(nowMs, command);
      driver.read(nowMs, state);
    };
    // Warm up past the JIT's tier-ups (optimizing mid-measurement allocates once, not per step).
    for (let i = 0; i < 2000; i++) cycle();
    expect(
      leastHeapAllocated(() => {
        for (let i = 0; i < 200; i++) cycle();
      }, 10),
    ).toBeLessThan(1024);
    expect(state.jointValid).toBe(true);
    model0.reset([0, 0, 0, 0, 0, 0, 0]);
  });

  for (const category of [1, 0] as const) {
    it(`a category-${category} e-stop holds the arm against gravity: it stops near where it was and does not sag`, async () => {
      const { robot, clock, lease } = await physicsRobot();
      // Swinging down toward horizontal, fast: gravity pulls the way it moves.
      expect(robot.moveJoints(lease, [0, -1.57, 0, -0.8, 0, 0.5, 0], { speedRadS: 2.5 }).ok).toBe(true);
      tick(robot, clock, 90);
      const at = Array.from(robot.getJointState()!.angles);
      expect(Math.abs(robot.getJointState()!.velocities[1]!)).toBeGreaterThan(0.5);
      robot.estop({ source: "test", reason: "hold", category });
      tick(robot, clock, 125); // 0.5 s: stopped
      const rest = Array.from(robot.getJointState()!.angles);
      for (let i = 0; i < 7; i++) expect(Math.abs(rest[i]! - at[i]!)).toBeLessThan(category === 1 ? 0.5 : P7_STOP_OVERSHOOT_RAD);
      let sag = 0;
      for (let c = 0; c < 1250; c++) {
        tick(robot, clock);
        const a = robot.getJointState()!.angles;
        for (let i = 0; i < 7; i++) sag = Math.max(sag, Math.abs(a[i]! - rest[i]!));
      }
      expect(sag).toBeLessThan(P7_HOLD_SAG_RAD);
      expect(robot.getJointState()!.efforts[1]).toBeGreaterThan(5); // still holding the arm up
      expect(robot.estopState().phase).toBe("cut");
    });
  }
});

describe("serve --body p7 --sim physics --lockstep", () => {
  async function serve(record: string): Promise<RunningRuntime> {
    const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body: "p7", sim: "physics", lockstep: true, seed: 2, gcEveryMs: 0, record });
    cleanups.push(() => rt.close());
    return rt;
  }
  async function call(rt: RunningRuntime, path: string, body?: unknown, lease?: string): Promise<Record<string, unknown>> {
    const r = await fetch(`${rt.record.apiUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(lease ? { "x-bodylink-lease": lease } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    expect(r.status).toBeLessThan(300);
    return (await r.json()) as Record<string, unknown>;
  }
  /** A scripted client: a move, a servo stream, an e-stop, each stepped in simulated time. */
  async function script(rt: RunningRuntime): Promise<Record<string, unknown>> {
    const id = (await call(rt, "/v1/control", { owner: "script" })).lease_id as string;
    await call(rt, "/v1/sim/step", { cycles: 1 }, id);
    await call(rt, "/v1/commands/move-joints", { positions: BENT, speed: 1.5 }, id);
    await call(rt, "/v1/sim/step", { cycles: 400 }, id);
    for (let k = 0; k < 20; k++) {
      await call(rt, "/v1/commands/servo-joints", { positions: BENT.map((q, i) => q + (i === 1 ? 0.01 * k : 0)) }, id);
      await call(rt, "/v1/sim/step", { cycles: 5 }, id);
    }
    return call(rt, "/v1/state");
  }

  it("carries sim{} in the state, roots /p7/tf at world, and two runs of one script record identical states", async () => {
    const runs: Array<{ state: Record<string, unknown>; records: unknown[]; tf: unknown }> = [];
    for (const n of [1, 2]) {
      const file = `${runtimeDir}/p7-physics-${n}.mcap`;
      const rt = await serve(file);
      expect(rt.lines.join("\n")).toMatch(/MuJoCo physics/);
      const state = await script(rt);
      const health = await call(rt, "/v1/health");
      expect(health.sim).toMatchObject({ clock: "lockstep", model: "physics" });
      await cleanups.pop()!();
      const byTopic = await messagesByTopic(file);
      // What varies with the wall clock: each message's epoch stamp and the real-time factor.
      const steady = (m: Record<string, unknown>): unknown => {
        const { epoch_ms: _e, sim, ...rest } = m;
        const { real_time_factor: _r, ...world } = sim as Record<string, unknown>;
        return { ...rest, sim: world };
      };
      const records = byTopic.get("/p7/state")!.map((b) => steady(JSON.parse(b.toString()) as Record<string, unknown>));
      runs.push({ state: steady(state) as Record<string, unknown>, records, tf: JSON.parse(byTopic.get("/p7/tf")![0]!.toString()) });
    }
    const [a, b] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect(a.state.sim).toMatchObject({ base_position_m: [0, 0, 0], base_orientation_xyzw: [0, 0, 0, 1], fallen: false, contacts: [] });
    expect((a.state.sim as { time_s: number }).time_s).toBeCloseTo(501 * 0.004, 9);
    expect((a.state.joint_efforts as number[])[1]).toBeGreaterThan(5);
    expect(a.records.length).toBeGreaterThan(500);
    expect(b.records).toEqual(a.records);
    expect(b.state).toEqual(a.state);
    const first = (a.tf as { transforms: Array<{ parent_frame_id: string; child_frame_id: string }> }).transforms[0]!;
    expect(first).toMatchObject({ parent_frame_id: "world", child_frame_id: "p7/base" });
  });
});
