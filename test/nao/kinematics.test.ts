/**
 * NAO forward kinematics against poses whose answers follow from Aldebaran's published NAO v6
 * link table (src/bodies/nao/kinematics.ts cites it): the zero pose's effectors as NAOqi defines
 * them (hand "inside the hand" at HandOffsetX/−HandOffsetZ, sole FootHeight below the ankle),
 * single-joint rotations, a flat-footed squat, the left/right mirror and the hip yaw-pitch axis.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { API_ORDER, JOINT_LIMITS, LOLA_ORDER, STAND_POSTURE_RAD } from "../../src/bodies/nao/joints.js";
import { HIP_YAW_PITCH_AXIS, NAO_FRAME_INDEX as F, NAO_LINKS_M as L, NaoKinematics } from "../../src/bodies/nao/kinematics.js";
import { type LinkMass, NAO_MASSES as M, NAO_TOTAL_MASS_KG } from "../../src/bodies/nao/masses.js";

const pose = (angles: Partial<Record<(typeof API_ORDER)[number], number>>): number[] => API_ORDER.map((n) => angles[n] ?? 0);
const at = (k: NaoKinematics, f: number): number[] => Array.from(k.position(f));
const rot = (k: NaoKinematics, f: number): number[] => Array.from(k.poses.subarray(12 * f, 12 * f + 9));
const close = (got: number[], want: number[], eps = 1e-9) => {
  expect(got).toHaveLength(want.length);
  got.forEach((g, i) => {
    expect(Math.abs(g - want[i]!), `component ${i}: ${g} vs ${want[i]}`).toBeLessThan(eps);
  });
};
const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];

describe("NAO v6 forward kinematics (Aldebaran's link table)", () => {
  const k = new NaoKinematics();

  it("zero pose: neck 126.5 mm above the torso, arms straight forward, soles 333.09 mm below", () => {
    k.update(pose({}));
    close(at(k, F.Neck), [0, 0, 0.1265]);
    // Hand: UpperArmLength + LowerArmLength + HandOffsetX forward; ShoulderOffsetY + ElbowOffsetY out; ShoulderOffsetZ − HandOffsetZ up.
    close(at(k, F.LHand), [0.2187, 0.113, 0.08769]);
    close(at(k, F.RHand), [0.2187, -0.113, 0.08769]);
    close(at(k, F.LElbow), [0.105, 0.113, 0.1]);
    // Sole: HipOffsetZ + ThighLength + TibiaLength + FootHeight = 85 + 100 + 102.9 + 45.19 mm.
    close(at(k, F.LSole), [0, 0.05, -0.33309]);
    close(at(k, F.RSole), [0, -0.05, -0.33309]);
    close(at(k, F.LAnkle), [0, 0.05, -0.2879]);
    close(rot(k, F.LSole), IDENTITY);
    close(rot(k, F.RSole), IDENTITY);
  });

  it("ShoulderPitch +90° hangs the arm down; ShoulderRoll +90° lifts the left arm sideways", () => {
    k.update(pose({ LShoulderPitch: Math.PI / 2, RShoulderPitch: Math.PI / 2 }));
    close(at(k, F.LHand), [-L.handOffsetZ, 0.113, 0.1 - 0.2187]);
    close(at(k, F.RHand), [-L.handOffsetZ, -0.113, 0.1 - 0.2187]);
    k.update(pose({ LShoulderRoll: Math.PI / 2, RShoulderRoll: -Math.PI / 2 }));
    close(at(k, F.LHand), [-L.elbowOffsetY, 0.098 + 0.2187, 0.08769]);
    close(at(k, F.RHand), [-L.elbowOffsetY, -0.098 - 0.2187, 0.08769]);
  });

  it("ElbowRoll bends the forearm about z; ElbowYaw about the upper arm leaves the elbow in place", () => {
    k.update(pose({ LElbowRoll: -Math.PI / 2 }));
    // The forearm and hand turn to −y (towards the body) about the elbow.
    close(at(k, F.LHand), [0.105 + L.handOffsetZ * 0, 0.113 - (L.lowerArmLength + L.handOffsetX), 0.1 - L.handOffsetZ]);
    k.update(pose({ LElbowYaw: 1.1 }));
    close(at(k, F.LElbow), [0.105, 0.113, 0.1]);
    close(at(k, F.LWrist), [0.105 + L.lowerArmLength, 0.113, 0.1]);
  });

  it("HeadYaw +90° turns the head's x axis to the left", () => {
    k.update(pose({ HeadYaw: Math.PI / 2 }));
    const r = rot(k, F.Head);
    close([r[0]!, r[3]!, r[6]!], [0, 1, 0]);
  });

  it("a flat-footed squat (hip −a, knee 2a, ankle −a) keeps each sole level, below the hip", () => {
    for (const a of [0.2, 0.45, 0.9]) {
      const q = pose({ LHipPitch: -a, LKneePitch: 2 * a, LAnklePitch: -a, RHipPitch: -a, RKneePitch: 2 * a, RAnklePitch: -a });
      k.update(q);
      const x = (L.thighLength - L.tibiaLength) * Math.sin(a);
      const z = -L.hipOffsetZ - (L.thighLength + L.tibiaLength) * Math.cos(a) - L.footHeight;
      close(at(k, F.LSole), [x, 0.05, z]);
      close(at(k, F.RSole), [x, -0.05, z]);
      close(rot(k, F.LSole), IDENTITY);
      close(at(k, F.LKnee), [L.thighLength * Math.sin(a), 0.05, -L.hipOffsetZ - L.thighLength * Math.cos(a)]);
    }
  });

  it("the runtime's stand posture puts both soles level, side by side, 100 mm apart", () => {
    const q = API_ORDER.map((n) => (n === "RHipYawPitch" ? STAND_POSTURE_RAD[LOLA_ORDER.indexOf("LHipYawPitch")]! : STAND_POSTURE_RAD[LOLA_ORDER.indexOf(n as never)]!));
    k.update(q);
    const l = at(k, F.LSole);
    const r = at(k, F.RSole);
    close(rot(k, F.LSole), IDENTITY);
    close([l[0]! - r[0]!, l[1]! - r[1]!, l[2]! - r[2]!], [0, 0.1, 0]);
    expect(l[2]!).toBeGreaterThan(-0.33309); // crouched: higher than with straight legs
  });

  it("HipYawPitch turns the leg about the pelvis diagonal (y–z plane, 45°)", () => {
    const legLength = L.thighLength + L.tibiaLength + L.footHeight;
    for (const q of [-1.1, -0.5, 0.3, 0.7]) {
      k.update(pose({ LHipYawPitch: q, RHipYawPitch: q }));
      for (const [f, hip, hipY, axis] of [
        [F.LSole, F.LHip, 0.05, HIP_YAW_PITCH_AXIS.left],
        [F.RSole, F.RHip, -0.05, HIP_YAW_PITCH_AXIS.right],
      ] as const) {
        const s = at(k, f);
        const v = [s[0]!, s[1]! - hipY, s[2]! + L.hipOffsetZ];
        // A rotation about the axis keeps the length and the component along the axis (±L/√2)…
        expect(Math.hypot(v[0]!, v[1]!, v[2]!)).toBeCloseTo(legLength, 12);
        expect(Math.abs(v[0]! * axis[0]! + v[1]! * axis[1]! + v[2]! * axis[2]!)).toBeCloseTo(legLength * Math.SQRT1_2, 12);
        // …and leaves the axis itself where it was.
        const r = rot(k, hip);
        close(
          [0, 1, 2].map((i) => r[3 * i]! * axis[0]! + r[3 * i + 1]! * axis[1]! + r[3 * i + 2]! * axis[2]!),
          [...axis],
          1e-12,
        );
      }
      // Positive HipYawPitch swings both feet forward (x > 0), symmetrically.
      close([at(k, F.LSole)[0]! - at(k, F.RSole)[0]!, at(k, F.LSole)[1]! + at(k, F.RSole)[1]!, at(k, F.LSole)[2]! - at(k, F.RSole)[2]!], [0, 0, 0]);
      expect(Math.sign(at(k, F.LSole)[0]!)).toBe(Math.sign(q));
    }
  });

  it("mirror: the right side with roll/yaw negated is the left side reflected in the x–z plane", () => {
    const names = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw", "HipYawPitch", "HipRoll", "HipPitch", "KneePitch", "AnklePitch", "AnkleRoll"] as const;
    const mirrored = (n: string) => /Roll|Yaw$/.test(n) && n !== "HipYawPitch";
    const left = new NaoKinematics();
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: names.length, maxLength: names.length }), (u) => {
        const a: Record<string, number> = {};
        names.forEach((n, i) => {
          const lim = JOINT_LIMITS[`L${n}` as keyof typeof JOINT_LIMITS];
          const v = lim.minRad + u[i]! * (lim.maxRad - lim.minRad);
          a[`L${n}`] = v;
          a[`R${n}`] = mirrored(n) ? -v : v;
        });
        left.update(pose(a));
        for (const [l, r] of [
          [F.LHand, F.RHand],
          [F.LElbow, F.RElbow],
          [F.LSole, F.RSole],
          [F.LKnee, F.RKnee],
        ] as const) {
          const pl = at(left, l);
          const pr = at(left, r);
          close([pr[0]!, -pr[1]!, pr[2]!], pl, 1e-9);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("non-finite angles count as 0 (a missing value never makes NaN)", () => {
    k.update(pose({ LKneePitch: Number.NaN, HeadYaw: Number.POSITIVE_INFINITY }));
    close(at(k, F.LSole), [0, 0.05, -0.33309]);
    expect(Array.from(k.poses).every(Number.isFinite)).toBe(true);
  });
});

describe("NAO v6 centre of mass (Aldebaran's link masses)", () => {
  const k = new NaoKinematics();
  const stand = () => API_ORDER.map((n) => (n === "RHipYawPitch" ? STAND_POSTURE_RAD[LOLA_ORDER.indexOf("LHipYawPitch")]! : STAND_POSTURE_RAD[LOLA_ORDER.indexOf(n as never)]!));
  const com = () => Array.from(k.centerOfMass);
  /** The head's centre of mass is 1.46 mm left of the midline: the only asymmetry in the table. */
  const headY = (M.head.massKg * M.head.comM[1]) / NAO_TOTAL_MASS_KG;

  it("the table's total is 5.35943 kg", () => {
    expect(NAO_TOTAL_MASS_KG).toBeCloseTo(5.35943, 10);
    expect(k.totalMassKg).toBe(NAO_TOTAL_MASS_KG);
  });

  it("zero pose: every frame is axis-aligned, so the CoM is Σ m·(joint origin + link CoM) / M, summed by hand", () => {
    const add = (acc: number[], l: LinkMass, o: readonly number[]) => {
      for (let i = 0; i < 3; i++) acc[i]! += l.massKg * (o[i]! + l.comM[i]!);
    };
    const m = [0, 0, 0];
    add(m, M.torso, [0, 0, 0]);
    add(m, M.neck, [0, 0, L.neckOffsetZ]);
    add(m, M.head, [0, 0, L.neckOffsetZ]);
    for (const [arm, s] of [
      [M.leftArm, 1],
      [M.rightArm, -1],
    ] as const) {
      const shoulder = [0, s * L.shoulderOffsetY, L.shoulderOffsetZ];
      const elbow = [L.upperArmLength, s * (L.shoulderOffsetY + L.elbowOffsetY), L.shoulderOffsetZ];
      const wrist = [L.upperArmLength + L.lowerArmLength, elbow[1]!, L.shoulderOffsetZ];
      add(m, arm.shoulderPitch, shoulder);
      add(m, arm.shoulderRoll, shoulder);
      add(m, arm.elbowYaw, elbow);
      add(m, arm.elbowRoll, elbow);
      add(m, arm.wristYaw, wrist);
    }
    for (const [leg, s] of [
      [M.leftLeg, 1],
      [M.rightLeg, -1],
    ] as const) {
      const hip = [0, s * L.hipOffsetY, -L.hipOffsetZ];
      add(m, leg.hipYawPitch, hip);
      add(m, leg.hipRoll, hip);
      add(m, leg.hipPitch, hip);
      add(m, leg.kneePitch, [0, hip[1]!, -L.hipOffsetZ - L.thighLength]);
      const ankle = [0, hip[1]!, -L.hipOffsetZ - L.thighLength - L.tibiaLength];
      add(m, leg.anklePitch, ankle);
      add(m, leg.ankleRoll, ankle);
    }
    k.update(pose({}));
    close(
      com(),
      m.map((v) => v / NAO_TOTAL_MASS_KG),
      1e-12,
    );
    // 300 mm above the soles, 21 mm ahead of the torso origin (the arms point forward), on the midline but for the head.
    expect(k.centerOfMass[2]! + L.hipOffsetZ + L.thighLength + L.tibiaLength + L.footHeight).toBeCloseTo(0.3003, 3);
    expect(k.centerOfMass[1]).toBeCloseTo(headY, 12);
  });

  it("standing (the runtime's stand posture): about 265 mm above the soles, over the feet, near-zero lateral offset", () => {
    k.update(stand());
    const c = com();
    const l = at(k, F.LSole);
    const r = at(k, F.RSole);
    expect(c[2]! - l[2]!).toBeGreaterThan(0.25);
    expect(c[2]! - l[2]!).toBeLessThan(0.28);
    // Over the soles (which reach 110 mm ahead of and 55 mm behind the ankle) and between them.
    expect(c[0]! - l[0]!).toBeGreaterThan(-0.055);
    expect(c[0]! - l[0]!).toBeLessThan(0.11);
    expect(c[1]!).toBeGreaterThan(r[1]!);
    expect(c[1]!).toBeLessThan(l[1]!);
    expect(Math.abs(c[1]!)).toBeLessThan(0.0005);
  });

  it("HeadYaw +90° moves exactly the neck's and head's CoM, rotated about z", () => {
    k.update(pose({}));
    const before = com();
    k.update(pose({ HeadYaw: Math.PI / 2 }));
    const after = com();
    // Rz(90°)·(x, y, z) − (x, y, z) = (−y − x, x − y, 0) for each link's CoM.
    const d = [0, 0, 0];
    for (const l of [M.neck, M.head]) {
      const [x, y] = l.comM;
      d[0]! += (l.massKg * (-y - x)) / NAO_TOTAL_MASS_KG;
      d[1]! += (l.massKg * (x - y)) / NAO_TOTAL_MASS_KG;
    }
    close(after, [before[0]! + d[0]!, before[1]! + d[1]!, before[2]!], 1e-12);
  });

  it("mirrored poses mirror the CoM in y (up to the head's fixed offset) (property)", () => {
    const names = ["ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw", "HipYawPitch", "HipRoll", "HipPitch", "KneePitch", "AnklePitch", "AnkleRoll"] as const;
    const flips = (n: string) => /Roll|Yaw$/.test(n) && n !== "HipYawPitch";
    const a = new NaoKinematics();
    const b = new NaoKinematics();
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2 * names.length, maxLength: 2 * names.length }), (u) => {
        const p: Record<string, number> = {};
        const q: Record<string, number> = {};
        names.forEach((n, i) => {
          const lim = JOINT_LIMITS[`L${n}` as keyof typeof JOINT_LIMITS];
          const vl = lim.minRad + u[i]! * (lim.maxRad - lim.minRad);
          const vr = lim.minRad + u[names.length + i]! * (lim.maxRad - lim.minRad);
          // p: left vl, right mirror(vr); q: the mirror image (left mirror-of-right, right mirror-of-left).
          const f = flips(n) ? -1 : 1;
          p[`L${n}`] = vl;
          p[`R${n}`] = f * vr;
          q[`L${n}`] = vr;
          q[`R${n}`] = f * vl;
        });
        // One hip yaw-pitch motor: both legs share the value.
        p.RHipYawPitch = p.LHipYawPitch!;
        q.LHipYawPitch = p.LHipYawPitch!;
        q.RHipYawPitch = p.LHipYawPitch!;
        a.update(pose(p));
        b.update(pose(q));
        const ca = Array.from(a.centerOfMass);
        const cb = Array.from(b.centerOfMass);
        close([cb[0]!, cb[1]! - headY, cb[2]!], [ca[0]!, -(ca[1]! - headY), ca[2]!], 1e-12);
      }),
      { numRuns: 200 },
    );
  });
});
