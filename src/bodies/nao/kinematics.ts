/**
 * NAO v6 forward kinematics: every joint's frame in the torso frame, from the joint angles.
 *
 * Link lengths: Aldebaran's published "Links" table (NAOqi documentation, NAO V6 "Links" page,
 * doc.aldebaran.com/2-8/family/nao_technical/links_naov6.html; the same values as the H25 V3.3/
 * V4/V5 table, e.g. the stored copy of aldeb-doc-2.5.7.1/family/nao_h25/links_h25_v33.html):
 * NeckOffsetZ 126.50, ShoulderOffsetY 98.00, ShoulderOffsetZ 100.00, UpperArmLength 105.00,
 * ElbowOffsetY 15.00, LowerArmLength 55.95, HandOffsetX 57.75, HandOffsetZ 12.31, HipOffsetY 50.00,
 * HipOffsetZ 85.00, ThighLength 100.00, TibiaLength 102.90, FootHeight 45.19 (mm).
 * Axes (same pages and the "Joints" page): x forward, y left, z up; every *Roll joint turns about
 * x, every *Pitch about y, every *Yaw about z, except ElbowYaw and WristYaw (about the forearm,
 * x); LHipYawPitch turns about the y–z diagonal of the pelvis, at 45° (RHipYawPitch mirrors it).
 * The hip yaw-pitch construction (Rx(∓45°)·Rz(∓q)·Rx(±45°)) is the one RoboCup code runs on
 * real NAOs (e.g. B-Human's ForwardKinematic).
 *
 * The effectors are NAOqi's ("Body parts" page): LArm/RArm "inside the hand" at
 * (HandOffsetX, 0, −HandOffsetZ) after the wrist, LLeg/RLeg "below the ankle" at
 * (0, 0, −FootHeight), which is the foot sole (the point the FSR positions in feet.ts are given
 * around, projected onto the ground).
 *
 * The whole body's centre of mass (`centerOfMass`, torso frame) from Aldebaran's link masses
 * (masses.ts cites them): every link's centre of mass placed by the frame of the joint that moves
 * it, weighted by its mass.
 *
 * Pure and browser-safe (the dashboard draws the robot with it). Allocates nothing per call:
 * `NaoKinematics.update` writes into arrays the object owns.
 */
import { API_ORDER } from "./joints.js";
import { type LinkMass, NAO_MASSES, NAO_TOTAL_MASS_KG } from "./masses.js";

/** Aldebaran's NAO v6 link lengths, metres (see the module comment for the source). */
export const NAO_LINKS_M = Object.freeze({
  neckOffsetZ: 0.1265,
  shoulderOffsetY: 0.098,
  shoulderOffsetZ: 0.1,
  upperArmLength: 0.105,
  elbowOffsetY: 0.015,
  lowerArmLength: 0.05595,
  handOffsetX: 0.05775,
  handOffsetZ: 0.01231,
  hipOffsetY: 0.05,
  hipOffsetZ: 0.085,
  thighLength: 0.1,
  tibiaLength: 0.1029,
  footHeight: 0.04519,
});

/** The frames `NaoKinematics` computes, in this order (index = frame id). */
export const NAO_FRAMES = [
  "Torso",
  "Neck", // HeadYaw and HeadPitch share an origin
  "Head",
  "LShoulder",
  "LElbow",
  "LWrist",
  "LHand",
  "RShoulder",
  "RElbow",
  "RWrist",
  "RHand",
  "LHip",
  "LKnee",
  "LAnkle",
  "LSole",
  "RHip",
  "RKnee",
  "RAnkle",
  "RSole",
] as const;
export type NaoFrame = (typeof NAO_FRAMES)[number];
export const NAO_FRAME_INDEX: Readonly<Record<NaoFrame, number>> = Object.fromEntries(NAO_FRAMES.map((n, i) => [n, i])) as Record<NaoFrame, number>;
const F = NAO_FRAME_INDEX;

/** Segments to draw between frames (bones), as pairs of frame ids. */
export const NAO_BONES: ReadonlyArray<readonly [number, number]> = [
  [F.Torso, F.Neck],
  [F.LShoulder, F.LElbow],
  [F.LElbow, F.LWrist],
  [F.LWrist, F.LHand],
  [F.RShoulder, F.RElbow],
  [F.RElbow, F.RWrist],
  [F.RWrist, F.RHand],
  [F.LHip, F.LKnee],
  [F.LKnee, F.LAnkle],
  [F.LAnkle, F.LSole],
  [F.RHip, F.RKnee],
  [F.RKnee, F.RAnkle],
  [F.RAnkle, F.RSole],
];

const FRAME_COUNT = NAO_FRAMES.length;
const J = Object.fromEntries(API_ORDER.map((n, i) => [n, i])) as Readonly<Record<(typeof API_ORDER)[number], number>>;
const SQRT1_2 = Math.SQRT1_2;

interface ArmChain {
  readonly masses: { readonly shoulderPitch: LinkMass; readonly shoulderRoll: LinkMass; readonly elbowYaw: LinkMass; readonly elbowRoll: LinkMass; readonly wristYaw: LinkMass };
  readonly shoulderPitch: number;
  readonly shoulderRoll: number;
  readonly elbowYaw: number;
  readonly elbowRoll: number;
  readonly wristYaw: number;
  /** Shoulder, elbow, wrist, hand frame ids. */
  readonly frames: readonly [number, number, number, number];
}
interface LegChain {
  readonly masses: {
    readonly hipYawPitch: LinkMass;
    readonly hipRoll: LinkMass;
    readonly hipPitch: LinkMass;
    readonly kneePitch: LinkMass;
    readonly anklePitch: LinkMass;
    readonly ankleRoll: LinkMass;
  };
  readonly hipYawPitch: number;
  readonly hipRoll: number;
  readonly hipPitch: number;
  readonly kneePitch: number;
  readonly anklePitch: number;
  readonly ankleRoll: number;
  /** Hip, knee, ankle, sole frame ids. */
  readonly frames: readonly [number, number, number, number];
}
const ARM_L: ArmChain = {
  masses: NAO_MASSES.leftArm,
  shoulderPitch: J.LShoulderPitch,
  shoulderRoll: J.LShoulderRoll,
  elbowYaw: J.LElbowYaw,
  elbowRoll: J.LElbowRoll,
  wristYaw: J.LWristYaw,
  frames: [F.LShoulder, F.LElbow, F.LWrist, F.LHand],
};
const ARM_R: ArmChain = {
  masses: NAO_MASSES.rightArm,
  shoulderPitch: J.RShoulderPitch,
  shoulderRoll: J.RShoulderRoll,
  elbowYaw: J.RElbowYaw,
  elbowRoll: J.RElbowRoll,
  wristYaw: J.RWristYaw,
  frames: [F.RShoulder, F.RElbow, F.RWrist, F.RHand],
};
const LEG_L: LegChain = {
  masses: NAO_MASSES.leftLeg,
  hipYawPitch: J.LHipYawPitch,
  hipRoll: J.LHipRoll,
  hipPitch: J.LHipPitch,
  kneePitch: J.LKneePitch,
  anklePitch: J.LAnklePitch,
  ankleRoll: J.LAnkleRoll,
  frames: [F.LHip, F.LKnee, F.LAnkle, F.LSole],
};
const LEG_R: LegChain = {
  masses: NAO_MASSES.rightLeg,
  hipYawPitch: J.RHipYawPitch,
  hipRoll: J.RHipRoll,
  hipPitch: J.RHipPitch,
  kneePitch: J.RKneePitch,
  anklePitch: J.RAnklePitch,
  ankleRoll: J.RAnkleRoll,
  frames: [F.RHip, F.RKnee, F.RAnkle, F.RSole],
};

function angle(q: ArrayLike<number>, i: number): number {
  const v = q[i];
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/**
 * A 3×4 pose (row-major rotation r0..r8, translation t0..t2) in a Float64Array of 12, with the few
 * operations FK needs. Kept as plain functions on arrays so `update` never allocates.
 */
type Pose = Float64Array;

function identity(p: Pose): void {
  p.fill(0);
  p[0] = 1;
  p[4] = 1;
  p[8] = 1;
}

/** p ← p · Trans(x, y, z) */
function translate(p: Pose, x: number, y: number, z: number): void {
  p[9] = p[9]! + p[0]! * x + p[1]! * y + p[2]! * z;
  p[10] = p[10]! + p[3]! * x + p[4]! * y + p[5]! * z;
  p[11] = p[11]! + p[6]! * x + p[7]! * y + p[8]! * z;
}

/** p ← p · Rot(axis k, a): k 0 = x, 1 = y, 2 = z. Only two columns change. */
function rotate(p: Pose, k: 0 | 1 | 2, a: number): void {
  const c = Math.cos(a);
  const s = Math.sin(a);
  // Columns i, j that mix: Rx mixes (1, 2), Ry mixes (2, 0), Rz mixes (0, 1).
  const i = k === 0 ? 1 : k === 1 ? 2 : 0;
  const j = k === 0 ? 2 : k === 1 ? 0 : 1;
  for (let r = 0; r < 3; r++) {
    const a0 = p[3 * r + i]!;
    const b0 = p[3 * r + j]!;
    p[3 * r + i] = c * a0 + s * b0;
    p[3 * r + j] = -s * a0 + c * b0;
  }
}

/**
 * Forward kinematics of the whole body. `update(q)` takes the 26 API-order joint angles (rad;
 * the hands' 0..1 openings are ignored) and fills `poses`: frame `f` is the 12 numbers at
 * `12·f` (row-major rotation, then the position in metres), in the torso frame.
 */
export class NaoKinematics {
  readonly poses = new Float64Array(12 * FRAME_COUNT);
  /** The whole body's centre of mass (x, y, z, m) in the torso frame, for the last `update`. */
  readonly centerOfMass = new Float64Array(3);
  /** The mass it is computed from, kg. */
  readonly totalMassKg = NAO_TOTAL_MASS_KG;
  readonly #work = new Float64Array(12);
  /** Σ mass·position while `update` runs. */
  readonly #moment = new Float64Array(3);

  /** Position of frame `f` (x, y, z, m) in the torso frame, read from `poses`. */
  position(f: number, out: Float64Array | number[] = new Float64Array(3)): Float64Array | number[] {
    out[0] = this.poses[12 * f + 9]!;
    out[1] = this.poses[12 * f + 10]!;
    out[2] = this.poses[12 * f + 11]!;
    return out;
  }

  /** Recompute every frame for `q` (26 values, API order; non-finite values count as 0). Allocation-free. */
  update(q: ArrayLike<number>): void {
    const L = NAO_LINKS_M;
    const w = this.#work;
    this.#moment.fill(0);
    identity(w);
    this.#store(F.Torso, w);
    this.#mass(w, NAO_MASSES.torso);
    // Head: neck on top of the torso, yaw then pitch about the same point.
    translate(w, 0, 0, L.neckOffsetZ);
    this.#store(F.Neck, w);
    rotate(w, 2, angle(q, J.HeadYaw));
    this.#mass(w, NAO_MASSES.neck);
    rotate(w, 1, angle(q, J.HeadPitch));
    this.#mass(w, NAO_MASSES.head);
    this.#store(F.Head, w);
    this.#arm(q, 1, ARM_L);
    this.#arm(q, -1, ARM_R);
    this.#leg(q, 1, LEG_L);
    this.#leg(q, -1, LEG_R);
    for (let i = 0; i < 3; i++) this.centerOfMass[i] = this.#moment[i]! / NAO_TOTAL_MASS_KG;
  }

  /** Add link `l`, moved by the joint whose frame `w` is, to the mass moment. */
  #mass(w: Pose, l: LinkMass): void {
    const [x, y, z] = l.comM;
    const m = l.massKg;
    for (let r = 0; r < 3; r++) this.#moment[r] = this.#moment[r]! + m * (w[9 + r]! + w[3 * r]! * x + w[3 * r + 1]! * y + w[3 * r + 2]! * z);
  }

  #arm(q: ArrayLike<number>, side: 1 | -1, c: ArmChain): void {
    const L = NAO_LINKS_M;
    const w = this.#work;
    identity(w);
    translate(w, 0, side * L.shoulderOffsetY, L.shoulderOffsetZ);
    rotate(w, 1, angle(q, c.shoulderPitch));
    this.#mass(w, c.masses.shoulderPitch);
    rotate(w, 2, angle(q, c.shoulderRoll));
    this.#mass(w, c.masses.shoulderRoll);
    this.#store(c.frames[0], w);
    translate(w, L.upperArmLength, side * L.elbowOffsetY, 0);
    rotate(w, 0, angle(q, c.elbowYaw));
    this.#mass(w, c.masses.elbowYaw);
    rotate(w, 2, angle(q, c.elbowRoll));
    this.#mass(w, c.masses.elbowRoll);
    this.#store(c.frames[1], w);
    translate(w, L.lowerArmLength, 0, 0);
    rotate(w, 0, angle(q, c.wristYaw));
    this.#mass(w, c.masses.wristYaw);
    this.#store(c.frames[2], w);
    translate(w, L.handOffsetX, 0, -L.handOffsetZ);
    this.#store(c.frames[3], w);
  }

  /** The hip yaw-pitch turns about the pelvis diagonal: Rx(−45°·side)·Rz(−q·side)·Rx(45°·side). */
  #leg(q: ArrayLike<number>, side: 1 | -1, c: LegChain): void {
    const L = NAO_LINKS_M;
    const w = this.#work;
    identity(w);
    translate(w, 0, side * L.hipOffsetY, -L.hipOffsetZ);
    rotate(w, 0, (-side * Math.PI) / 4);
    rotate(w, 2, -side * angle(q, c.hipYawPitch));
    rotate(w, 0, (side * Math.PI) / 4);
    this.#mass(w, c.masses.hipYawPitch);
    rotate(w, 0, angle(q, c.hipRoll));
    this.#mass(w, c.masses.hipRoll);
    rotate(w, 1, angle(q, c.hipPitch));
    this.#mass(w, c.masses.hipPitch);
    this.#store(c.frames[0], w);
    translate(w, 0, 0, -L.thighLength);
    rotate(w, 1, angle(q, c.kneePitch));
    this.#mass(w, c.masses.kneePitch);
    this.#store(c.frames[1], w);
    translate(w, 0, 0, -L.tibiaLength);
    rotate(w, 1, angle(q, c.anklePitch));
    this.#mass(w, c.masses.anklePitch);
    rotate(w, 0, angle(q, c.ankleRoll));
    this.#mass(w, c.masses.ankleRoll);
    this.#store(c.frames[2], w);
    translate(w, 0, 0, -L.footHeight);
    this.#store(c.frames[3], w);
  }

  #store(f: number, w: Pose): void {
    this.poses.set(w, 12 * f);
  }
}

/** The hip yaw-pitch axis of each leg in the torso frame (unit), for documentation and tests. */
export const HIP_YAW_PITCH_AXIS = Object.freeze({ left: Object.freeze([0, -SQRT1_2, -SQRT1_2]), right: Object.freeze([0, -SQRT1_2, SQRT1_2]) });
