/**
 * P7 snapshots: frozen objects and arrays (assignment throws: ES modules are strict mode), null
 * before the first state, after link loss, when a length does not match, and after stop().
 */
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { toArmJointState, toArmMotorState, toImuState, toP7StateSnapshot } from "../../src/bodies/p7/state.js";
import { SimClock } from "../../src/runtime/clock.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";

const META = { seq: 5, timestampMs: 20, epochMs: 1_767_225_600_020 };

function tick(robot: P7Robot, clock: SimClock, cycles = 1): void {
  for (let i = 0; i < cycles; i++) {
    clock.set(clock.nowMs() + 4);
    robot.loop.step();
  }
}

let clock: SimClock;
let robot: P7Robot;
beforeEach(async () => {
  clock = new SimClock(1000);
  robot = await P7Robot.create({ clock, seed: 2 });
});

describe("frozen snapshots", () => {
  it("every getter's snapshot and its arrays are frozen; assignment throws in strict mode", () => {
    tick(robot, clock);
    const j = robot.getJointState()!;
    const m = robot.getMotorState()!;
    const u = robot.getImuState()!;
    const all = robot.getState()!;
    for (const o of [j, j.angles, j.velocities, j.efforts, m, m.temperatures, m.errorIds, u, u.angularVelocity, u.linearAcceleration, all]) {
      expect(Object.isFrozen(o)).toBe(true);
    }
    expect(all.joints).toBe(j);
    expect(all.motors).toBe(m);
    expect(all.imu).toBe(u);
    const w = <T>(o: T) => o as { -readonly [K in keyof T]: T[K] };
    expect(() => {
      w(j.angles as number[])[0] = 1;
    }).toThrow(TypeError);
    expect(() => {
      (j.velocities as number[]).push(1);
    }).toThrow(TypeError);
    expect(() => {
      w(j).timestampMs = 0;
    }).toThrow(TypeError);
    expect(() => {
      w(m.errorIds as number[])[6] = 0;
    }).toThrow(TypeError);
    expect(() => {
      w(u.linearAcceleration as unknown as number[])[2] = 0;
    }).toThrow(TypeError);
    expect(() => {
      w(all).joints = j;
    }).toThrow(TypeError);
    expect(() => {
      (all as unknown as Record<string, unknown>).extra = 1;
    }).toThrow(TypeError);
  });

  it("a snapshot is a copy: later cycles do not change it", async () => {
    tick(robot, clock);
    const lease = robot.authority.acquire("t", "api", 10_000);
    if (!lease.ok) throw new Error("no lease");
    expect(robot.moveJoints(lease.lease.id, [1, 0, 0, 0, 0, 0, 0], { speedRadS: 1 }).ok).toBe(true);
    const before = robot.getJointState()!;
    const angles = [...before.angles];
    tick(robot, clock, 100);
    expect(before.angles).toEqual(angles);
    expect(robot.getJointState()!.angles[0]).toBeGreaterThan(0.3);
  });

  it("carries seq, monotonic timestampMs and epochMs of its cycle; all three models share them in getState()", () => {
    tick(robot, clock);
    const a = robot.getState()!;
    expect(a.timestampMs).toBe(1004);
    expect(a.epochMs).toBe(clock.epochMs());
    expect(a.seq).toBe(1);
    expect([a.joints.seq, a.motors.seq, a.imu.seq]).toEqual([1, 1, 1]);
    expect([a.joints.epochMs, a.motors.epochMs, a.imu.epochMs]).toEqual([a.epochMs, a.epochMs, a.epochMs]);
    tick(robot, clock, 3);
    const b = robot.getState()!;
    expect(b.seq).toBe(4);
    expect(b.timestampMs).toBe(1016);
    expect(b.timestampMs).toBeGreaterThan(a.timestampMs);
  });

  it("repeated reads within one cycle return the same object; the next cycle a new one", () => {
    tick(robot, clock);
    const j = robot.getJointState();
    expect(robot.getJointState()).toBe(j);
    expect(robot.getState()).toBe(robot.getState());
    tick(robot, clock);
    expect(robot.getJointState()).not.toBe(j);
  });
});

describe("null when there is no current data", () => {
  it("null before the first cycle", () => {
    expect(robot.getJointState()).toBeNull();
    expect(robot.getMotorState()).toBeNull();
    expect(robot.getImuState()).toBeNull();
    expect(robot.getState()).toBeNull();
    expect(robot.link).toBe("starting");
    tick(robot, clock);
    expect(robot.getState()).not.toBeNull();
    expect(robot.link).toBe("ok");
  });

  it("null at once after the link is lost, and until a cycle after it returns", () => {
    tick(robot, clock);
    expect(robot.getJointState()).not.toBeNull();
    robot.simulateLinkLoss();
    expect(robot.getJointState()).toBeNull();
    expect(robot.getMotorState()).toBeNull();
    expect(robot.getImuState()).toBeNull();
    expect(robot.getState()).toBeNull();
    tick(robot, clock, 10);
    expect(robot.getState()).toBeNull();
    expect(robot.health().link).toBe("lost");
    robot.restoreLink();
    expect(robot.getState()).toBeNull();
    tick(robot, clock);
    expect(robot.getState()).not.toBeNull();
    expect(robot.health().link).toBe("ok");
    expect(robot.health().errors.linkLost).toBe(1);
  });

  it("null for a model whose lengths do not match the body; the others still read", () => {
    robot.sim.setReportedLengths({ motors: 0 }); // the SDK's "empty upstream array"
    tick(robot, clock);
    expect(robot.getMotorState()).toBeNull();
    expect(robot.getJointState()).not.toBeNull();
    expect(robot.getImuState()).not.toBeNull();
    expect(robot.getState()).toBeNull(); // not all three from this cycle
    robot.sim.setReportedLengths({ joints: 8 });
    tick(robot, clock);
    expect(robot.getJointState()).toBeNull();
    expect(robot.getMotorState()).not.toBeNull();
    robot.sim.setReportedLengths({ imu: 2 });
    tick(robot, clock);
    expect(robot.getImuState()).toBeNull();
    expect(robot.getJointState()).not.toBeNull();
    expect(robot.health().errors.lengthMismatch).toBe(3);
    robot.sim.setReportedLengths({});
    tick(robot, clock);
    expect(robot.getState()).not.toBeNull();
  });

  it("null after stop()", async () => {
    tick(robot, clock);
    await robot.stop();
    expect(robot.getState()).toBeNull();
    expect(robot.getJointState()).toBeNull();
    expect(robot.health().link).toBe("stopped");
  });
});

describe("snapshot builders (shared with the client SDK)", () => {
  const seven = [0, 1, 2, 3, 4, 5, 6];

  it("build frozen snapshots from plain arrays or typed arrays", () => {
    const j = toArmJointState({ angles: seven, velocities: new Float64Array(7), efforts: seven }, META)!;
    expect(j).toEqual({ ...META, angles: seven, velocities: [0, 0, 0, 0, 0, 0, 0], efforts: seven });
    expect(Object.isFrozen(j.velocities)).toBe(true);
    expect(Array.isArray(j.velocities)).toBe(true);
    const m = toArmMotorState({ temperatures: seven, errorIds: [0, 0, 0, 0, 0, 0, 2 ** 19] }, META)!;
    expect(m.errorIds[6]).toBe(524288);
    const u = toImuState({ angularVelocity: [0, 0, 0], linearAcceleration: [0, 0, 9.8] }, META)!;
    expect(toP7StateSnapshot(j, m, u)).toEqual({ ...META, joints: j, motors: m, imu: u });
    expect(toP7StateSnapshot(j, m, toImuState({ angularVelocity: [0, 0, 0], linearAcceleration: [0, 0, 9.8] }, { ...META, seq: 6 }))).toBeNull();
  });

  it("property: null unless every array has the body's length and proper values", () => {
    const value = fc.oneof(fc.double(), fc.integer(), fc.constant("1"), fc.constant(null));
    const arr = fc.oneof(fc.array(value, { maxLength: 9 }), fc.constant(undefined), fc.constant("x"));
    const ok = (a: unknown, n: number, ints = false) =>
      Array.isArray(a) && a.length === n && a.every((v) => typeof v === "number" && Number.isFinite(v) && (!ints || (Number.isSafeInteger(v) && v >= 0)));
    fc.assert(
      fc.property(arr, arr, arr, (a, b, c) => {
        expect(toArmJointState({ angles: a, velocities: b, efforts: c }, META) !== null).toBe(ok(a, 7) && ok(b, 7) && ok(c, 7));
        expect(toArmMotorState({ temperatures: a, errorIds: b }, META) !== null).toBe(ok(a, 7) && ok(b, 7, true));
        expect(toImuState({ angularVelocity: a, linearAcceleration: c }, META) !== null).toBe(ok(a, 3) && ok(c, 3));
      }),
      { numRuns: 2000 },
    );
  });

  it("rejects non-finite metadata", () => {
    expect(toImuState({ angularVelocity: [0, 0, 0], linearAcceleration: [0, 0, 0] }, { ...META, timestampMs: Number.NaN })).toBeNull();
  });
});
