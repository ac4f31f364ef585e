/**
 * The physics TNY-360 (sim/tny360/physics/mujoco-tny.ts) under the simulator's firmware: it boots
 * limp and resting, the smooth enable stands it up, it walks, the smooth disable sits it down, its
 * IMU reads gravity, it is deterministic and its tick allocates nothing.
 */
import { describe, expect, it } from "vitest";
import { type MujocoTnyModel, mujocoTnyModelFactory } from "../../src/sim/tny360/physics/mujoco-tny.js";
import { SimTny360 } from "../../src/sim/tny360/quadruped.js";
import { actionSpec } from "../../src/wire/tny/constants.js";
import { leastHeapAllocated } from "../support/allocated.js";

async function physicsSim(seed = 1) {
  const sim = new SimTny360({ seed, model: await mujocoTnyModelFactory() });
  let t = 0;
  const tick = (ms: number): void => {
    for (let i = 0; i < ms / 5; i++) {
      t += 5;
      sim.cycle(t);
    }
  };
  const call = (m: string, a: string, args: unknown[] = []) => {
    const s = actionSpec(m, a);
    return sim.handleNow(s.module, s.action, args);
  };
  const model = sim.model as MujocoTnyModel;
  tick(5);
  return { sim, model, tick, call, world: model.world };
}

describe("the physics TNY-360", () => {
  it("boots limp and at rest on its paws; the smooth enable stands it on four paws", async () => {
    const { sim, model, tick, call, world } = await physicsSim();
    expect(model.kind).toBe("physics");
    tick(1000);
    expect(sim.state.body.enabledMask).toBe(0);
    expect(world.fallen).toBe(false);
    expect(world.basePositionM[2]).toBeLessThan(0.07);
    expect(call("body", "enableSmooth").status).toBe(0);
    tick(4000);
    expect(sim.state.body.smooth).toBe("idle");
    expect(sim.state.body.heightM).toBeGreaterThan(0.11);
    expect(sim.state.body.heightM).toBeLessThan(0.13);
    expect(Array.from(sim.state.paws.grounded)).toEqual([1, 1, 1, 1]);
    // each paw carries about a quarter of the weight; the body does not touch the floor
    const weightN = 1.8 * 9.81;
    for (let leg = 0; leg < 4; leg++) expect(Math.abs(world.contactForceN[1 + leg]! - weightN / 4)).toBeLessThan(0.35 * (weightN / 4));
    expect(world.contactForceN[0]).toBe(0);
    // standing still: the IMU reads gravity (+9.81 up, as an accelerometer does), level
    const imu = sim.state.imu;
    expect(imu.linearAccelerationMS2[2]).toBeCloseTo(9.81, 0);
    expect(Math.abs(imu.orientationRad[0]!)).toBeLessThan(0.02);
    expect(Math.abs(imu.orientationRad[1]!)).toBeLessThan(0.02);
    expect(imu.down[2]).toBeCloseTo(-1, 3);
    // joints where the firmware's STAND put them, within the servos' give; efforts hold the weight
    const j = sim.state.joints;
    for (let i = 0; i < 12; i++) expect(Math.abs(j.positionRad[i]! - j.targetRad[i]!)).toBeLessThan(0.05);
    expect(Math.abs(j.effortNm[2]!)).toBeGreaterThan(0.1); // a knee carries its share
  });

  it("walks forward at 0.1 m/s for 5 s: about 0.5 m, straight, paws alternating, odometry from the physics", async () => {
    const { sim, tick, call, world } = await physicsSim();
    call("body", "enableSmooth");
    tick(4000);
    const x0 = world.basePositionM[0]!;
    const y0 = world.basePositionM[1]!;
    const patterns = new Set<string>();
    for (let i = 0; i < 50; i++) {
      call("body", "setVelocity", [0.1, 0, 0, false]);
      tick(100);
      patterns.add(sim.state.paws.grounded.join(""));
    }
    const dx = world.basePositionM[0]! - x0;
    const dy = world.basePositionM[1]! - y0;
    expect(Math.hypot(dx, dy)).toBeGreaterThan(0.35);
    expect(Math.hypot(dx, dy)).toBeLessThan(0.65);
    expect(Math.abs(sim.state.odometry.yawRad)).toBeLessThan(0.3);
    expect(world.fallen).toBe(false);
    expect(patterns.size).toBeGreaterThan(1); // a trot lifts paws
    expect(sim.state.odometry.xM).toBeCloseTo(world.basePositionM[0]!, 6); // booted at the origin, heading x
    expect(sim.state.odometry.vxMS).toBeGreaterThan(0.05);
  });

  it("the smooth disable sits it down: low, on its belly, not fallen, joints off", async () => {
    const { sim, tick, call, world } = await physicsSim();
    call("body", "enableSmooth");
    tick(4000);
    const standing = world.basePositionM[2]!;
    expect(call("body", "disableSmooth").status).toBe(0);
    tick(5000);
    expect(sim.state.body.enabledMask & 0x0fff).toBe(0);
    expect(world.fallen).toBe(false);
    expect(world.basePositionM[2]).toBeLessThan(standing / 2);
    expect(world.contactForceN[0]).toBeGreaterThan(5); // the body rests on the floor
  });

  it("is deterministic: the same seed and commands give bit-identical states", async () => {
    const run = async () => {
      const { sim, tick, call, world } = await physicsSim(3);
      call("body", "enableSmooth");
      tick(3000);
      for (let i = 0; i < 10; i++) {
        call("body", "setVelocity", [0.1, 0.05, 0.2, false]);
        tick(100);
      }
      return [...world.basePositionM, ...world.baseOrientationXyzw, ...sim.state.joints.positionRad, ...sim.state.imu.linearAccelerationMS2];
    };
    expect(await run()).toEqual(await run());
  });

  it("ticks without allocating (the firmware's 5 ms tick, MuJoCo's steps inside)", async () => {
    const { sim, tick, call } = await physicsSim();
    call("body", "enableSmooth");
    tick(4000);
    call("body", "setVelocity", [0.1, 0, 0, false]);
    // Time in a typed slot: a captured `let` double would be boxed by the test's own loop.
    const now = new Float64Array([10_000]);
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) {
        now[0]! += 5;
        sim.cycle(now[0]!);
      }
    };
    run(1000); // warm the JIT past its tier-ups
    expect(leastHeapAllocated(() => run(200), 10)).toBeLessThan(1024);
  });
});
