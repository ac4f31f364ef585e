/**
 * The shared gait planner and leg IK take their per-call numbers in typed-array slots (so the
 * simulator's tick allocates nothing; see gait.ts and kinematics.ts). Pinned here:
 * - bit for bit, they compute what they computed before, with the old signatures, on a seeded
 *   workload (kinematics-digest.ts);
 * - the slot API and the argument wrapper give the same bits for any input;
 * - body IK's contract holds for any input: solved legs land on their targets within the limits,
 *   refused legs keep their previous angles.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GaitPlanner } from "../../src/bodies/tny360/gait.js";
import { JOINT_MAX_RAD, JOINT_MIN_RAD } from "../../src/bodies/tny360/joints.js";
import { bodyIK, DEFAULT_FEET_M, footInPlanner, IkStatus, legIK, rotationXYZ } from "../../src/bodies/tny360/kinematics.js";
import { kinematicsDigest } from "./kinematics-digest.js";

const num = (min: number, max: number) => fc.double({ min, max, noNaN: true });
const special = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1e-300);

/** Element-wise `Object.is`, so −0 vs 0 and NaN count (expect only on a mismatch: called per step). */
function sameBits(a: ArrayLike<number>, b: ArrayLike<number>, what: string): void {
  if (a.length !== b.length) expect.fail(`${what}: length ${a.length} vs ${b.length}`);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) expect.fail(`${what}[${i}]: ${a[i]} vs ${b[i]}`);
}

describe("TNY-360 kinematics with slot inputs", () => {
  it("give, bit for bit, the outputs recorded from the shared code before it took slots", () => {
    const d = kinematicsDigest({
      newPlanner: () => {
        // through the slots, as the simulator's tick drives it
        const p = new GaitPlanner();
        return {
          get gait() {
            return p.gait;
          },
          set gait(g: number) {
            p.gait = g;
          },
          feet: p.feet,
          stance: p.stance,
          get phase() {
            return p.phase;
          },
          get active() {
            return p.active;
          },
          step(dtS: number, vx: number, vy: number, wz: number) {
            p.input.set([dtS, vx, vy, wz]);
            p.advance();
          },
          reset: () => p.reset(),
        };
      },
      bodyIK,
      legIK,
    });
    // recorded from GaitPlanner.step, bodyIK and legIK(x, y, z, out, at, checkLimits) at commit
    // 168b4cf (unchanged since e1a76dc), with the same workload; the same with --jitless
    expect(d.digest).toBe("17a312cae5c460");
    // the workload reaches every branch: swings, and every IK outcome
    expect(d.plannerSteps).toBe(33380);
    expect(d.swingSteps).toBe(23924);
    expect(d.statusCounts).toEqual([4782, 1076, 681, 10856, 8, 4615]);
  });

  it("property: advance() with the input slots = step(dtS, vx, vy, wz), bit for bit, after every step", () => {
    const v = fc.oneof(num(-1, 1), fc.constant(0), fc.constant(-0));
    const cmd = fc.record({
      dtS: fc.oneof(fc.constant(0.005), num(0, 0.05)),
      vx: v,
      vy: v,
      wz: fc.oneof(num(-4, 4), fc.constant(0)),
      gait: fc.constantFrom(0, 1, 2, 7),
      steps: fc.integer({ min: 1, max: 150 }),
    });
    fc.assert(
      fc.property(fc.array(cmd, { minLength: 1, maxLength: 8 }), (cmds) => {
        const wrapped = new GaitPlanner();
        const slots = new GaitPlanner();
        for (const c of cmds) {
          wrapped.gait = c.gait;
          slots.gait = c.gait;
          for (let k = 0; k < c.steps; k++) {
            wrapped.step(c.dtS, c.vx, c.vy, c.wz);
            slots.input[0] = c.dtS;
            slots.input[1] = c.vx;
            slots.input[2] = c.vy;
            slots.input[3] = c.wz;
            slots.advance();
            sameBits(slots.feet, wrapped.feet, "feet");
            sameBits(slots.stance, wrapped.stance, "stance");
            sameBits(slots.input, wrapped.input, "input");
            if (!Object.is(slots.phase, wrapped.phase) || slots.active !== wrapped.active) expect.fail(`phase ${slots.phase} vs ${wrapped.phase}, active ${slots.active} vs ${wrapped.active}`);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("property: leg IK solving in place (out = target) gives the same status and angles", () => {
    const coord = fc.oneof({ weight: 10, arbitrary: num(-0.25, 0.25) }, { weight: 1, arbitrary: special });
    fc.assert(
      fc.property(coord, coord, coord, fc.boolean(), (x, y, z, checkLimits) => {
        const target = Float64Array.of(x, y, z);
        const apart = new Float64Array(3).fill(7);
        const st = legIK(target, apart, 0, checkLimits);
        const inPlace = Float64Array.of(x, y, z);
        expect(legIK(inPlace, inPlace, 0, checkLimits)).toBe(st);
        sameBits(inPlace, st === IkStatus.Ok ? apart : target, "angles");
      }),
      { numRuns: 3000 },
    );
  });

  it("property: body IK on any posture and feet: solved legs reach their targets within the limits, refused legs keep their angles", () => {
    const coord = fc.oneof({ weight: 20, arbitrary: num(-0.25, 0.25) }, { weight: 1, arbitrary: special });
    const posture = fc.tuple(num(-0.1, 0.1), num(-0.1, 0.1), fc.oneof(num(0.02, 0.25), special), num(-0.8, 0.8), num(-0.8, 0.8), num(-0.8, 0.8));
    const prev = fc.array(num(-3, 3), { minLength: 12, maxLength: 12 });
    const near = fc.array(num(-0.06, 0.06), { minLength: 12, maxLength: 12 }).map((j) => DEFAULT_FEET_M.map((v, i) => v + j[i]!));
    const far = fc.array(coord, { minLength: 12, maxLength: 12 }).map((f) => Float64Array.from(f));
    const rot = new Float64Array(9);
    const back = new Float64Array(3);
    let okLegs = 0;
    let refusedLegs = 0;
    fc.assert(
      fc.property(posture, fc.oneof(near, far), prev, (p, feet, before) => {
        const post = Float64Array.from(p);
        const angles = Float64Array.from(before);
        const status = new Uint8Array(4).fill(0xff);
        const refused = bodyIK(post, feet, angles, status);
        expect(refused).toBe(status.filter((s) => s !== IkStatus.Ok).length);
        rotationXYZ(post[3]!, post[4]!, post[5]!, rot);
        for (let leg = 0; leg < 4; leg++) {
          const at = leg * 3;
          if (status[leg] === IkStatus.Ok) {
            okLegs++;
            for (let k = 0; k < 3; k++) {
              const a = angles[at + k]!;
              if (!(a >= JOINT_MIN_RAD[at + k]! - 1e-9 && a <= JOINT_MAX_RAD[at + k]! + 1e-9)) expect.fail(`leg ${leg} joint ${k}: ${a} outside the limits`);
            }
            footInPlanner(leg, angles[at]!, angles[at + 1]!, angles[at + 2]!, rot, post[0]!, post[1]!, post[2]!, back);
            const miss = Math.hypot(back[0]! - feet[at]!, back[1]! - feet[at + 1]!, back[2]! - feet[at + 2]!);
            if (!(miss < 1e-6)) expect.fail(`leg ${leg}: FK(IK) misses its target by ${miss} m`);
          } else {
            refusedLegs++;
            expect(status[leg]).toBeLessThanOrEqual(IkStatus.JointLimits);
            sameBits(angles.subarray(at, at + 3), before.slice(at, at + 3), `refused leg ${leg} angles`);
          }
        }
      }),
      { numRuns: 3000 },
    );
    // both branches were exercised
    expect(okLegs).toBeGreaterThan(1000);
    expect(refusedLegs).toBeGreaterThan(1000);
  });
});
