/**
 * The simulator's slot-based gait planner and body IK (src/sim/tny360/tick-kinematics.ts) are
 * copies of the shared ones made for allocation-free ticks: they must give bit-identical results
 * (every output element, refusals included) for any input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GaitPlanner } from "../../src/bodies/tny360/gait.js";
import { bodyIK, DEFAULT_BODY_HEIGHT_M, DEFAULT_FEET_M } from "../../src/bodies/tny360/kinematics.js";
import { TickGaitPlanner, tickBodyIK } from "../../src/sim/tny360/tick-kinematics.js";

const num = (min: number, max: number) => fc.double({ min, max, noNaN: true });

/** Element-wise `Object.is`, so −0 vs 0 and NaN count (expect only on a mismatch: called per step). */
function sameBits(a: ArrayLike<number>, b: ArrayLike<number>, what: string): void {
  if (a.length !== b.length) expect.fail(`${what}: length ${a.length} vs ${b.length}`);
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) expect.fail(`${what}[${i}]: ${a[i]} vs ${b[i]}`);
}

describe("sim tick kinematics = shared kinematics, bit for bit", () => {
  it("property: body IK gives the same angles, statuses and refusal count, from the same previous angles", () => {
    const special = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 0, 1e-300);
    const coord = fc.oneof({ weight: 20, arbitrary: num(-0.25, 0.25) }, { weight: 1, arbitrary: special });
    const posture = fc.tuple(num(-0.1, 0.1), num(-0.1, 0.1), fc.oneof(num(0.02, 0.25), special), num(-0.8, 0.8), num(-0.8, 0.8), num(-0.8, 0.8));
    const prev = fc.array(num(-3, 3), { minLength: 12, maxLength: 12 });
    const near = fc.array(num(-0.06, 0.06), { minLength: 12, maxLength: 12 });
    const far = fc.array(coord, { minLength: 12, maxLength: 12 });
    let okLegs = 0;
    let refusedLegs = 0;
    fc.assert(
      fc.property(posture, fc.oneof(near.map((j) => DEFAULT_FEET_M.map((v, i) => v + j[i]!)), far.map((f) => Float64Array.from(f))), prev, (p, feet, before) => {
        const post = Float64Array.from(p);
        const a = Float64Array.from(before), b = Float64Array.from(before);
        const sa = new Uint8Array(4), sb = new Uint8Array(4);
        const ra = bodyIK(post, feet, a, sa);
        const rb = tickBodyIK(post, feet, b, sb);
        expect(rb).toBe(ra);
        sameBits(sb, sa, "status");
        sameBits(b, a, "angles");
        refusedLegs += ra;
        okLegs += 4 - ra;
      }),
      { numRuns: 3000 },
    );
    // both branches were exercised
    expect(okLegs).toBeGreaterThan(1000);
    expect(refusedLegs).toBeGreaterThan(1000);
  });

  it("default posture: solved, same as the shared IK", () => {
    const post = Float64Array.from([0, 0, DEFAULT_BODY_HEIGHT_M, 0, 0, 0]);
    const a = new Float64Array(12), b = new Float64Array(12);
    const s = new Uint8Array(4);
    expect(bodyIK(post, DEFAULT_FEET_M, a, s)).toBe(0);
    expect(tickBodyIK(post, DEFAULT_FEET_M, b, s)).toBe(0);
    sameBits(b, a, "angles");
  });

  it("property: the planner gives the same feet, stance, phase and activity after every step of any command sequence", () => {
    const v = fc.oneof(num(-1, 1), fc.constant(0));
    const cmd = fc.record({ dtS: fc.oneof(fc.constant(0.005), num(0, 0.05)), vx: v, vy: v, wz: fc.oneof(num(-4, 4), fc.constant(0)), gait: fc.constantFrom(0, 1, 2, 7), steps: fc.integer({ min: 1, max: 150 }) });
    fc.assert(
      fc.property(fc.array(cmd, { minLength: 1, maxLength: 8 }), (cmds) => {
        const shared = new GaitPlanner();
        const tick = new TickGaitPlanner();
        for (const c of cmds) {
          shared.gait = c.gait;
          tick.gait = c.gait;
          for (let k = 0; k < c.steps; k++) {
            shared.step(c.dtS, c.vx, c.vy, c.wz);
            tick.input.set([c.dtS, c.vx, c.vy, c.wz]);
            tick.advance();
            sameBits(tick.feet, shared.feet, "feet");
            sameBits(tick.stance, shared.stance, "stance");
            if (!Object.is(tick.phase, shared.phase) || tick.active !== shared.active) expect.fail(`phase ${tick.phase} vs ${shared.phase}, active ${tick.active} vs ${shared.active}`);
          }
        }
        // a zero command settles both the same way
        for (let k = 0; k < 200; k++) {
          shared.step(0.005, 0, 0, 0);
          tick.step(0.005, 0, 0, 0);
        }
        sameBits(tick.feet, shared.feet, "feet after stopping");
        expect(tick.active).toBe(shared.active);
        shared.reset();
        tick.reset();
        sameBits(tick.feet, shared.feet, "feet after reset");
        expect(tick.phase).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
