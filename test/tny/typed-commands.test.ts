/**
 * The TNY-360's typed command path: one validation on typed values (runtime/tny360-checks.ts) that
 * accepts exactly what the wire's strict codec accepts (cross-checked against encode → strict
 * decode, the old way of validating), the driver taking the command in `write` and filling the
 * state it is given in `read`, and the merge rules of the command record.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeJointAngle, mergeTny360Commands, mergeVelocity, openTny360Merge, Tny360Commands, tny360Keys } from "../../src/bodies/tny360/commands.js";
import { TNY360_COMMAND_HEADER as H, TNY360_COMMAND_KEY as KEY } from "../../src/bodies/tny360/layout.js";
import { copyTny360State, snapshotTny360State, Tny360State } from "../../src/bodies/tny360/state.js";
import { TnySimDriver } from "../../src/drivers/tny360/driver.js";
import { IO } from "../../src/drivers/driver.js";
import { SimClock } from "../../src/runtime/clock.js";
import { TNY360_CHECKS, TNY_TYPED, type TnySpec } from "../../src/runtime/tny360-checks.js";
import { JOINT_COUNT } from "../../src/wire/tny/constants.js";
import { decodeArgs } from "../../src/wire/tny/decode.js";
import { encodeRequest } from "../../src/wire/tny/encode.js";

/** What the wire's strict codec says of `args`: encoded, then decoded strictly. */
function wireAccepts(spec: TnySpec, args: unknown[]): boolean {
  try {
    decodeArgs(spec.action.args, encodeRequest(0, spec.module, spec.action, args).subarray(8));
    return true;
  } catch {
    return false;
  }
}

/** Numbers a client may send: ordinary, named edges, beyond float32, not integers. */
const anyNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, 1, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 3.4e38, 3.5e38, -3.5e38, 1e-46, 2 ** 32, 2 ** 32 - 1, 0x3fff, 0x4000, 255, 256),
  fc.integer({ min: -10, max: 70_000 }),
);

describe("TNY-360 typed checks: exactly what the wire's strict codec accepts", () => {
  it("velocity, posture: finite float32 values", () => {
    fc.assert(
      fc.property(anyNumber, anyNumber, anyNumber, fc.boolean(), (x, y, z, clear) => {
        expect(TNY360_CHECKS.velocity(x, y, z, clear).problem === null).toBe(wireAccepts(TNY_TYPED.setVelocity, [x, y, z, clear]));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.array(anyNumber, { minLength: 6, maxLength: 6 }), (v) => {
        const p = { xM: v[0]!, yM: v[1]!, zM: v[2]!, rxRad: v[3]!, ryRad: v[4]!, rzRad: v[5]! };
        expect(TNY360_CHECKS.posture(p, true).problem === null).toBe(wireAccepts(TNY_TYPED.setPosture, [...v, true]));
      }),
      { numRuns: 300 },
    );
  });

  it("enable bits, gait, joint id: integers within the table's range", () => {
    fc.assert(
      fc.property(anyNumber, anyNumber, anyNumber, (mask, gait, id) => {
        expect(TNY360_CHECKS.enabledMask(mask).problem === null).toBe(Number.isInteger(mask) && wireAccepts(TNY_TYPED.setEnabled, [mask]));
        expect(TNY360_CHECKS.gait(gait).problem === null).toBe(Number.isInteger(gait) && wireAccepts(TNY_TYPED.setGait, [gait]));
        expect(TNY360_CHECKS.jointAngle(id, 0.1).problem === null).toBe(Number.isInteger(id) && wireAccepts(TNY_TYPED.setAngle, [id, 0.1]));
      }),
      { numRuns: 500 },
    );
  });

  it("joint angles: 14 finite float32 values, any other length refused with the reason", () => {
    fc.assert(
      fc.property(fc.array(anyNumber, { minLength: 0, maxLength: 16 }), (a) => {
        const ok = TNY360_CHECKS.jointAngles(a).problem === null;
        expect(ok).toBe(a.length === JOINT_COUNT && wireAccepts(TNY_TYPED.setJointAngles, [Float32Array.from(a)]) && a.every((v) => Number.isFinite(Math.fround(v))));
      }),
      { numRuns: 300 },
    );
    expect(TNY360_CHECKS.jointAngles([0, 0, 0]).problem).toMatch(/14 angles, found 3/);
    expect(TNY360_CHECKS.velocity(Number.NaN, 0, 0, true).problem).toMatch(/^x: a finite float32, found NaN$/);
  });

  it("the simulator's limits are judged on the float32 value the body gets", () => {
    expect(TNY360_CHECKS.velocity(1.00000001, 0, 0, true).limits()).toBe(true); // float32(1.00000001) = 1
    expect(TNY360_CHECKS.velocity(1.0001, 0, 0, true).limits()).toBe(false);
    expect(TNY360_CHECKS.jointAngle(2, 3.5).limits()).toBe(false); // the knee stops at 150°
  });
});

describe("TnySimDriver: the command in write, the state through read's argument", () => {
  it("write applies the command's keys, clears them and ticks; read fills the state it is given", () => {
    const clock = new SimClock();
    const d = new TnySimDriver({ clock });
    const mine = new Tny360State("sim");
    expect(d.read(0, mine)).toBe(IO.Fresh); // the booted simulator's state
    expect(mine.valid).toBe(true);
    expect(d.read(0, mine)).toBe(IO.None);
    const c = new Tny360Commands();
    openTny360Merge(c, 1);
    mergeVelocity(c, 0.2, 0, 0.1, true);
    for (let t = 5; t <= 200; t += 5) {
      clock.set(t);
      expect(d.write(t, c)).toBe(IO.Sent);
      expect(tny360Keys(c)).toBe(0); // applied once
      d.read(t, mine);
    }
    expect(mine.body.targetVelocity[0]).toBeCloseTo(0.2, 6);
    expect(mine.body.targetVelocity[2]).toBeCloseTo(0.1, 6);
    expect(snapshotTny360State(mine)).toEqual(snapshotTny360State(d.sim.state));
  });

  it("copyTny360State copies every value (the snapshot of the copy equals the original's)", () => {
    const d = new TnySimDriver({ clock: new SimClock() });
    for (let t = 5; t < 100; t += 5) d.write(t, new Tny360Commands());
    const to = new Tny360State("sim");
    copyTny360State(d.sim.state, to);
    expect(snapshotTny360State(to)).toEqual(snapshotTny360State(d.sim.state));
  });
});

describe("Tny360Commands merge", () => {
  it("a velocity that clears the overrides drops those merged before it; a later override stays; the clear stays set", () => {
    const c = new Tny360Commands();
    openTny360Merge(c, 3);
    mergeJointAngle(c, 1, 0.4);
    mergeVelocity(c, 0.1, 0, 0, true);
    mergeJointAngle(c, 2, 0.5);
    mergeVelocity(c, 0.2, 0, 0, false);
    expect(c.header[H.joints]).toBe(1 << 2);
    expect(c.header[H.keys]).toBe(KEY.velocity | KEY.joints);
    expect(c.header[H.flags]).not.toBe(0);
    // merged again into a record (mailbox → core): the same result
    const into = new Tny360Commands();
    openTny360Merge(into, 3);
    mergeJointAngle(into, 5, 0.3);
    mergeTny360Commands(c, into);
    expect(into.header[H.joints]).toBe(1 << 2);
    expect(into.velocity[0]).toBeCloseTo(0.2, 6);
    // another generation empties the record first
    openTny360Merge(into, 4);
    expect(tny360Keys(into)).toBe(0);
  });
});
