/** The simulated TNY-360 in simulated time (SimClock): walking, stopping, smooth enable/disable, posture, safety. */
import { describe, expect, it } from "vitest";
import { JOINT_MAX_RAD } from "../../src/bodies/tny360/joints.js";
import { REST_POSE_RAD, STAND_POSE_RAD, smoothEnableEstimateS } from "../../src/bodies/tny360/poses.js";
import type { TnyReply } from "../../src/bodies/tny360/state.js";
import { SIM_ERROR_IDS } from "../../src/sim/tny360/quadruped.js";
import { actionSpec, GaitType, Status } from "../../src/wire/tny/constants.js";
import { simRig, type SimRig } from "./helpers.js";

/** Smooth-enable and wait until the sequence is over; returns the seconds it took. */
function enableAndWait(rig: SimRig): { estimatedS: number; tookS: number } {
  const r = rig.robot.enableSmooth(rig.lease());
  if (!r.ok) throw r.error;
  const t0 = rig.clock.nowMs();
  let done = Number.NaN;
  for (let i = 0; i < 2000 && Number.isNaN(done); i++) {
    rig.run(5);
    if (rig.robot.state.body.smooth === "idle") done = rig.clock.nowMs();
  }
  return { estimatedS: r.estimatedS, tookS: (done - t0) / 1000 };
}

function sync(r: TnyReply | Promise<TnyReply>): TnyReply {
  if (r instanceof Promise) throw new Error("expected a synchronous reply");
  return r;
}

describe("TNY-360 simulator: smooth enable and disable", () => {
  it("enable from REST finishes within 10 % of its estimate and ends in STAND", async () => {
    const rig = await simRig();
    expect(rig.robot.state.body.enabledMask).toBe(0);
    expect(rig.robot.state.body.heightM).toBeCloseTo(0.05, 3); // resting on folded legs
    const { estimatedS, tookS } = enableAndWait(rig);
    expect(estimatedS).toBeCloseTo((50 * Math.PI) / 180 / 0.7, 6); // knee 150° → 100° at 10 % of 7 rad/s
    expect(Math.abs(tookS - estimatedS)).toBeLessThanOrEqual(0.1 * estimatedS);
    expect(rig.robot.state.body.enabledMask).toBe(0x3fff);
    rig.run(200);
    expect(rig.robot.state.body.heightM).toBeCloseTo(0.12, 3); // standing on IK at the default height
    expect(Array.from(rig.robot.state.paws.grounded)).toEqual([1, 1, 1, 1]);
  });

  it("enable from another pose: REST at 5 % first, then STAND at 10 %, within 10 % of the estimate", async () => {
    const rig = await simRig();
    const lease = rig.lease();
    expect(rig.robot.setEnabledMask(lease, 0x3fff).ok).toBe(true);
    const pose = [0.3, -1.2, 1.0, -0.2, -1.5, 0.6, 0.1, -0.4, 2.0, 0, -1, 1.5, 1, 2];
    expect(rig.robot.setJointAngles(lease, pose).ok).toBe(true);
    rig.run(2000);
    const at = Array.from(rig.robot.state.joints.targetRad);
    expect(at[1]).toBeCloseTo(-1.2, 5);
    const { estimatedS, tookS } = enableAndWait(rig);
    expect(estimatedS).toBeCloseTo(smoothEnableEstimateS(pose), 6);
    expect(estimatedS).toBeGreaterThan(3); // the 5 % phase dominates
    expect(Math.abs(tookS - estimatedS)).toBeLessThanOrEqual(0.1 * estimatedS);
  });

  it("disable goes to REST at 10 % within 10 % of its estimate, then turns the 12 leg joints off", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    rig.run(300);
    const r = rig.robot.disableSmooth(rig.lease());
    if (!r.ok) throw r.error;
    const t0 = rig.clock.nowMs();
    rig.run(5);
    while (rig.robot.state.body.smooth !== "idle") rig.run(5);
    const tookS = (rig.clock.nowMs() - t0) / 1000;
    expect(Math.abs(tookS - r.estimatedS)).toBeLessThanOrEqual(0.1 * r.estimatedS);
    expect(rig.robot.state.body.enabledMask).toBe(0x3000); // ears stay on
    for (let j = 0; j < 12; j++) expect(rig.robot.sim!.handleNow(actionSpec("joint", "getModelAngle").module, actionSpec("joint", "getModelAngle").action, [j]).values[0]).toBe(REST_POSE_RAD[j]);
    expect(rig.robot.state.body.heightM).toBeCloseTo(0.05, 3);
  });

  it("a new joint override cancels a running sequence and restores full speed", async () => {
    const rig = await simRig();
    const lease = rig.lease();
    rig.robot.enableSmooth(lease);
    rig.run(100);
    expect(rig.robot.state.body.smooth).toBe("enabling");
    expect(rig.robot.setJointAngle(lease, 2, 1.0).ok).toBe(true);
    rig.run(5);
    expect(rig.robot.state.body.smooth).toBe("idle");
    rig.run(400);
    expect(rig.robot.state.joints.targetRad[2]).toBeCloseTo(1.0, 6);
    expect(Math.abs(rig.robot.state.joints.positionRad[2]! - 1.0)).toBeLessThan(0.02);
  });
});

describe("TNY-360 simulator: walking", () => {
  it("walks forward at the commanded velocity within 15 %, and stops when the velocity is not renewed", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    rig.run(300);
    const lease = rig.lease();
    const v = 0.2;
    const od = rig.robot.state.odometry;
    let x1 = 0;
    for (let t = 0; t < 4000; t += 100) {
      expect(rig.robot.setVelocity(lease, v, 0, 0).ok).toBe(true); // renewed every 100 ms
      rig.run(100);
      if (t === 900) x1 = od.xM;
    }
    const speed = (od.xM - x1) / 3;
    expect(Math.abs(speed - v)).toBeLessThanOrEqual(0.15 * v);
    expect(Math.abs(od.yM)).toBeLessThan(0.01);
    expect(Math.abs(od.yawRad)).toBeLessThan(0.02);
    // no renewal from now on: still walking within the 500 ms timeout…
    rig.run(400);
    expect(od.vxMS).toBeGreaterThan(0.15);
    // …then the velocity decays (250 ms) and the feet settle (≤ one 0.5 s gait cycle)
    rig.run(1000);
    expect(rig.robot.sim!.planner.active).toBe(false);
    expect(Array.from(rig.robot.state.body.targetVelocity)).toEqual([0, 0, 0]);
    const stopped = od.xM;
    rig.run(1000);
    expect(od.xM).toBe(stopped);
    expect(Math.abs(od.vxMS)).toBeLessThan(1e-3);
    const tv = sync(rig.call("body", "getTargetVelocity"));
    expect(tv.values[0]).toEqual({ x: 0, y: 0, z: 0 });
  });

  it("turns in place at the commanded yaw rate within 15 %; the IMU's yaw follows", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    const od = rig.robot.state.odometry;
    let yaw1 = 0;
    for (let t = 0; t < 3000; t += 100) {
      rig.robot.setVelocity(lease, 0, 0, 0.5);
      rig.run(100);
      if (t === 900) yaw1 = od.yawRad;
    }
    const rate = (od.yawRad - yaw1) / 2;
    expect(Math.abs(rate - 0.5)).toBeLessThanOrEqual(0.15 * 0.5);
    expect(rig.robot.state.imu.orientationRad[2]).toBeCloseTo(od.yawRad, 5);
    expect(Math.abs(rig.robot.state.imu.angularVelocityRadS[2]! - 0.5)).toBeLessThan(0.2);
  });

  it("while trotting, the diagonal pairs lift off in turn (paws follow the feet)", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    const counts = new Set<number>();
    for (let t = 0; t < 2000; t += 100) {
      rig.robot.setVelocity(lease, 0.15, 0, 0);
      rig.run(100, () => {
        const g = rig.robot.state.paws.grounded;
        const n = g[0]! + g[1]! + g[2]! + g[3]!;
        counts.add(n);
        if (n === 2) expect(g[0]).toBe(g[2]); // FL with BR, BL with FR
      });
    }
    expect(counts.has(2)).toBe(true);
    expect(counts.has(4)).toBe(true);
    const grounded = sync(rig.call("leg", "getGrounded", [0]));
    expect(grounded.status).toBe(0);
  });

  it("clears the velocity at once when the commanding lease is released, and on emergency stop", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    rig.robot.setVelocity(lease, 0.2, 0, 0);
    rig.run(100);
    expect(rig.robot.state.body.targetVelocity[0]).toBeCloseTo(0.2, 6);
    rig.robot.authority.release(lease);
    rig.run(5);
    expect(sync(rig.call("body", "getTargetVelocity")).values[0]).toEqual({ x: 0, y: 0, z: 0 });
    expect(rig.robot.health().errors.velocityClears).toBe(1);

    const lease2 = rig.lease();
    rig.robot.setVelocity(lease2, 0.1, 0, 0);
    rig.run(50);
    rig.robot.emergencyStop("test");
    expect(rig.robot.authority.holder()).toBeNull();
    expect(rig.robot.health().safetyReason).toMatch(/^emergency stop latched \(category 1, local: test\)/);
    expect(rig.robot.health().safety).toBe("estop");
    rig.run(50);
    expect(Array.from(rig.robot.state.body.targetVelocity)).toEqual([0, 0, 0]);
    // category 1 (the TNY-360's default): the smooth disable sits it down, then the legs are off
    expect(rig.robot.estopState().phase).toBe("settling");
    expect(rig.robot.state.body.smooth).toBe("disabling");
    for (let i = 0; i < 200 && rig.robot.estopState().phase === "settling"; i++) rig.run(50);
    expect(rig.robot.estopState()).toMatchObject({ latched: true, category: 1, phase: "cut" });
    expect(rig.robot.state.body.enabledMask & 0x0fff).toBe(0);
    // latched: commands are refused with bodylink's EmergencyStop status, and no lease is granted
    expect(sync(rig.call("body", "setVelocity", [0.1, 0, 0, true])).status).toBe(7);
    expect(rig.robot.authority.acquire("x", "tny", 1000).ok).toBe(false);
    rig.robot.resetEstop({ source: "test", reason: "clear" });
    expect(rig.robot.authority.acquire("x", "tny", 1000).ok).toBe(true);
  });

  it("a category-0 stop turns every joint off at once", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    rig.lease();
    expect(rig.robot.state.body.enabledMask).toBe(0x3fff);
    expect(rig.robot.estop({ source: "test", reason: "cut", category: 0 })).toMatchObject({ latched: true, category: 0, phase: "cut" });
    rig.run(5);
    expect(rig.robot.state.body.enabledMask).toBe(0);
  });

  it("a stopped decision loop trips the 500 ms intent watchdog: velocity forced to 0, error event recorded", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    rig.lease();
    sync(rig.call("body", "setVelocity", [0.2, 0, 0, true]));
    rig.run(100);
    sync(rig.call("system", "setDecisionLoopEnabled", [false]));
    for (let t = 0; t < 600; t += 100) {
      sync(rig.call("body", "setVelocity", [0.2, 0, 0, true])); // renewed, but never reaches the control loop
      rig.run(100);
    }
    expect(Array.from(rig.robot.state.body.targetVelocity)).toEqual([0, 0, 0]);
    expect(rig.robot.state.errors.lastErrorId).toBe(SIM_ERROR_IDS.intentWatchdog >>> 0);
    expect(sync(rig.call("diagnostic", "checkDecisionLoop")).values[0]).toBe(1);
  });
});

describe("TNY-360 simulator: posture, sensors, limits", () => {
  it("posture moves the body; the IMU (orientation, down vector, specific force) follows it", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    expect(rig.robot.setPosture(lease, { xM: 0, yM: 0, zM: 0.1, rxRad: 0.2, ryRad: 0, rzRad: 0 }).ok).toBe(true);
    rig.run(1000);
    const s = rig.robot.state;
    expect(s.body.heightM).toBeCloseTo(0.1, 3);
    expect(s.imu.orientationRad[0]).toBeCloseTo(0.2, 3);
    expect(s.imu.down[1]).toBeCloseTo(-Math.sin(0.2), 3);
    expect(s.imu.down[2]).toBeCloseTo(-Math.cos(0.2), 3);
    expect(s.imu.linearAccelerationMS2[2]).toBeCloseTo(9.81 * Math.cos(0.2), 0);
    expect(Array.from(s.paws.grounded)).toEqual([1, 1, 1, 1]);
    expect(sync(rig.call("imu", "getOrientation")).values[0]).toMatchObject({ z: 0 });
    // out of range: refused, the old posture kept
    const bad = rig.robot.setPosture(lease, { xM: 0, yM: 0, zM: 0.3, rxRad: 0, ryRad: 0, rzRad: 0 });
    expect(bad.ok).toBe(false);
    expect(s.body.posturePositionM[2]).toBeCloseTo(0.1, 6);
  });

  it("power follows the joint load: standing draws more than resting", async () => {
    const rig = await simRig();
    const restingA = rig.robot.state.power.currentA;
    enableAndWait(rig);
    rig.run(200);
    const p = rig.robot.state.power;
    expect(p.currentA).toBeGreaterThan(restingA + 1);
    expect(p.powerW).toBeCloseTo(p.voltageV * p.currentA, 6);
    expect(p.voltageV).toBeGreaterThan(6.5);
    expect(p.voltageV).toBeLessThan(8.5);
    expect(rig.robot.state.joints.effortNm.slice(0, 12).some((t) => Math.abs(t) > 0.05)).toBe(true);
  });

  it("a joint target outside the limits is refused and the old target kept", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    expect(rig.robot.setJointAngle(lease, 2, 1.2).ok).toBe(true);
    rig.run(10);
    const r = rig.robot.setJointAngle(lease, 2, JOINT_MAX_RAD[2]! + 0.01);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toBe(Status.InvalidParameters);
      expect(r.error.code).toBe("BL_ERR_CMD_INVALID");
    }
    expect(sync(rig.call("joint", "setAngle", [2, 3.0])).status).toBe(Status.InvalidParameters);
    const all = Array.from(STAND_POSE_RAD).concat([1, 1]);
    all[5] = -0.1; // knee below 0
    expect(rig.robot.setJointAngles(lease, all).ok).toBe(false); // all or nothing
    rig.run(10);
    expect(rig.robot.state.joints.targetRad[2]).toBeCloseTo(1.2, 6);
    expect(rig.robot.setJointAngle(lease, 2, Number.NaN).ok).toBe(false);
  });

  it("an unreachable leg target is refused; a reachable one moves the foot", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    rig.lease();
    expect(sync(rig.call("leg", "setPosition", [0, 0.4, 0.1, 0, true])).status).toBe(Status.InvalidParameters);
    expect(sync(rig.call("leg", "setPosition", [0, 0.1, 0.1, 0.03, true])).status).toBe(Status.Ok);
    rig.run(300);
    expect(rig.robot.state.paws.grounded[0]).toBe(0); // FL lifted 3 cm
    expect(sync(rig.call("leg", "getTargetPosition", [0])).values[0]).toEqual({ x: 0.1, y: 0.1, z: 0.03 });
  });

  it("commands need the lease; reads do not", async () => {
    const rig = await simRig();
    const r = rig.robot.setVelocity("nope", 0.1, 0, 0);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("BL_ERR_AUTH_UNKNOWN_LEASE");
    expect(sync(rig.call("body", "setVelocity", [0.1, 0, 0, true], null)).status).toBe(Status.UnknownError);
    rig.robot.authority.acquire("api:alice", "api", 5000);
    const held = rig.robot.setGait("x", "Run");
    expect(held.ok).toBe(false);
    if (!held.ok) expect(held.error.code).toBe("BL_ERR_AUTH_HELD");
    expect(sync(rig.call("system", "ping", [], null)).status).toBe(Status.Ok);
    expect(rig.robot.health().errors.refusedCommands).toBe(3);
  });

  it("RPC actions reply after the next control tick; a full queue answers UnknownError", async () => {
    const rig = await simRig();
    const p = rig.call("body", "getEnabled");
    expect(p).toBeInstanceOf(Promise);
    let got: TnyReply | null = null;
    void (p as Promise<TnyReply>).then((r) => {
      got = r;
    });
    await Promise.resolve();
    expect(got).toBeNull();
    rig.run(5);
    await Promise.resolve();
    expect(got).toEqual({ status: 0, values: [0] });
    const many = Array.from({ length: 32 }, () => rig.call("adc", "getAllChannels"));
    expect(many.every((x) => x instanceof Promise)).toBe(true);
    expect(sync(rig.call("adc", "getAllChannels")).status).toBe(Status.UnknownError);
    rig.run(5);
    const first = await many[0]!;
    expect((first.values[0] as Float32Array).length).toBe(16);
    expect(rig.robot.state.errors.lastErrorId).toBe(SIM_ERROR_IDS.rpcQueueFull >>> 0);
  });

  it("gait type is range-checked and applied; reboot resets the robot after replying", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    expect(rig.robot.setGait(lease, 3).ok).toBe(false);
    expect(rig.robot.setGait(lease, "Creep").ok).toBe(true);
    expect(sync(rig.call("gait", "getType")).values[0]).toBe(GaitType.Creep);
    expect(sync(rig.call("system", "reboot")).status).toBe(Status.Ok);
    expect(rig.robot.state.body.enabledMask).toBe(0x3fff); // not yet: the reply goes out first
    rig.run(5);
    expect(rig.robot.state.body.enabledMask).toBe(0);
    expect(sync(rig.call("gait", "getType")).values[0]).toBe(GaitType.Walk);
    expect(sync(rig.call("system", "getNbLogLines")).values[0]).toBe(1);
  });

  it("is deterministic: the same seed and commands give the same states", async () => {
    const script = async (seed: number) => {
      const rig = await simRig({ seed });
      enableAndWait(rig);
      const lease = rig.lease();
      for (let t = 0; t < 1000; t += 50) {
        rig.robot.setVelocity(lease, 0.1, 0.05, 0.2);
        rig.run(50);
      }
      return rig.robot.snapshot();
    };
    const a = await script(7);
    const b = await script(7);
    const c = await script(8);
    expect(a).toEqual(b);
    expect(a!.joints.positionRad).not.toEqual(c!.joints.positionRad); // feedback noise differs
    expect(a!.odometry.xM).toBeGreaterThan(0.05);
  });
});

describe("Tny360Robot read accessors and options", () => {
  it("give frozen, JSON-ready copies in firmware order; null before the first state", async () => {
    const { Tny360Robot } = await import("../../src/runtime/tny360-robot.js");
    const unpolled = await Tny360Robot.create({ host: "127.0.0.1", port: 1 }); // a real robot not yet polled
    expect(unpolled.joints()).toBeNull();
    expect(unpolled.snapshot()).toBeNull();
    await unpolled.stop();
    expect((await Tny360Robot.create()).joints()).not.toBeNull(); // the simulator boots with a state
    const rig = await simRig();
    enableAndWait(rig);
    rig.run(100);
    const r = rig.robot;
    const joints = r.joints()!;
    expect(joints.names[0]).toBe("FrontLeftHipRoll");
    expect(joints.positionRad).toHaveLength(14);
    expect(joints.temperatureC.every((t) => t === null)).toBe(true);
    expect(joints.effortNm.every((e) => typeof e === "number")).toBe(true);
    expect(Object.isFrozen(joints) && Object.isFrozen(joints.positionRad)).toBe(true);
    expect(r.imu()!.down).toEqual([0, 0, -1]);
    expect(r.imu()!.linearAccelerationMS2[2]).toBeCloseTo(9.81, 0);
    expect(r.paws()).toEqual({ legs: ["FrontLeft", "BackLeft", "BackRight", "FrontRight"], grounded: [true, true, true, true] });
    expect(r.body()!.posture.zM).toBeCloseTo(0.12, 6);
    expect(r.body()!.gait).toBe("Walk");
    expect(r.power()!.voltageV).toBeGreaterThan(6);
    expect(r.errors()).toEqual({ count: 0, lastEventId: -1, lastErrorId: 0 });
    expect(r.odometry()).toMatchObject({ xM: 0, yM: 0 });
    expect(r.stamp()).toMatchObject({ link: "ok", timestampMs: rig.clock.nowMs() });
    const snap = r.snapshot()!;
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    expect(snap.epochMs).toBe(rig.clock.epochMs());
  });

  it("the velocity timeout is configurable", async () => {
    const rig = await simRig({ velocityTimeoutMs: 100, velocityDecayMs: 0 });
    enableAndWait(rig);
    rig.robot.setVelocity(rig.lease(), 0.2, 0, 0);
    rig.run(90);
    expect((sync(rig.call("body", "getTargetVelocity")).values[0] as { x: number }).x).toBeCloseTo(0.2, 6);
    rig.run(20);
    expect(sync(rig.call("body", "getTargetVelocity")).values[0]).toEqual({ x: 0, y: 0, z: 0 });
  });

  it("a wire setVelocity is stamped with the time its request arrived (the server's one clock read), not a later read", async () => {
    const rig = await simRig({ velocityTimeoutMs: 100, velocityDecayMs: 0 });
    enableAndWait(rig);
    const s = actionSpec("body", "setVelocity");
    const arrivedMs = rig.clock.nowMs() - 60; // waited 60 ms (a flood's queue) before it was served
    expect(sync(rig.robot.request(rig.lease(), s.module, s.action, [0.2, 0, 0, true], arrivedMs)).status).toBe(Status.Ok);
    rig.run(30); // 90 ms after it arrived: still on
    expect((sync(rig.call("body", "getTargetVelocity")).values[0] as { x: number }).x).toBeCloseTo(0.2, 6);
    rig.run(20); // 110 ms after it arrived (50 after it was served): the keep-alive ran out
    expect(sync(rig.call("body", "getTargetVelocity")).values[0]).toEqual({ x: 0, y: 0, z: 0 });
    // without a time, the robot reads its clock: the same command now lasts its full 100 ms
    expect(sync(rig.call("body", "setVelocity", [0.2, 0, 0, true])).status).toBe(Status.Ok);
    rig.run(90);
    expect((sync(rig.call("body", "getTargetVelocity")).values[0] as { x: number }).x).toBeCloseTo(0.2, 6);
  });

  it("a stopped control loop freezes the joints; enableSmooth then answers −1", async () => {
    const rig = await simRig();
    enableAndWait(rig);
    const lease = rig.lease();
    sync(rig.call("system", "setControlLoopEnabled", [false]));
    expect(sync(rig.call("system", "getControlLoopEnabled")).values[0]).toBe(false);
    expect(sync(rig.call("diagnostic", "checkControlLoop")).values[0]).toBe(1);
    const before = rig.robot.state.joints.positionRad[2]!;
    expect(rig.robot.setJointAngle(lease, 2, 0.5).ok).toBe(true);
    rig.run(200);
    expect(Math.abs(rig.robot.state.joints.positionRad[2]! - before)).toBeLessThan(0.02);
    const r = rig.robot.enableSmooth(lease);
    expect(r.ok && r.estimatedS).toBe(-1);
    sync(rig.call("system", "setControlLoopEnabled", [true]));
    rig.run(300);
    expect(rig.robot.state.joints.positionRad[2]).toBeCloseTo(0.5, 1);
  });

  it("parses --tny-host values", async () => {
    const { parseTnyHost } = await import("../../src/runtime/tny360-robot.js");
    expect(parseTnyHost("192.168.4.1")).toEqual({ host: "192.168.4.1", port: 5621 });
    expect(parseTnyHost("robot.local:6000")).toEqual({ host: "robot.local", port: 6000 });
    expect(parseTnyHost("[::1]:5622")).toEqual({ host: "::1", port: 5622 });
    expect(parseTnyHost("fe80::1")).toEqual({ host: "fe80::1", port: 5621 });
    expect(() => parseTnyHost("")).toThrow(RangeError);
    expect(() => parseTnyHost("host:70000")).toThrow(/HOST:PORT/);
  });
});
