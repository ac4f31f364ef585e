/**
 * The P7 link model (src/bodies/p7/kinematics.ts), cross-checked independently: gravity torques
 * against the numerical gradient of the potential energy, inertia against a direct sum, poses by hand.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GRAVITY_M_S2, P7_BASE_HEIGHT_M, P7_EFFORT_LIMIT_NM, P7_LINK_LENGTH_M, P7_LINK_MASS_KG, P7_MAX_RAD, P7_MIN_RAD, P7_ROTOR_INERTIA_KG_M2 } from "../../src/bodies/p7/joints.js";
import { P7Kinematics } from "../../src/bodies/p7/kinematics.js";

const pose = fc.tuple(...P7_MIN_RAD.map((lo, i) => fc.double({ min: lo, max: P7_MAX_RAD[i]!, noNaN: true })));

function potentialJ(q: number[]): number {
  const k = new P7Kinematics();
  k.update(q);
  let v = 0;
  for (let i = 0; i < 7; i++) v += P7_LINK_MASS_KG[i]! * GRAVITY_M_S2 * k.comM[3 * i + 2]!;
  return v;
}

describe("P7Kinematics", () => {
  it("upright at zero: flange straight above the base, no gravity torque", () => {
    const k = new P7Kinematics();
    k.update([0, 0, 0, 0, 0, 0, 0]);
    const reach = P7_LINK_LENGTH_M.reduce((a, b) => a + b, 0);
    expect(k.flangeM[0]).toBeCloseTo(0, 12);
    expect(k.flangeM[1]).toBeCloseTo(0, 12);
    expect(k.flangeM[2]).toBeCloseTo(P7_BASE_HEIGHT_M + reach, 12);
    const t = new Float64Array(7);
    k.gravityTorquesNm(t);
    for (const v of t) expect(Math.abs(v)).toBeLessThan(1e-12);
  });

  it("joint 2 at −π/2 lays the arm along −x; its holding torque is Σ m·g·lever, by hand", () => {
    const k = new P7Kinematics();
    k.update([0, -Math.PI / 2, 0, 0, 0, 0, 0]);
    const reach = P7_LINK_LENGTH_M.slice(1).reduce((a, b) => a + b, 0);
    expect(k.flangeM[0]).toBeCloseTo(-reach, 12);
    // Lever of link k from joint 2: the links before it plus half of it.
    let expected = 0;
    let along = 0;
    for (let i = 1; i < 7; i++) {
      expected += P7_LINK_MASS_KG[i]! * GRAVITY_M_S2 * (along + P7_LINK_LENGTH_M[i]! / 2);
      along += P7_LINK_LENGTH_M[i]!;
    }
    const t = new Float64Array(7);
    k.gravityTorquesNm(t);
    expect(t[1]).toBeCloseTo(expected, 10);
    expect(expected).toBeGreaterThan(15); // ~17 N·m: a loaded shoulder, well inside 70 N·m
  });

  it("property: holding torque equals the gradient of the potential energy (finite differences)", () => {
    fc.assert(
      fc.property(pose, (q) => {
        const k = new P7Kinematics();
        k.update(q);
        const t = new Float64Array(7);
        k.gravityTorquesNm(t);
        const h = 1e-6;
        for (let i = 0; i < 7; i++) {
          const up = [...q];
          const down = [...q];
          up[i]! += h;
          down[i]! -= h;
          const grad = (potentialJ(up) - potentialJ(down)) / (2 * h);
          expect(t[i]).toBeCloseTo(grad, 5);
        }
      }),
      { numRuns: 100 },
    );
  });

  it("property: gravity alone never needs more than a joint's effort limit", () => {
    fc.assert(
      fc.property(pose, (q) => {
        const k = new P7Kinematics();
        k.update(q);
        const t = new Float64Array(7);
        k.gravityTorquesNm(t);
        for (let i = 0; i < 7; i++) expect(Math.abs(t[i]!)).toBeLessThan(P7_EFFORT_LIMIT_NM[i]! / 2);
      }),
    );
  });

  it("property: rotations stay orthonormal; inertia ≥ rotor inertia and matches a direct sum", () => {
    fc.assert(
      fc.property(pose, (q) => {
        const k = new P7Kinematics();
        k.update(q);
        for (let j = 0; j < 7; j++) {
          const R = k.rotation.subarray(9 * j, 9 * j + 9);
          for (let a = 0; a < 3; a++) {
            for (let b = 0; b < 3; b++) {
              const dot = R[a]! * R[b]! + R[3 + a]! * R[3 + b]! + R[6 + a]! * R[6 + b]!;
              expect(dot).toBeCloseTo(a === b ? 1 : 0, 12);
            }
          }
        }
        const inertia = new Float64Array(7);
        k.inertiaDiagKgM2(inertia);
        for (let i = 0; i < 7; i++) {
          expect(inertia[i]).toBeGreaterThanOrEqual(P7_ROTOR_INERTIA_KG_M2[i]!);
          // Direct: m·(|r|² − (a·r)²) for every distal point mass.
          let direct = P7_ROTOR_INERTIA_KG_M2[i]!;
          for (let m = i; m < 7; m++) {
            const r = [0, 1, 2].map((c) => k.comM[3 * m + c]! - k.jointPosM[3 * i + c]!);
            const a = [0, 1, 2].map((c) => k.axis[3 * i + c]!);
            const ar = r[0]! * a[0]! + r[1]! * a[1]! + r[2]! * a[2]!;
            direct += P7_LINK_MASS_KG[m]! * (r[0]! ** 2 + r[1]! ** 2 + r[2]! ** 2 - ar * ar);
          }
          expect(inertia[i]).toBeCloseTo(direct, 12);
        }
      }),
      { numRuns: 100 },
    );
  });
});
