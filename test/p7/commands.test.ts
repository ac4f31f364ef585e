/**
 * P7 command validation (src/bodies/p7/commands.ts): named edge values and fast-check properties.
 * The rule under test: a command is accepted exactly when it has 7 finite numbers inside the
 * limits; a refusal says why and writes nothing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateJointIndex, validateJointTargets, validateSpeed } from "../../src/bodies/p7/commands.js";
import { P7_DEFAULT_SPEED_RAD_S, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD } from "../../src/bodies/p7/joints.js";

const inLimits = fc.tuple(...P7_MIN_RAD.map((lo, i) => fc.double({ min: lo, max: P7_MAX_RAD[i]!, noNaN: true })));

function expectedTargetsOk(a: number[]): boolean {
  return a.length === 7 && a.every((v, i) => Number.isFinite(v) && v >= P7_MIN_RAD[i]! && v <= P7_MAX_RAD[i]!);
}

describe("validateJointTargets", () => {
  it("accepts the limits themselves and ±0", () => {
    const into = new Float64Array(7);
    expect(validateJointTargets([...P7_MIN_RAD], into)).toBeNull();
    expect(Array.from(into)).toEqual([...P7_MIN_RAD]);
    expect(validateJointTargets([...P7_MAX_RAD], into)).toBeNull();
    expect(validateJointTargets([-0, 0, -0, 0, -0, 0, -0], into)).toBeNull();
    expect(validateJointTargets(new Float64Array(7), into)).toBeNull();
  });

  it("refuses one ulp beyond a limit, naming the joint and the limits", () => {
    const into = new Float64Array(7).fill(0.25);
    const t = [0, 0, 0, 0, 0, 0, 0];
    t[5] = P7_MAX_RAD[5]! + Number.EPSILON;
    const why = validateJointTargets(t, into);
    expect(why).toMatch(/joint6 \(index 5\).*outside its limits \[-0\.77539, 0\.77539\]/);
    expect(Array.from(into)).toEqual(new Array(7).fill(0.25)); // unchanged
  });

  it.each([
    [[0, 0, 0, 0, 0, 0], /expected 7 joint targets \(rad\), got 6/],
    [[0, 0, 0, 0, 0, 0, 0, 0], /got 8/],
    [[0, Number.NaN, 0, 0, 0, 0, 0], /joint2 \(index 1\) must be a finite number, got NaN/],
    [[0, 0, Number.POSITIVE_INFINITY, 0, 0, 0, 0], /joint3.*got Infinity/],
    [[0, 0, 0, Number.NEGATIVE_INFINITY, 0, 0, 0], /joint4.*got -Infinity/],
    [[0, 0, 0, 0, "0", 0, 0], /joint5.*got string/],
    [[0, 0, 0, 0, 0, null, 0], /joint6.*got null/],
    ["0,0,0,0,0,0,0", /must be an array of 7 numbers/],
    [null, /got null/],
    [{ length: 7 }, /got object/],
  ])("refuses %j", (input, why) => {
    expect(validateJointTargets(input, new Float64Array(7))).toMatch(why);
  });

  it("property: accepted exactly when 7 finite numbers inside the limits; refusals write nothing", () => {
    const value = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, ...P7_MIN_RAD, ...P7_MAX_RAD), fc.double({ min: -3, max: 3, noNaN: true }));
    fc.assert(
      fc.property(fc.array(value, { minLength: 0, maxLength: 10 }), (a) => {
        const into = new Float64Array(7).fill(42);
        const why = validateJointTargets(a, into);
        expect(why === null).toBe(expectedTargetsOk(a));
        if (why === null) expect(Array.from(into)).toEqual(a);
        else {
          expect(typeof why).toBe("string");
          expect(Array.from(into)).toEqual(new Array(7).fill(42));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("property: targets inside the limits are always accepted unchanged", () => {
    fc.assert(
      fc.property(inLimits, (a) => {
        const into = new Float64Array(7);
        expect(validateJointTargets(a, into)).toBeNull();
        expect(Array.from(into)).toEqual(a);
      }),
    );
  });

  it("property: never throws on any input", () => {
    fc.assert(
      fc.property(fc.anything(), (x) => {
        const why = validateJointTargets(x, new Float64Array(7));
        expect(why === null || typeof why === "string").toBe(true);
      }),
    );
  });
});

describe("validateSpeed", () => {
  it("defaults to the SDK's π/3 for every joint", () => {
    const into = new Float64Array(7);
    expect(validateSpeed(undefined, into)).toBeNull();
    expect(Array.from(into)).toEqual(new Array(7).fill(P7_DEFAULT_SPEED_RAD_S));
  });

  it("clamps a speed above a joint's maximum to that maximum", () => {
    const into = new Float64Array(7);
    expect(validateSpeed(100, into)).toBeNull();
    expect(Array.from(into)).toEqual([...P7_MAX_SPEED_RAD_S]);
  });

  it.each([0, -0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])("refuses %d", (s) => {
    expect(validateSpeed(s, new Float64Array(7))).toMatch(/finite number > 0/);
  });

  it("property: one number is accepted iff finite and > 0, and applied as min(speed, max)", () => {
    fc.assert(
      fc.property(fc.double(), (s) => {
        const into = new Float64Array(7);
        const why = validateSpeed(s, into);
        expect(why === null).toBe(Number.isFinite(s) && s > 0);
        if (why === null) for (let i = 0; i < 7; i++) expect(into[i]).toBe(Math.min(s, P7_MAX_SPEED_RAD_S[i]!));
      }),
      { numRuns: 1000 },
    );
  });

  it("property: 7 speeds are accepted iff each is finite and > 0; any other length is refused", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double(), fc.double({ min: 0.01, max: 10, noNaN: true })), { maxLength: 9 }), (a) => {
        const into = new Float64Array(7).fill(-1);
        const why = validateSpeed(a, into);
        const ok = a.length === 7 && a.every((v) => Number.isFinite(v) && v > 0);
        expect(why === null).toBe(ok);
        if (ok) for (let i = 0; i < 7; i++) expect(into[i]).toBe(Math.min(a[i]!, P7_MAX_SPEED_RAD_S[i]!));
        else expect(Array.from(into)).toEqual(new Array(7).fill(-1));
      }),
      { numRuns: 1000 },
    );
  });

  it("property: never throws on any input", () => {
    fc.assert(fc.property(fc.anything(), (x) => typeof (validateSpeed(x, new Float64Array(7)) ?? "") === "string"));
  });
});

describe("validateJointIndex", () => {
  it("accepts undefined (all joints) and 0..6", () => {
    expect(validateJointIndex(undefined)).toBeNull();
    for (let i = 0; i < 7; i++) expect(validateJointIndex(i)).toBeNull();
  });

  it("property: any other value is refused with the valid range named", () => {
    fc.assert(
      fc.property(fc.anything(), (x) => {
        const ok = x === undefined || (typeof x === "number" && Number.isInteger(x) && x >= 0 && x <= 6);
        const why = validateJointIndex(x);
        expect(why === null).toBe(ok);
        if (!ok) expect(why).toMatch(/integer index 0\.\.6/);
      }),
      { numRuns: 1000 },
    );
  });
});
