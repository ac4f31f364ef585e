/**
 * NAO v6 link masses and each link's centre of mass, for the whole-body centre of mass
 * (NaoKinematics.centerOfMass).
 *
 * Source: Aldebaran's NAOqi documentation, NAO V6 "Masses" page
 * (doc.aldebaran.com/2-8/family/nao_technical/masses_naov6.html), as reproduced value for value in
 * the HULKs RoboCup team's code (github.com/HULKs/hulk, crates/types/src/robot_masses.rs). The
 * torso's centre of mass, which that copy sets to zero, is Aldebaran's (−4.13, 0, 43.42) mm with the
 * same 1.0496 kg (NAO V4 "Masses" page, doc.aldebaran.com/2-4/family/robots/masses_robot_v4.html);
 * the right shoulder's 93.04 g at (−1.65, 26.63, 0.14) mm is also on Aldebaran's T14 page
 * (doc.aldebaran.com/2-4/family/nao_t14/masses_t14.html).
 *
 * As on Aldebaran's pages, each centre of mass is in the frame of the joint that moves the link
 * ("(o, R) is located on the joint …"), axes as in the zero posture (x forward, y left, z up), m.
 * The right side mirrors the left in y. Pure data, browser-safe.
 */

/** One link: its mass (kg) and centre of mass (m) in the frame of the joint that moves it. */
export interface LinkMass {
  readonly massKg: number;
  readonly comM: readonly [number, number, number];
}

const link = (massKg: number, x: number, y: number, z: number): LinkMass => Object.freeze({ massKg, comM: Object.freeze([x, y, z] as [number, number, number]) });
const mirror = (l: LinkMass): LinkMass => link(l.massKg, l.comM[0], -l.comM[1], l.comM[2]);

/** Left arm links, by the joint that moves each (Aldebaran's names in the comments). */
const LEFT_ARM = Object.freeze({
  shoulderPitch: link(0.09304, -0.00165, -0.02663, 0.00014), // LShoulder
  shoulderRoll: link(0.15777, 0.02455, 0.00563, 0.0033), // LBiceps
  elbowYaw: link(0.06483, -0.02744, 0, -0.00014), // LElbow
  elbowRoll: link(0.07761, 0.02556, 0.00281, 0.00076), // LForeArm
  wristYaw: link(0.18533, 0.03434, -0.00088, 0.00308), // LHand
});
const LEFT_LEG = Object.freeze({
  hipYawPitch: link(0.06981, -0.00781, -0.01114, 0.02661), // LPelvis
  hipRoll: link(0.14053, -0.01549, 0.00029, -0.00515), // LHip
  hipPitch: link(0.38968, 0.00138, 0.00221, -0.05373), // LThigh
  kneePitch: link(0.30142, 0.00453, 0.00225, -0.04936), // LTibia
  anklePitch: link(0.13416, 0.00045, 0.00029, 0.00685), // LAnkle
  ankleRoll: link(0.17184, 0.02542, 0.0033, -0.03239), // LFoot
});
type Chain<T> = { readonly [K in keyof T]: LinkMass };
const mirrored = <T extends Record<string, LinkMass>>(c: T): Chain<T> => Object.freeze(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, mirror(v)]))) as Chain<T>;

export const NAO_MASSES = Object.freeze({
  torso: link(1.0496, -0.00413, 0, 0.04342),
  neck: link(0.07842, -0.00001, 0, -0.02742), // HeadYaw
  head: link(0.65937, 0.00109, 0.00146, 0.05719), // HeadPitch
  leftArm: LEFT_ARM,
  rightArm: mirrored(LEFT_ARM),
  leftLeg: LEFT_LEG,
  rightLeg: mirrored(LEFT_LEG),
});

/** The whole robot's mass, kg (the sum of the table: 5.35943). */
export const NAO_TOTAL_MASS_KG =
  NAO_MASSES.torso.massKg +
  NAO_MASSES.neck.massKg +
  NAO_MASSES.head.massKg +
  [NAO_MASSES.leftArm, NAO_MASSES.rightArm, NAO_MASSES.leftLeg, NAO_MASSES.rightLeg].reduce((s, c) => s + Object.values(c).reduce((t: number, l: LinkMass) => t + l.massKg, 0), 0);
