import { describe, expect, it } from "vitest";
import { LOLA_INDEX, REST_POSTURE_RAD, STAND_POSTURE_RAD } from "../../src/bodies/nao/joints.js";
import * as U from "../../src/bodies/nao/units.js";
import { SimClock } from "../../src/runtime/clock.js";
import { NAO_SETTLE_MAX_MS, NaoRobot } from "../../src/runtime/nao-robot.js";
import { SimChestboard } from "../../src/sim/nao/chestboard.js";

async function robot(opts: Parameters<typeof NaoRobot.create>[0] = {}) {
  const clock = new SimClock();
  const r = await NaoRobot.create({ clock, ...opts });
  await r.configure();
  const run = (cycles: number) => {
    for (let i = 0; i < cycles; i++) {
      clock.set(clock.nowMs() + 12);
      r.loop.step();
    }
  };
  return { r, clock, run, sim: r.sim! };
}

describe("NaoRobot on the simulated chest board", () => {
  it("publishes a plausible state", async () => {
    const { r, run } = await robot();
    run(50);
    const s = r.state;
    expect(s.seq).toBe(50);
    expect(s.valid).toBe(true);
    expect(s.link).toBe("ok");
    expect(Math.hypot(...s.accelerometer)).toBeGreaterThan(9.6);
    expect(Math.hypot(...s.accelerometer)).toBeLessThan(10.0);
    expect(s.battery[0]).toBeGreaterThan(0.9);
    expect(s.battery[0]).toBeLessThanOrEqual(1);
    expect(s.battery[2]).toBeLessThan(0); // discharging
    expect(s.footWeightKg[0]! + s.footWeightKg[1]!).toBeCloseTo(5.3, 0);
    expect(s.head.voltageV).toBeGreaterThan(24);
    expect(s.head.faceTemperatureC).toBeGreaterThan(40);
    expect(s.jointInitialized.every((v) => v === 1)).toBe(true);
  });
  it("decodes the simulator's physical values to within one count", async () => {
    const { r, run, sim } = await robot({ seed: 11 });
    run(30);
    const s = r.state;
    const b = sim.body;
    for (let k = 0; k < 3; k++) expect(Math.abs(s.accelerometer[k]! - b.accelerometerMps2[k]!)).toBeLessThanOrEqual(U.ACCEL_MPS2_PER_COUNT);
    for (let k = 0; k < 3; k++) expect(Math.abs(s.gyroscope[k]! - b.gyroscopeRadS[k]!)).toBeLessThanOrEqual(U.GYRO_RADS_PER_COUNT);
    for (let k = 0; k < 2; k++) expect(Math.abs(s.angles[k]! - b.anglesRad[k]!)).toBeLessThanOrEqual(U.ANGLE_RAD_PER_COUNT + 1e-6);
    for (let k = 0; k < 2; k++) expect(Math.abs(s.sonar[k]! - b.sonarM[k]!)).toBeLessThanOrEqual(U.SONAR_M_PER_COUNT);
    for (let i = 0; i < 25; i++) {
      const per = i >= 23 ? 1 / U.HAND_COUNTS_FULL_OPEN : (2 * Math.PI) / U.ENCODER_COUNTS_PER_TURN;
      expect(Math.abs(s.position[i]! - b.positionRad[i]!)).toBeLessThanOrEqual(per + 1e-6);
      expect(Math.abs(s.current[i]! - b.currentA[i]!)).toBeLessThanOrEqual(U.CURRENT_A_PER_COUNT);
      expect(Math.abs(s.temperature[i]! - b.temperatureC[i]!)).toBeLessThanOrEqual(U.TEMPERATURE_C_PER_COUNT);
    }
    for (let k = 0; k < 8; k++) expect(Math.abs(s.fsr[k]! - b.fsrKg[k]!)).toBeLessThanOrEqual(0.0011);
    expect(Math.abs(s.battery[0]! - b.batteryCharge)).toBeLessThanOrEqual(U.BATTERY_CHARGE_PER_COUNT);
  });
  it("is deterministic under a seed", async () => {
    const a = await robot({ seed: 5 });
    const b = await robot({ seed: 5 });
    a.run(40);
    b.run(40);
    expect([...a.r.state.accelerometer]).toEqual([...b.r.state.accelerometer]);
    expect([...a.r.state.fsr]).toEqual([...b.r.state.fsr]);
  });
  it("touch sensors follow the simulated body in the seed's index order", async () => {
    const { r, run, sim } = await robot();
    sim.body.touch[0] = 1; // chest button
    sim.body.touch[2] = 1; // head middle
    sim.body.touch[10] = 1; // right bumper right
    sim.body.touch[12] = 1; // right hand left
    run(1);
    expect([...r.state.touch].map((v, i) => (v ? i : -1)).filter((i) => i >= 0)).toEqual([0, 2, 10, 12]);
  });
});

describe("commands, leases and safety", () => {
  it("needs a lease to command; with one, joints follow the target", async () => {
    const { r, run, sim } = await robot();
    run(2);
    const refused = r.command("nope", { Stiffness: new Array(25).fill(1) });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.code).toBe("BL_ERR_AUTH_UNKNOWN_LEASE");
    const a = r.authority.acquire("test", "api", 10_000);
    if (!a.ok) throw new Error("no lease");
    const target = new Array(25).fill(0);
    target[LOLA_INDEX.HeadYaw] = 0.5;
    const ok = r.command(a.lease.id, { Position: target, Stiffness: new Array(25).fill(1) });
    expect(ok.ok && ok.problems).toEqual([]);
    run(100);
    expect(r.state.position[LOLA_INDEX.HeadYaw]).toBeCloseTo(0.5, 2);
    expect(r.state.stiffness[0]).toBe(1);
    expect(sim.body.stiffness[0]).toBe(1);
    expect(r.state.safetyReason).toBeNull();
    expect(r.state.safety).toBe("none");
  });
  it("rejects bad keys with reasons and applies the rest", async () => {
    const { r } = await robot();
    const a = r.authority.acquire("t", "api", 10_000);
    if (!a.ok) throw new Error();
    const res = r.command(a.lease.id, { Position: [1, 2, 3], Stiffness: new Array(25).fill(Number.NaN), Chest: [1, 0, 0] });
    expect(res.ok && res.problems.map((p) => p.key)).toEqual(["Position", "Stiffness"]);
  });
  it("ramps stiffness to 0 when the lease expires, and says why", async () => {
    const { r, run, clock } = await robot({ stiffnessRampMs: 120 });
    const a = r.authority.acquire("t", "lola", 100);
    if (!a.ok) throw new Error();
    r.command(a.lease.id, { Stiffness: new Array(25).fill(1) });
    run(5);
    expect(r.state.stiffness[0]).toBe(1);
    run(10); // 120 ms later the 100 ms lease has expired
    expect(clock.nowMs()).toBeGreaterThan(100);
    expect(r.state.safetyReason).toBe("control expired (t)");
    expect(r.state.safety).toBe("lease_expired");
    expect(r.state.stiffness[0]).toBeLessThan(1);
    run(10);
    expect(r.state.stiffness[0]).toBe(0);
  });
  it("ramps stiffness to 0 when the link is lost, and recovers gradually", async () => {
    const { r, run, sim } = await robot({ stiffnessRampMs: 120, recoveryMs: 60 });
    const a = r.authority.acquire("t", "api", 60_000);
    if (!a.ok) throw new Error();
    r.command(a.lease.id, { Stiffness: new Array(25).fill(1) });
    run(3);
    sim.dropAnswers = 20;
    run(20);
    expect(r.state.link).toBe("lost");
    expect(r.state.valid).toBe(false);
    expect(r.state.safetyReason).toMatch(/body link lost: no answer within 20 ms/);
    expect(r.state.safety).toBe("link_lost");
    expect(r.state.stiffness[0]).toBe(0);
    run(3);
    expect(r.state.link).toBe("ok");
    run(6); // recovery time passes, then ramps up at the same rate, never a jump
    expect(r.state.safetyReason).toBeNull();
    expect(r.state.safety).toBe("none");
    expect(r.state.stiffness[0]).toBeGreaterThan(0);
    expect(r.state.stiffness[0]).toBeLessThan(1);
    run(20);
    expect(r.state.stiffness[0]).toBe(1);
  });
  it("a late cycle beyond the bound triggers the ramp", async () => {
    const { r, run } = await robot({ stiffnessRampMs: 120 });
    const a = r.authority.acquire("t", "api", 60_000);
    if (!a.ok) throw new Error();
    r.command(a.lease.id, { Stiffness: new Array(25).fill(1) });
    run(3);
    r.onLate(30);
    run(1);
    expect(r.state.safetyReason).toBe("cycle ran late");
    expect(r.state.safety).toBe("cycle_late");
    expect(r.health().errors.lateCycles).toBe(1);
  });
  it("corrupted answers are counted and do not touch the state", async () => {
    const { r, run, sim } = await robot();
    run(3);
    const seq = r.state.seq;
    sim.corruptAnswers = 2;
    run(2);
    expect(r.state.seq).toBe(seq);
    expect(r.state.badFrames).toBe(2);
    expect(r.state.link).toBe("degraded");
    run(1);
    expect(r.state.seq).toBe(seq + 1);
  });
  it("unacknowledged frames are counted and reported in the state", async () => {
    const { r, run, sim } = await robot();
    sim.corruptAcks = 1;
    run(2);
    expect(r.state.unacknowledgedFrames).toBe(1);
    expect(r.state.seq).toBe(1);
  });
  it("a board rejected three times leaves its joints uninitialized and the runtime goes on", async () => {
    const clock = new SimClock();
    const transport = new SimChestboard({ clock, boardVersions: { LeftArmBoard: 9 } });
    const r = await NaoRobot.create({ clock, transport });
    await r.configure();
    expect(r.boards.find((b) => b.name === "LeftArmBoard")).toMatchObject({ accepted: false, attempts: 3 });
    expect(r.state.jointInitialized[LOLA_INDEX.LElbowYaw]).toBe(0);
    expect(r.state.jointInitialized[LOLA_INDEX.LShoulderPitch]).toBe(1);
    clock.set(12);
    r.loop.step();
    expect(r.state.valid).toBe(true);
  });
  it("smooth enable reaches the stand posture within its estimate; e-stop needs no lease", async () => {
    const { r, run } = await robot();
    run(2);
    const a = r.authority.acquire("t", "api", 60_000);
    if (!a.ok) throw new Error();
    const e = r.smoothEnable(a.lease.id);
    if (!e.ok) throw new Error(e.error.message);
    expect(e.estimatedS).toBeGreaterThanOrEqual(1);
    run(Math.ceil((e.estimatedS * 1000) / 12) + 30);
    expect(r.motionActive).toBe(false);
    for (const j of ["LKneePitch", "RHipPitch", "LShoulderPitch"] as const) {
      expect(r.state.position[LOLA_INDEX[j]]).toBeCloseTo(STAND_POSTURE_RAD[LOLA_INDEX[j]]!, 1);
    }
    r.emergencyStop("test", 0);
    run(1);
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true);
    expect(r.authority.holder()).toBeNull();
    expect(r.state.safetyReason).toMatch(/^emergency stop latched \(category 0, local: test\)/);
    expect(r.state.safety).toBe("estop");
  });

  it("a delayed answer makes the next cycle an overrun, counted, and the late answer still lands", async () => {
    const { r, run, sim, clock } = await robot();
    run(2);
    const seq = r.state.seq;
    sim.delayAnswers = 1;
    sim.delayMs = 30;
    run(1); // the exchange is now waiting for the delayed bulk read
    expect(r.link.busy).toBe(true);
    run(1); // next cycle finds it in flight
    expect(r.health().errors.overruns).toBe(1);
    await clock.advance(30); // the answer arrives
    expect(r.link.busy).toBe(false);
    // The state changes only inside a cycle (the real-time core publishes it once per cycle): the
    // late answer is decoded by the next cycle's first read, then that cycle's own answer.
    expect(r.state.seq).toBe(seq);
    run(1);
    expect(r.state.seq).toBe(seq + 2);
    expect(r.state.link).toBe("ok");
  });
  it("a new holder does not inherit the previous holder's stiffness: it flows only once it commands", async () => {
    const { r, run } = await robot({ stiffnessRampMs: 120 });
    const a = r.authority.acquire("a", "api", 60_000);
    if (!a.ok) throw new Error();
    r.command(a.lease.id, { Stiffness: new Array(25).fill(1) });
    run(3);
    expect(r.state.stiffness[0]).toBe(1);
    a.lease.release();
    run(3); // mid-ramp
    const b = r.authority.acquire("b", "api", 60_000);
    if (!b.ok) throw new Error();
    run(1);
    expect(r.state.stiffness[0]).toBeLessThan(1);
    expect(r.state.safetyReason).toBe("b holds control and has not commanded yet");
    expect(r.state.safety).toBe("waiting_for_command");
    run(20);
    expect(r.state.stiffness[0]).toBe(0); // A's targets were dropped, not handed to B
    r.command(b.lease.id, { Stiffness: new Array(25).fill(0.5) });
    run(1);
    expect(r.state.stiffness[0]).toBeCloseTo(0.5, 2);
    expect(r.state.safetyReason).toBeNull();
    expect(r.state.safety).toBe("none");
  });
});

describe("emergency stop (latched, categories 0 and 1)", () => {
  /** A standing robot whose lease holder commands stiffness 1 at the stand posture. */
  async function standing() {
    const rig = await robot();
    rig.run(2);
    const a = rig.r.authority.acquire("t", "api", 60_000);
    if (!a.ok) throw new Error(a.reason);
    const stiff = (): void => {
      const c = rig.r.command(a.lease.id, { Position: STAND_POSTURE_RAD, Stiffness: new Array(25).fill(1) });
      if (!c.ok) throw new Error(c.error.message);
    };
    stiff();
    rig.run(100);
    expect(rig.r.state.stiffness.every((v) => Math.abs(v - 1) < 0.01)).toBe(true);
    return { ...rig, leaseId: a.lease.id, stiff };
  }

  it("category 1 (the NAO's default) crouches into the rest posture within its bound, never stiffer than before, then cuts", async () => {
    const { r, run } = await standing();
    const e = r.estop({ source: "api", reason: "crouch" });
    expect(e).toMatchObject({ latched: true, category: 1, phase: "settling" });
    const cycles = Math.ceil(NAO_SETTLE_MAX_MS / 12) + 2;
    let maxStiffness = 0;
    let cutAt = -1;
    for (let i = 0; i < cycles; i++) {
      run(1);
      for (const v of r.state.stiffness) maxStiffness = Math.max(maxStiffness, v);
      if (cutAt < 0 && r.estopState().phase === "cut") cutAt = i;
    }
    expect(maxStiffness).toBeLessThanOrEqual(1);
    expect(cutAt).toBeGreaterThan(10); // it did crouch first
    expect(cutAt).toBeLessThanOrEqual(cycles);
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true);
    for (const j of ["LKneePitch", "RHipPitch"] as const) expect(r.state.position[LOLA_INDEX[j]]).toBeCloseTo(REST_POSTURE_RAD[LOLA_INDEX[j]]!, 1);
  });

  it("a late cycle during the crouch makes it category 0: stiffness 0 at once", async () => {
    const { r, run } = await standing();
    r.estop({ source: "api", reason: "crouch" });
    run(5);
    expect(r.state.stiffness.some((v) => v > 0.5)).toBe(true);
    r.onLate(100); // the runtime was stalled (a fault)
    run(1);
    expect(r.estopState()).toMatchObject({ latched: true, category: 0, phase: "cut" });
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true);
  });

  it("latches: no lease and no command until the reset; after it nothing moves until a client commands, and stiffness ramps up", async () => {
    const { r, run, leaseId } = await standing();
    r.estop({ source: "api", reason: "stop", category: 0 });
    run(1);
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true);
    const refused = r.command(leaseId, { Stiffness: new Array(25).fill(1) });
    expect(!refused.ok && refused.error.code).toBe("BL_ERR_ESTOP_LATCHED");
    const a = r.authority.acquire("intruder", "api", 1000);
    expect(a.ok).toBe(false);
    expect(!a.ok && a.reason).toMatch(/emergency stop latched .*reset it first/);
    run(50);
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true);

    r.resetEstop({ source: "test", reason: "robot is sitting" });
    expect(r.estopState().latched).toBe(false);
    run(20);
    expect(r.state.stiffness.every((v) => v === 0)).toBe(true); // nothing moves by itself
    const b = r.authority.acquire("t2", "api", 60_000);
    if (!b.ok) throw new Error(b.reason);
    const c = r.command(b.lease.id, { Position: r.state.position.slice(), Stiffness: new Array(25).fill(1) });
    expect(c.ok).toBe(true);
    const seen: number[] = [];
    for (let i = 0; i < 60; i++) {
      run(1);
      seen.push(r.state.stiffness[0]!);
    }
    expect(seen[0]).toBeGreaterThan(0);
    expect(seen[0]).toBeLessThan(0.1); // a ramp, not a jump
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect(seen.at(-1)).toBeCloseTo(1, 2);
  });
});
