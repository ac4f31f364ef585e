/**
 * The simulated P7 arm (src/sim/p7/arm-sim.ts) on its own: motion within the speed limit,
 * errors that stop a joint, the thermal model, the IMU and gravity, determinism, fault hooks.
 * Time is simulated: every `step()` is 4 ms, no timing assertions.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GRAVITY_M_S2, P7_EFFORT_LIMIT_NM, P7_MAX_ACCEL_RAD_S2, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD, P7_STOP_DECEL_RAD_S2 } from "../../src/bodies/p7/joints.js";
import { P7_SIM_ERROR } from "../../src/sim/p7/constants.js";
import { P7Sim, type P7SimFrame } from "../../src/sim/p7/arm-sim.js";

const DT = 0.004;
const QUIET = { effortNoiseNm: 0, gyroNoiseRadS: 0, accelNoiseMS2: 0 };

function frame(sim: P7Sim): P7SimFrame {
  const f = sim.read();
  if (!f) throw new Error("link down");
  return f;
}

function norm(v: ArrayLike<number>): number {
  return Math.hypot(v[0]!, v[1]!, v[2]!);
}

const TARGET = [1.2, -1.0, -0.8, -1.5, 2.0, 0.6, -1.2];

describe("motion", () => {
  it("a move reaches its target by the estimated time, never faster than its speed limit, joints arriving together", () => {
    const sim = new P7Sim({ params: QUIET });
    const speed = 0.8;
    const etaS = sim.moveTo(TARGET, new Array(7).fill(speed));
    // The path parameter s ∈ [0, 1] cruises at min(speed/|Δq|) and accelerates at
    // min(accel/|Δq|) over the joints: joint 5 (2.0 rad) sets the speed, joints 1 and 4 the
    // acceleration; trapezoid time = 1/ṡ + ṡ/s̈.
    const sv = speed / 2.0;
    const sa = Math.min(...TARGET.map((t, i) => P7_MAX_ACCEL_RAD_S2[i]! / Math.abs(t)));
    expect(sa).toBeCloseTo(8 / 1.2, 12);
    expect(etaS).toBeCloseTo(1 / sv + sv / sa, 9);
    const steps = Math.ceil(etaS / DT) + 3;
    let maxSpeed = 0;
    const arrivedAt = new Array<number>(7).fill(-1);
    for (let s = 1; s <= steps; s++) {
      sim.step();
      const f = frame(sim);
      for (let i = 0; i < 7; i++) {
        maxSpeed = Math.max(maxSpeed, Math.abs(f.velocities[i]!));
        expect(Math.abs(f.velocities[i]!)).toBeLessThanOrEqual(speed + 1e-9);
        expect(f.angles[i]).toBeGreaterThanOrEqual(P7_MIN_RAD[i]! - 1e-12);
        expect(f.angles[i]).toBeLessThanOrEqual(P7_MAX_RAD[i]! + 1e-12);
        if (arrivedAt[i] < 0 && f.angles[i] === TARGET[i] && f.velocities[i] === 0) arrivedAt[i] = s;
      }
    }
    expect(maxSpeed).toBeCloseTo(speed, 6); // it does cruise at the limit
    expect(Array.from(frame(sim).angles)).toEqual(TARGET);
    expect(Array.from(frame(sim).velocities)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    for (const s of arrivedAt) expect(Math.abs(s * DT - etaS)).toBeLessThanOrEqual(3 * DT);
  });

  it("property: from rest, any move inside the limits at any allowed speed respects the speed and arrives", () => {
    const target = fc.tuple(...P7_MIN_RAD.map((lo, i) => fc.double({ min: lo, max: P7_MAX_RAD[i]!, noNaN: true })));
    fc.assert(
      fc.property(target, fc.double({ min: 0.3, max: 7, noNaN: true }), (t, speed) => {
        const sim = new P7Sim({ params: QUIET });
        const speeds = P7_MAX_SPEED_RAD_S.map((m) => Math.min(m, speed));
        const etaS = sim.moveTo(t, speeds);
        const steps = Math.ceil(etaS / DT) + 5;
        let worstSpeedExcess = Number.NEGATIVE_INFINITY;
        let worstEffortExcess = Number.NEGATIVE_INFINITY;
        for (let s = 0; s < steps; s++) {
          sim.step();
          const f = frame(sim);
          for (let i = 0; i < 7; i++) {
            worstSpeedExcess = Math.max(worstSpeedExcess, Math.abs(f.velocities[i]!) - speeds[i]!);
            worstEffortExcess = Math.max(worstEffortExcess, Math.abs(f.efforts[i]!) - P7_EFFORT_LIMIT_NM[i]!);
          }
        }
        expect(worstSpeedExcess).toBeLessThanOrEqual(1e-9);
        expect(worstEffortExcess).toBeLessThan(0); // the model never needs to saturate
        const f = frame(sim);
        for (let i = 0; i < 7; i++) expect(f.angles[i]).toBeCloseTo(t[i]!, 9);
      }),
      { numRuns: 25 },
    );
  });

  it("servo targets are tracked at the joint's maximum speed", () => {
    const sim = new P7Sim({ params: QUIET });
    sim.servo([0, -0.5, 0, 0, 0, 0, 0]);
    let peak = 0;
    for (let s = 0; s < 200; s++) {
      sim.step();
      peak = Math.max(peak, Math.abs(frame(sim).velocities[1]!));
      expect(Math.abs(frame(sim).velocities[1]!)).toBeLessThanOrEqual(P7_MAX_SPEED_RAD_S[1]! + 1e-9);
    }
    expect(frame(sim).angles[1]).toBe(-0.5);
    expect(peak).toBeGreaterThan(1); // faster than the π/3 move default: it is the servo cap
  });

  it("stopAll decelerates at the stop rate and holds where the arm came to rest", () => {
    const sim = new P7Sim({ params: QUIET });
    sim.moveTo([2.5, 0, 0, 0, 0, 0, 0], [3, 3, 3, 3, 3, 3, 3]);
    for (let s = 0; s < 150; s++) sim.step(); // cruising at 3 rad/s
    expect(frame(sim).velocities[0]).toBeCloseTo(3, 6);
    sim.stopAll();
    const stopSteps = Math.ceil(3 / (P7_STOP_DECEL_RAD_S2[0]! * DT));
    for (let s = 0; s < stopSteps; s++) sim.step();
    expect(frame(sim).velocities[0]).toBe(0);
    const held = frame(sim).angles[0]!;
    expect(held).toBeLessThan(2.5);
    for (let s = 0; s < 100; s++) sim.step();
    expect(frame(sim).angles[0]).toBe(held);
    expect(sim.atRest).toBe(true);
  });
});

describe("error ids", () => {
  it("a nonzero error id stops its joint (others go on), is reported until cleared, and the joint then holds", () => {
    const sim = new P7Sim({ params: QUIET });
    sim.moveTo([1, -1, 1, -1, 1, 0.5, 1], new Array(7).fill(1));
    for (let s = 0; s < 100; s++) sim.step();
    const code = 2 ** 19; // the latched bit field users saw on joint 7
    sim.injectError(6, code);
    expect(frame(sim).errorIds[6]).toBe(code); // reported at once
    for (let s = 0; s < 500; s++) sim.step();
    const f = frame(sim);
    expect(f.velocities[6]).toBe(0);
    expect(f.angles[6]).toBeLessThan(1); // stopped short of its target
    expect(f.angles[0]).toBeCloseTo(1, 9); // the others finished their move
    expect(Array.from(f.errorIds)).toEqual([0, 0, 0, 0, 0, 0, code]);
    // A new move does not move the faulted joint.
    const stuck = f.angles[6]!;
    sim.moveTo([0, 0, 0, 0, 0, 0, 0], new Array(7).fill(1));
    for (let s = 0; s < 800; s++) sim.step();
    expect(frame(sim).angles[6]).toBe(stuck);
    expect(frame(sim).errorIds[6]).toBe(code);
    expect(sim.clearError(6)).toEqual([6]);
    expect(frame(sim).errorIds[6]).toBe(0);
    for (let s = 0; s < 50; s++) sim.step();
    expect(frame(sim).angles[6]).toBe(stuck); // holds after clearing, no jump to an old target
    sim.moveTo([0, 0, 0, 0, 0, 0, 0], new Array(7).fill(1));
    for (let s = 0; s < 800; s++) sim.step();
    expect(frame(sim).angles[6]).toBe(0);
  });

  it("error ids above 32 bits are kept as the raw integer", () => {
    const sim = new P7Sim();
    const id = 2 ** 40 + 5;
    sim.injectError(0, id);
    expect(frame(sim).errorIds[0]).toBe(id);
    expect(() => sim.injectError(0, -1)).toThrow(RangeError);
    expect(() => sim.injectError(7, 1)).toThrow(RangeError);
    expect(() => sim.injectError(0, 1.5)).toThrow(RangeError);
  });
});

describe("thermal model", () => {
  it("temperatures follow load: a loaded shoulder settles near ambient + idle + rise·(effort/limit)²", () => {
    const params = { ...QUIET, thermalTimeConstantS: 2 };
    const loaded = new P7Sim({ params, initialAnglesRad: [0, -1.5, 0, 0, 0, 0, 0] });
    const idle = new P7Sim({ params });
    for (let s = 0; s < 5000; s++) {
      loaded.step();
      idle.step();
    }
    const lf = frame(loaded);
    const load = lf.efforts[1]! / P7_EFFORT_LIMIT_NM[1]!;
    const steady = 25 + 5 + 60 * load * load;
    expect(lf.temperatures[1]).toBeCloseTo(steady, 3);
    expect(frame(idle).temperatures[1]).toBeCloseTo(30, 3);
    expect(lf.temperatures[1]).toBeGreaterThan(frame(idle).temperatures[1]! + 2);
  });

  it("temperature rises with a first-order lag, not at once", () => {
    const sim = new P7Sim({ params: { ...QUIET, thermalTimeConstantS: 10 }, initialAnglesRad: [0, -1.5, 0, 0, 0, 0, 0] });
    const t0 = frame(sim).temperatures[1]!;
    for (let s = 0; s < 2500; s++) sim.step(); // one time constant
    const t1 = frame(sim).temperatures[1]!;
    const load = frame(sim).efforts[1]! / 70;
    const steady = 30 + 60 * load * load;
    expect((t1 - t0) / (steady - t0)).toBeCloseTo(1 - Math.exp(-1), 2);
  });

  it("over temperature latches the simulator's bit and stops the joint; clearing while hot re-latches", () => {
    const sim = new P7Sim({ params: { ...QUIET, thermalTimeConstantS: 1, riseAtLimitC: 5000 }, initialAnglesRad: [0, -1.5, 0, 0, 0, 0, 0] });
    sim.moveTo([0, -1.5, 0, -1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]);
    for (let s = 0; s < 2000; s++) sim.step();
    const f = frame(sim);
    expect(f.temperatures[1]).toBeGreaterThan(80);
    expect(f.errorIds[1]).toBe(P7_SIM_ERROR.overTemperature);
    expect(f.velocities[1]).toBe(0);
    sim.clearError(1);
    sim.step();
    expect(frame(sim).errorIds[1]).toBe(P7_SIM_ERROR.overTemperature);
  });
});

describe("IMU", () => {
  it("at rest upright it reads (0, 0, +g) in its own frame", () => {
    const sim = new P7Sim({ params: QUIET });
    for (let s = 0; s < 3; s++) sim.step();
    const a = frame(sim).linearAcceleration;
    expect(a[0]).toBeCloseTo(0, 9);
    expect(a[1]).toBeCloseTo(0, 9);
    expect(a[2]).toBeCloseTo(GRAVITY_M_S2, 9);
    expect(norm(frame(sim).angularVelocity)).toBe(0);
  });

  it("with the arm laid along −x (joint 2 at −π/2), gravity shows on the IMU's x axis", () => {
    const sim = new P7Sim({ params: QUIET, initialAnglesRad: [0, -Math.PI / 2, 0, 0, 0, 0, 0] });
    sim.step();
    const a = frame(sim).linearAcceleration;
    expect(a[0]).toBeCloseTo(GRAVITY_M_S2, 9);
    expect(a[1]).toBeCloseTo(0, 9);
    expect(a[2]).toBeCloseTo(0, 9);
  });

  it("property: at rest in any pose the IMU's acceleration has the norm of gravity", () => {
    const pose = fc.tuple(...P7_MIN_RAD.map((lo, i) => fc.double({ min: lo, max: P7_MAX_RAD[i]!, noNaN: true })));
    fc.assert(
      fc.property(pose, (q) => {
        const sim = new P7Sim({ params: QUIET, initialAnglesRad: q });
        sim.step();
        expect(norm(frame(sim).linearAcceleration)).toBeCloseTo(GRAVITY_M_S2, 9);
      }),
      { numRuns: 50 },
    );
  });

  it("with noise, the average over 100 readings still shows gravity", () => {
    const sim = new P7Sim({ seed: 3 });
    const sum = [0, 0, 0];
    for (let s = 0; s < 100; s++) {
      sim.step();
      const a = frame(sim).linearAcceleration;
      for (let c = 0; c < 3; c++) sum[c]! += a[c]! / 100;
    }
    expect(norm(sum)).toBeCloseTo(GRAVITY_M_S2, 2);
    expect(frame(sim).linearAcceleration[2]).not.toBe(GRAVITY_M_S2); // the noise is there
  });

  it("turning joint 1 upright shows as angular velocity about the IMU's z", () => {
    const sim = new P7Sim({ params: QUIET });
    sim.moveTo([2, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]);
    for (let s = 0; s < 250; s++) sim.step(); // cruising at 1 rad/s
    const w = frame(sim).angularVelocity;
    expect(w[2]).toBeCloseTo(1, 9);
    expect(Math.hypot(w[0]!, w[1]!)).toBeCloseTo(0, 9);
    // An upright arm spinning about its own axis: the IMU (on that axis) feels only gravity.
    expect(norm(frame(sim).linearAcceleration)).toBeCloseTo(GRAVITY_M_S2, 6);
  });
});

describe("determinism and fault hooks", () => {
  function run(seed: number): number[] {
    const sim = new P7Sim({ seed });
    sim.moveTo(TARGET, new Array(7).fill(1.5));
    const out: number[] = [];
    for (let s = 0; s < 300; s++) {
      sim.step();
      const f = frame(sim);
      out.push(...f.angles, ...f.efforts, ...f.temperatures, ...f.angularVelocity, ...f.linearAcceleration);
    }
    return out;
  }

  it("the same seed gives the same frames bit for bit; another seed differs", () => {
    const a = run(11);
    expect(run(11)).toEqual(a);
    expect(run(12)).not.toEqual(a);
  });

  it("advance() runs one step per 4 ms accumulated, carries the remainder, and caps catch-up", () => {
    const sim = new P7Sim();
    expect(sim.advance(0.003)).toBe(0);
    expect(sim.advance(0.001)).toBe(1);
    expect(sim.advance(0.01)).toBe(2);
    expect(sim.advance(0.002)).toBe(1); // 2 ms carried + 2 ms
    expect(sim.advance(10)).toBe(25);
    expect(sim.advance(0)).toBe(0);
    expect(sim.advance(Number.NaN)).toBe(0);
    expect(frame(sim).seq).toBe(29);
  });

  it("dropLink hides the frames and stops the arm; restoreLink brings them back, holding", () => {
    const sim = new P7Sim({ params: QUIET });
    sim.moveTo([2, 0, 0, 0, 0, 0, 0], [2, 2, 2, 2, 2, 2, 2]);
    for (let s = 0; s < 100; s++) sim.step();
    sim.dropLink();
    expect(sim.read()).toBeNull();
    for (let s = 0; s < 200; s++) sim.step();
    sim.restoreLink();
    const f = frame(sim);
    expect(f.velocities[0]).toBe(0);
    expect(f.angles[0]).toBeLessThan(2);
  });

  it("setReportedLengths changes the published lengths and back", () => {
    const sim = new P7Sim();
    sim.setReportedLengths({ joints: 6, motors: 0, imu: 4 });
    let f = frame(sim);
    expect([f.angles.length, f.velocities.length, f.efforts.length, f.temperatures.length, f.errorIds.length, f.linearAcceleration.length]).toEqual([6, 6, 6, 0, 0, 4]);
    sim.setReportedLengths({});
    f = frame(sim);
    expect([f.angles.length, f.temperatures.length, f.angularVelocity.length]).toEqual([7, 7, 3]);
    expect(() => sim.setReportedLengths({ joints: 9 })).toThrow(RangeError);
  });
});
