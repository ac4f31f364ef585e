import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GaitPlanner, STEP_HEIGHT_M } from "../../src/bodies/tny360/gait.js";
import { JOINT_MAX_RAD, JOINT_MIN_RAD, JOINTS } from "../../src/bodies/tny360/joints.js";
import {
  bodyIK,
  CALF_LENGTH_M,
  DEFAULT_BODY_HEIGHT_M,
  DEFAULT_FEET_M,
  eulerXYZ,
  footInPlanner,
  HIP_OFFSET_M,
  IK_LIMIT_TOLERANCE_RAD,
  IkStatus,
  legFK,
  legIK,
  rotationXYZ,
  THIGH_LENGTH_M,
} from "../../src/bodies/tny360/kinematics.js";
import { REST_POSE_RAD, STAND_POSE_RAD } from "../../src/bodies/tny360/poses.js";
import { angleToDutyMs, angleToFeedbackV, defaultCalibration, feedbackVToAngle } from "../../src/bodies/tny360/units.js";
import { GaitType } from "../../src/wire/tny/constants.js";

const DEG = Math.PI / 180;
const angle = (min: number, max: number) => fc.double({ min, max, noNaN: true });
const dist = (a: Float64Array, b: Float64Array) => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

describe("TNY-360 joints and poses", () => {
  it("has the firmware's 14 joints with the §8 limits", () => {
    expect(JOINTS.map((j) => j.name)).toEqual([
      "FrontLeftHipRoll",
      "FrontLeftHipPitch",
      "FrontLeftKneePitch",
      "BackLeftHipRoll",
      "BackLeftHipPitch",
      "BackLeftKneePitch",
      "BackRightHipRoll",
      "BackRightHipPitch",
      "BackRightKneePitch",
      "FrontRightHipRoll",
      "FrontRightHipPitch",
      "FrontRightKneePitch",
      "EarLeft",
      "EarRight",
    ]);
    expect(JOINT_MIN_RAD[1]).toBeCloseTo(-135 * DEG, 12);
    expect(JOINT_MAX_RAD[2]).toBeCloseTo(150 * DEG, 12);
    expect(JOINT_MAX_RAD[12]).toBeCloseTo(Math.PI, 12);
    expect(JOINTS.filter((j) => j.inverted).map((j) => j.id)).toEqual([1, 3, 4, 8, 9, 11, 12]);
  });

  it("REST and STAND are the same per leg", () => {
    expect(Array.from(REST_POSE_RAD.subarray(0, 3), (v) => Math.round(v / DEG))).toEqual([0, -60, 150]);
    expect(Array.from(STAND_POSE_RAD.subarray(9, 12), (v) => Math.round(v / DEG))).toEqual([5, -50, 100]);
  });

  it("servo mapping: ratio with inversion, duty range and feedback round trip", () => {
    const cal = defaultCalibration(0);
    expect(angleToDutyMs(0, -45 * DEG, cal)).toBeCloseTo(0.5, 12);
    expect(angleToDutyMs(0, 45 * DEG, cal)).toBeCloseTo(2.5, 12);
    expect(angleToDutyMs(1, -135 * DEG, defaultCalibration(1))).toBeCloseTo(2.5, 12); // inverted
    for (const id of [0, 1, 8, 11]) {
      const c = defaultCalibration(id);
      expect(feedbackVToAngle(id, angleToFeedbackV(id, 0.3, c), c)).toBeCloseTo(0.3, 9);
    }
    expect(defaultCalibration(12).dcMinMs).toBe(1.0);
  });
});

describe("TNY-360 leg kinematics (§10.3)", () => {
  it("IK of the default stance foot is close to STAND", () => {
    // FL default foot (0.09, 0.10, 0) under a 0.12 m body, relative to the hip, y negated
    const out = new Float64Array(3);
    expect(legIK(Float64Array.of(0.09 - 0.086, -(0.1 - 0.052), -0.12), out)).toBe(IkStatus.Ok);
    expect(out[0]! / DEG).toBeCloseTo(6.54, 1);
    expect(out[1]! / DEG).toBeCloseTo(-49.6, 1);
    expect(out[2]! / DEG).toBeCloseTo(102.8, 1);
  });

  it("property: FK(IK(target)) is within 1e-6 m over the reachable workspace", () => {
    const target = new Float64Array(3);
    const solved = new Float64Array(3);
    const back = new Float64Array(3);
    fc.assert(
      fc.property(angle(-45 * DEG, 45 * DEG), angle(-135 * DEG, 45 * DEG), angle(0, 150 * DEG), (roll, pitch, knee) => {
        // reachable workspace = FK of in-limit angles with the foot below the hip in the leg plane
        const down = THIGH_LENGTH_M * Math.cos(pitch) + CALF_LENGTH_M * Math.cos(pitch + knee);
        fc.pre(down > 1e-4);
        legFK(roll, pitch, knee, target);
        expect(legIK(target, solved)).toBe(IkStatus.Ok);
        legFK(solved[0]!, solved[1]!, solved[2]!, back);
        expect(dist(target, back)).toBeLessThan(1e-6);
        expect(Math.abs(solved[0]! - roll) + Math.abs(solved[1]! - pitch) + Math.abs(solved[2]! - knee)).toBeLessThan(1e-6);
      }),
      { numRuns: 3000 },
    );
  });

  it("solves a reachable target at a limit despite the knee's rounding near full extension (was refused by a 1e-9 rad tolerance)", () => {
    // fast-check seed 284116571 found it: knee 4.4e-9 rad comes back from acos slightly past its 0 limit.
    const target = new Float64Array(3);
    const out = new Float64Array(3);
    legFK(0, 1.2e-9, 4.4e-9, target);
    expect(legIK(target, out)).toBe(IkStatus.Ok);
    expect(out[2]).toBeGreaterThanOrEqual(JOINT_MIN_RAD[2]!); // clamped onto the limit, never past it
    expect(Math.abs(out[1]! - 1.2e-9) + Math.abs(out[2]! - 4.4e-9)).toBeLessThan(1e-6);
  });

  it("a pose past a limit by more than the tolerance is refused; within it, the angle is the limit itself", () => {
    const target = new Float64Array(3);
    const out = new Float64Array(3);
    const maxPitch = JOINT_MAX_RAD[1]!;
    legFK(0.1, maxPitch + 10 * IK_LIMIT_TOLERANCE_RAD, 1.2, target);
    expect(legIK(target, out)).toBe(IkStatus.JointLimits);
    legFK(0.1, maxPitch + IK_LIMIT_TOLERANCE_RAD / 2, 1.2, target);
    expect(legIK(target, out)).toBe(IkStatus.Ok);
    expect(out[1]).toBe(maxPitch);
  });

  it("property: any target is either solved exactly within the limits or refused, never NaN", () => {
    const target = new Float64Array(3);
    const out = new Float64Array(3);
    const back = new Float64Array(3);
    const coord = fc.oneof(
      { weight: 10, arbitrary: fc.double({ min: -0.3, max: 0.3, noNaN: true }) },
      { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0, HIP_OFFSET_M, -HIP_OFFSET_M, 0.2, -0.2) },
    );
    fc.assert(
      fc.property(coord, coord, coord, (x, y, z) => {
        out.fill(7);
        target.set([x, y, z]);
        const st = legIK(target, out);
        if (st === IkStatus.Ok) {
          expect(out.every(Number.isFinite)).toBe(true);
          expect(out[0]).toBeGreaterThanOrEqual(-45 * DEG - 1e-9);
          expect(out[2]).toBeLessThanOrEqual(150 * DEG + 1e-9);
          legFK(out[0]!, out[1]!, out[2]!, back);
          expect(Math.hypot(back[0]! - x, back[1]! - y, back[2]! - z)).toBeLessThan(1e-6);
        } else {
          expect(Array.from(out)).toEqual([7, 7, 7]); // untouched: no NaN leaks out
        }
      }),
      { numRuns: 5000 },
    );
  });

  it("names why a target is refused", () => {
    const out = new Float64Array(3);
    const xyz = (x: number, y: number, z: number) => Float64Array.of(x, y, z);
    expect(legIK(xyz(0, -0.01, -0.01), out)).toBe(IkStatus.InsideHipOffset); // y² + z² < h²: sqrt of a negative upstream
    expect(legIK(xyz(0.25, -HIP_OFFSET_M, -0.1), out)).toBe(IkStatus.OutOfReach);
    expect(legIK(xyz(0, -HIP_OFFSET_M, -0.21), out)).toBe(IkStatus.OutOfReach);
    expect(legIK(xyz(Number.NaN, 0, -0.1), out)).toBe(IkStatus.NonFinite);
    expect(legIK(xyz(0, -HIP_OFFSET_M, 0), out)).toBe(IkStatus.AtHip);
    expect(legIK(xyz(0, 0.15, -0.05), out)).toBe(IkStatus.JointLimits); // needs a roll far beyond 45°
    expect(legIK(xyz(0, 0.15, -0.05), out, 0, false)).toBe(IkStatus.Ok);
  });
});

describe("TNY-360 body IK (§10.2)", () => {
  it("default posture and feet give a stance near STAND on all four legs", () => {
    const angles = new Float64Array(12);
    const status = new Uint8Array(4);
    expect(bodyIK(Float64Array.of(0, 0, DEFAULT_BODY_HEIGHT_M, 0, 0, 0), DEFAULT_FEET_M, angles, status)).toBe(0);
    for (let i = 0; i < 12; i++) expect(Math.abs(angles[i]! - STAND_POSE_RAD[i]!)).toBeLessThan(4 * DEG);
  });

  it("property: body IK then FK puts every foot back on its planner-frame target", () => {
    const arbPosture = fc.tuple(angle(-0.03, 0.03), angle(-0.03, 0.03), angle(0.08, 0.15), angle(-0.2, 0.2), angle(-0.2, 0.2), angle(-0.3, 0.3));
    const arbFeet = fc.array(angle(-0.03, 0.03), { minLength: 12, maxLength: 12 });
    const angles = new Float64Array(12);
    const status = new Uint8Array(4);
    const rot = new Float64Array(9);
    const p = new Float64Array(3);
    let solved = 0;
    let legs = 0;
    fc.assert(
      fc.property(arbPosture, arbFeet, (posture, jitter) => {
        const feet = DEFAULT_FEET_M.map((v, i) => v + jitter[i]! * (i % 3 === 2 ? 0.5 : 1));
        bodyIK(Float64Array.from(posture), feet, angles, status);
        rotationXYZ(posture[3], posture[4], posture[5], rot);
        for (let leg = 0; leg < 4; leg++) {
          legs++;
          if (status[leg] !== IkStatus.Ok) continue;
          solved++;
          footInPlanner(leg, angles[leg * 3]!, angles[leg * 3 + 1]!, angles[leg * 3 + 2]!, rot, posture[0], posture[1], posture[2], p);
          expect(Math.hypot(p[0]! - feet[leg * 3]!, p[1]! - feet[leg * 3 + 1]!, p[2]! - feet[leg * 3 + 2]!)).toBeLessThan(1e-6);
        }
      }),
      { numRuns: 1000 },
    );
    expect(solved / legs).toBeGreaterThan(0.9); // the sampled postures are mostly reachable
  });

  it("Euler XYZ round-trips through the rotation matrix", () => {
    const m = new Float64Array(9);
    const e = new Float64Array(3);
    fc.assert(
      fc.property(angle(-3, 3), angle(-1.5, 1.5), angle(-3, 3), (rx, ry, rz) => {
        rotationXYZ(rx, ry, rz, m);
        eulerXYZ(m, e);
        expect(e[0]).toBeCloseTo(rx, 9);
        expect(e[1]).toBeCloseTo(ry, 9);
        expect(e[2]).toBeCloseTo(rz, 9);
      }),
    );
  });
});

describe("TNY-360 gait planner (§10.4)", () => {
  const dt = 0.005;

  it("is idle and planted with a zero command", () => {
    const g = new GaitPlanner();
    for (let i = 0; i < 100; i++) g.step(dt, 0, 0, 0);
    expect(g.active).toBe(false);
    expect(Array.from(g.feet)).toEqual(Array.from(DEFAULT_FEET_M));
  });

  it("Walk: diagonal pairs FL+BR and BL+FR swing half a cycle apart; stance feet move at −v; swing peaks at 0.02 m", () => {
    const g = new GaitPlanner();
    const v = 0.2;
    let maxZ = 0;
    const prev = new Float64Array(12);
    for (let i = 0; i < 400; i++) {
      prev.set(g.feet);
      const wasStance = Array.from(g.stance);
      g.step(dt, v, 0, 0);
      expect(g.stance[0]).toBe(g.stance[2]);
      expect(g.stance[1]).toBe(g.stance[3]);
      for (let leg = 0; leg < 4; leg++) {
        maxZ = Math.max(maxZ, g.feet[leg * 3 + 2]!);
        if (g.stance[leg] && wasStance[leg]) expect((g.feet[leg * 3]! - prev[leg * 3]!) / dt).toBeCloseTo(-v, 9);
      }
    }
    expect(maxZ).toBeGreaterThan(STEP_HEIGHT_M * 0.99);
    expect(maxZ).toBeLessThanOrEqual(STEP_HEIGHT_M);
  });

  it("stance is centred on the default foot", () => {
    const g = new GaitPlanner();
    const xs: number[] = [];
    for (let i = 0; i < 400; i++) {
      g.step(dt, 0.2, 0, 0);
      if (i > 200 && g.stance[0]) xs.push(g.feet[0]! - DEFAULT_FEET_M[0]!);
    }
    expect(Math.max(...xs)).toBeCloseTo(0.03, 2);
    expect(Math.min(...xs)).toBeCloseTo(-0.03, 2);
  });

  it("yaw adds (−ω·y, +ω·x) to each leg's velocity", () => {
    const g = new GaitPlanner();
    const w = 1;
    g.step(dt, 0, 0, w); // all legs in stance at phase 0
    const prev = Float64Array.from(g.feet);
    g.step(dt, 0, 0, w);
    expect((g.feet[0]! - prev[0]!) / dt).toBeCloseTo(w * DEFAULT_FEET_M[1]!, 9); // −(−ω·y)
    expect((g.feet[1]! - prev[1]!) / dt).toBeCloseTo(-w * DEFAULT_FEET_M[0]!, 9); // −(+ω·x)
  });

  it("Creep and Run use their phase offsets", () => {
    const swingOrder = (gait: number): number[] => {
      const g = new GaitPlanner();
      g.gait = gait;
      const first: number[] = [-1, -1, -1, -1];
      for (let i = 0; i < 200; i++) {
        g.step(dt, 0.1, 0, 0);
        for (let leg = 0; leg < 4; leg++) if (!g.stance[leg] && first[leg] === -1) first[leg] = i;
      }
      return first;
    };
    const creep = swingOrder(GaitType.Creep); // offsets 0, .5, .25, .75: swing starts at phase (0.6 − offset) mod 1
    expect(creep[3]).toBeLessThan(creep[1]!);
    expect(creep[1]).toBeLessThan(creep[2]!);
    expect(creep[2]).toBeLessThan(creep[0]!);
    const run = swingOrder(GaitType.Run); // FL+FR together, BL+BR together
    expect(run[0]).toBe(run[3]);
    expect(run[1]).toBe(run[2]);
    expect(run[0]).not.toBe(run[1]);
  });

  it("after the velocity drops to zero, each foot swings back to its default and the planner stops within one cycle", () => {
    const g = new GaitPlanner();
    for (let i = 0; i < 157; i++) g.step(dt, 0.2, 0.05, 0.3);
    let steps = 0;
    const planted = Float64Array.from(g.feet);
    while (g.active && steps < 1000) {
      const before = Float64Array.from(g.feet);
      const stanceBefore = Array.from(g.stance);
      g.step(dt, 0, 0, 0);
      // feet planted before and after the tick do not slide
      for (let leg = 0; leg < 4; leg++) {
        if (stanceBefore[leg] && g.stance[leg] && g.active) {
          expect(g.feet[leg * 3]).toBe(before[leg * 3]);
          expect(g.feet[leg * 3 + 1]).toBe(before[leg * 3 + 1]);
        }
      }
      steps++;
    }
    expect(planted.some((v, i) => Math.abs(v - DEFAULT_FEET_M[i]!) > 1e-3)).toBe(true);
    expect(steps * dt).toBeLessThanOrEqual(0.5 + dt);
    expect(Array.from(g.feet)).toEqual(Array.from(DEFAULT_FEET_M));
  });
});
