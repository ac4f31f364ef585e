/**
 * The NAO v6 as a MuJoCo model (MJCF), generated from the project's own tables: link lengths and
 * axes (kinematics.ts), link masses and centres of mass (masses.ts), joint limits (joints.ts),
 * motors (motors.ts), FSR positions (feet.ts). No mesh and no file of anyone else's is used:
 * Aldebaran's and ros-naoqi's meshes are CC BY-NC-ND, so the shapes here are primitives.
 *
 * - Inertias *(inferred)*: each link's principal inertia is that of its primitive shape below
 *   (a solid box, cylinder or sphere of the link's published mass), about the link's published
 *   centre of mass, axes along the joint frame. Aldebaran's tensors are not reproduced here.
 * - Joints: LoLA's names, hinge axes as in kinematics.ts; the tree is declared in LoLA's order, so
 *   the hinge joints (and `qpos[7..]`) run in LoLA order without the hands, with RHipYawPitch
 *   after LAnkleRoll: it is one motor on the robot, so RHipYawPitch has no actuator and an
 *   equality constraint holds it equal to LHipYawPitch.
 * - Actuators: one position servo per LoLA joint but the hands (23, LoLA order). The file carries
 *   the gains at stiffness 1; the simulator scales gain and torque limit with the commanded
 *   stiffness each cycle. Joint damping 1.084 N·m·s/rad, armature 0.045 kg·m² and the 3 ms
 *   step are HULKs' identified NAO values (HULKs/hulk
 *   `tools/machine-learning/mujoco`, cited for the values only); torque limits are the motors'
 *   stall torques (motors.ts). Gains *(inferred)*: each servo reaches its stall torque at
 *   0.05 rad of error (kp 156 N·m/rad at the knee, 45 at the shoulder pitch). HULKs' single
 *   kp 21.1 leaves the zero posture leaning 14° forward on its joints' give, which a NAO at
 *   stiffness 1 does not; with these it leans 0.7°. Gear friction *(inferred)*: 3 % of the
 *   joint's stall torque (0.23 N·m at the knee), so that a limp crouch rests on it as a NAO's
 *   does while a limp NAO standing still falls (HULKs' 0.03 N·m lets the crouch fold over in 4 s).
 * - Collision: the feet are boxes; thighs, shins and arms capsules; the head a sphere; the torso
 *   a box. The robot never collides with itself (contype 2, conaffinity 1; the floor 1/2).
 * - Sensors: per foot four `touch` sensors, one per FSR, each summing the contact force in the
 *   quarter of the sole around its FSR (split halfway between the FSR rows and columns); an IMU
 *   site in the torso with accelerometer, gyro and framequat.
 *
 * Pure and deterministic: `naoMjcf()` returns the same text every time, the text shipped as
 * models/nao.xml (`npm run models` rewrites it; test/nao/mjcf.test.ts checks they agree).
 */
import { type MjcfShape, mjcfNum, mjcfVec, shapeInertia } from "../mjcf-text.js";
import { FSR_POSITIONS_M } from "./feet.js";
import { JOINT_LIMITS, LOLA_ORDER, REST_POSTURE_RAD } from "./joints.js";
import { NAO_FRAME_INDEX, NaoKinematics, NAO_LINKS_M } from "./kinematics.js";
import { type LinkMass, NAO_MASSES } from "./masses.js";
import { NAO_DRIVEN_JOINTS, NAO_JOINT_DRIVES } from "./motors.js";
import { API_ORDER } from "./joints.js";

/** HULKs' identified NAO joint values, and the inferred servo stiffness (see the module comment). */
export const NAO_SERVO = Object.freeze({ dampingNmsPerRad: 1.084, armatureKgM2: 0.045, frictionOfStall: 0.03, stallErrorRad: 0.05 });
/** Position gain at stiffness 1 of a driven joint, N·m/rad *(inferred: stall torque at NAO_SERVO.stallErrorRad)*. */
export const naoServoGain = (joint: keyof typeof NAO_JOINT_DRIVES): number => NAO_JOINT_DRIVES[joint].stallTorqueNm / NAO_SERVO.stallErrorRad;
/** Physics step, s (HULKs' 3 ms): four steps per 12 ms chest-board cycle. */
export const NAO_TIMESTEP_S = 0.003;
/** Foot sole box: x from −0.055 to 0.105 m around the ankle, 9 cm wide, 2 cm thick *(inferred)*. */
export const NAO_FOOT_BOX_M = Object.freeze({ xMin: -0.055, xMax: 0.105, halfWidth: 0.045, halfHeight: 0.01 });
/** IMU site in the torso frame, m (Aldebaran's V5 inertial-unit position; inferred for V6). */
export const NAO_IMU_POSITION_M = Object.freeze([-0.008, 0.00606, 0.027] as const);
/** The hinge joints of the model in qpos order (LoLA order without the hands, RHipYawPitch after LAnkleRoll). */
export const NAO_MJCF_JOINTS: readonly string[] = [...NAO_DRIVEN_JOINTS.slice(0, 13), "RHipYawPitch", ...NAO_DRIVEN_JOINTS.slice(13)];
/**
 * The sensors in sensordata order: 8 FSR touch (LoLA's FSR order), accelerometer 3, gyro 3, torso
 * quaternion 4 (w, x, y, z), then per NAO_CONTACT_LINKS entry a contact sensor with the floor:
 * contact count, then the net contact force on the link (3, N).
 */
export const NAO_SENSOR_ADR = Object.freeze({ fsr: 0, accelerometer: 8, gyro: 11, quat: 14, contacts: 18, contactStride: 4 });

type Shape = MjcfShape;

interface Link {
  readonly name: string;
  readonly pos: readonly [number, number, number];
  readonly joint: string | null;
  readonly axis: readonly [number, number, number];
  readonly mass: LinkMass;
  /** The primitive its inertia is inferred from. */
  readonly shape: Shape;
  /** Whether the shape also collides (small hidden links only carry inertia). */
  readonly collide: boolean;
  readonly extra?: string;
  readonly children: readonly Link[];
}

const L = NAO_LINKS_M;
const X = [1, 0, 0] as const;
const Y = [0, 1, 0] as const;
const Z = [0, 0, 1] as const;
const O = [0, 0, 0] as const;
const small = (r: number): Shape => ({ kind: "sphere", r, at: O });

export { mjcfNum as num, shapeInertia };
const num = mjcfNum;
const vec = mjcfVec;

function arm(side: 1 | -1): Link {
  const p = side === 1 ? "L" : "R";
  const m = side === 1 ? NAO_MASSES.leftArm : NAO_MASSES.rightArm;
  const hand: Link = {
    name: `${p}Hand`,
    pos: [L.lowerArmLength, 0, 0],
    joint: `${p}WristYaw`,
    axis: X,
    mass: m.wristYaw,
    shape: { kind: "capsule", from: O, to: [L.handOffsetX, 0, -L.handOffsetZ], r: 0.025 },
    collide: true,
    children: [],
  };
  const forearm: Link = {
    name: `${p}ForeArm`,
    pos: O,
    joint: `${p}ElbowRoll`,
    axis: Z,
    mass: m.elbowRoll,
    shape: { kind: "capsule", from: O, to: [L.lowerArmLength, 0, 0], r: 0.022 },
    collide: true,
    children: [hand],
  };
  const elbow: Link = {
    name: `${p}Elbow`,
    pos: [L.upperArmLength, side * L.elbowOffsetY, 0],
    joint: `${p}ElbowYaw`,
    axis: X,
    mass: m.elbowYaw,
    shape: small(0.02),
    collide: false,
    children: [forearm],
  };
  const biceps: Link = {
    name: `${p}Biceps`,
    pos: O,
    joint: `${p}ShoulderRoll`,
    axis: Z,
    mass: m.shoulderRoll,
    shape: { kind: "capsule", from: O, to: [L.upperArmLength, side * L.elbowOffsetY, 0], r: 0.025 },
    collide: true,
    children: [elbow],
  };
  return {
    name: `${p}Shoulder`,
    pos: [0, side * L.shoulderOffsetY, L.shoulderOffsetZ],
    joint: `${p}ShoulderPitch`,
    axis: Y,
    mass: m.shoulderPitch,
    shape: small(0.02),
    collide: false,
    children: [biceps],
  };
}

/** Touch-sensor sites (one quarter of the sole per FSR) and FSR marker sites of one foot. */
function footSites(side: 1 | -1): string {
  const p = side === 1 ? "L" : "R";
  const fsr = side === 1 ? FSR_POSITIONS_M.left : FSR_POSITIONS_M.right;
  const names = ["FrontLeft", "FrontRight", "RearLeft", "RearRight"];
  const f = NAO_FOOT_BOX_M;
  const xSplit = (fsr[0]![0] + fsr[2]![0]) / 2;
  const ySplit = (fsr[0]![1] + fsr[1]![1]) / 2;
  const margin = 0.01;
  const yMid = side * 0.0034;
  const xs = [
    [xSplit, f.xMax + margin],
    [f.xMin - margin, xSplit],
  ] as const; // front, rear
  const ys = [
    [ySplit, yMid + f.halfWidth + margin],
    [yMid - f.halfWidth - margin, ySplit],
  ] as const; // left, right
  const z = -L.footHeight;
  const out: string[] = [];
  for (let i = 0; i < 4; i++) {
    const [x0, x1] = xs[i >> 1]!;
    const [y0, y1] = ys[i & 1]!;
    out.push(`<site name="${p}FSR${names[i]}" type="box" pos="${vec([(x0 + x1) / 2, (y0 + y1) / 2, z])}" size="${vec([(x1 - x0) / 2, (y1 - y0) / 2, 0.012])}" rgba="1 0.5 0 0.15"/>`);
    out.push(`<site name="${p}FSR${names[i]}Point" pos="${vec([fsr[i]![0], fsr[i]![1], z])}" size="0.005" rgba="1 0.3 0 1"/>`);
  }
  out.push(`<site name="${p}Sole" pos="${vec([0, 0, z])}" size="0.004"/>`);
  return out.join("");
}

function leg(side: 1 | -1): Link {
  const p = side === 1 ? "L" : "R";
  const m = side === 1 ? NAO_MASSES.leftLeg : NAO_MASSES.rightLeg;
  const f = NAO_FOOT_BOX_M;
  const footBox: Shape = { kind: "box", half: [(f.xMax - f.xMin) / 2, f.halfWidth, f.halfHeight], at: [(f.xMax + f.xMin) / 2, side * 0.0034, -L.footHeight + f.halfHeight] };
  const foot: Link = { name: `${p}Foot`, pos: O, joint: `${p}AnkleRoll`, axis: X, mass: m.ankleRoll, shape: footBox, collide: true, extra: footSites(side), children: [] };
  const ankle: Link = { name: `${p}Ankle`, pos: [0, 0, -L.tibiaLength], joint: `${p}AnklePitch`, axis: Y, mass: m.anklePitch, shape: small(0.025), collide: false, children: [foot] };
  const tibia: Link = {
    name: `${p}Tibia`,
    pos: [0, 0, -L.thighLength],
    joint: `${p}KneePitch`,
    axis: Y,
    mass: m.kneePitch,
    shape: { kind: "capsule", from: O, to: [0, 0, -L.tibiaLength], r: 0.03 },
    collide: true,
    children: [ankle],
  };
  const thigh: Link = {
    name: `${p}Thigh`,
    pos: O,
    joint: `${p}HipPitch`,
    axis: Y,
    mass: m.hipPitch,
    shape: { kind: "capsule", from: O, to: [0, 0, -L.thighLength], r: 0.035 },
    collide: true,
    children: [tibia],
  };
  const hip: Link = { name: `${p}Hip`, pos: O, joint: `${p}HipRoll`, axis: X, mass: m.hipRoll, shape: small(0.03), collide: false, children: [thigh] };
  // kinematics.ts: Rx(−45°·side)·Rz(−q·side)·Rx(45°·side) is a turn by q about (0, −√½, −side·√½).
  const axis = [0, -Math.SQRT1_2, -side * Math.SQRT1_2] as const;
  return { name: `${p}Pelvis`, pos: [0, side * L.hipOffsetY, -L.hipOffsetZ], joint: `${p}HipYawPitch`, axis, mass: m.hipYawPitch, shape: small(0.025), collide: false, children: [hip] };
}

const HEAD: Link = {
  name: "Neck",
  pos: [0, 0, L.neckOffsetZ],
  joint: "HeadYaw",
  axis: Z,
  mass: NAO_MASSES.neck,
  shape: small(0.02),
  collide: false,
  children: [{ name: "Head", pos: O, joint: "HeadPitch", axis: Y, mass: NAO_MASSES.head, shape: { kind: "sphere", r: 0.065, at: [0, 0, 0.058] }, collide: true, children: [] }],
};
const TORSO_SHAPE: Shape = { kind: "box", half: [0.045, 0.07, 0.1], at: [-0.005, 0, 0.025] };
const LIMBS: readonly Link[] = [HEAD, arm(1), leg(1), leg(-1), arm(-1)];

function colliding(l: Link, out: string[]): string[] {
  if (l.collide) out.push(l.name);
  for (const c of l.children) colliding(c, out);
  return out;
}
/** The links that can touch the floor, in the contact sensors' order (the torso first). */
export const NAO_CONTACT_LINKS: readonly string[] = Object.freeze(["Torso", ...LIMBS.flatMap((l) => colliding(l, []))]);

function geom(s: Shape, name: string): string {
  const common = `name="${name}" contype="2" conaffinity="1" group="1" rgba="0.85 0.85 0.9 1"`;
  if (s.kind === "box") return `<geom ${common} type="box" pos="${vec(s.at)}" size="${vec(s.half)}"/>`;
  if (s.kind === "sphere") return `<geom ${common} type="sphere" pos="${vec(s.at)}" size="${num(s.r)}"/>`;
  return `<geom ${common} type="capsule" fromto="${vec([...s.from, ...s.to])}" size="${num(s.r)}"/>`;
}

function inertial(mass: LinkMass, s: Shape): string {
  return `<inertial pos="${vec(mass.comM)}" mass="${num(mass.massKg)}" diaginertia="${vec(shapeInertia(s, mass.massKg))}"/>`;
}

function emit(l: Link, depth: number, out: string[]): void {
  const pad = "  ".repeat(depth);
  out.push(`${pad}<body name="${l.name}" pos="${vec(l.pos)}">`);
  if (l.joint) {
    const lim = JOINT_LIMITS[l.joint as keyof typeof JOINT_LIMITS];
    const drive = NAO_JOINT_DRIVES[(l.joint === "RHipYawPitch" ? "LHipYawPitch" : l.joint) as keyof typeof NAO_JOINT_DRIVES];
    const friction = drive.stallTorqueNm * NAO_SERVO.frictionOfStall;
    out.push(`${pad}  <joint name="${l.joint}" axis="${vec(l.axis)}" range="${num(lim.minRad)} ${num(lim.maxRad)}" frictionloss="${num(friction)}"/>`);
  }
  out.push(`${pad}  ${inertial(l.mass, l.shape)}`);
  if (l.collide) out.push(`${pad}  ${geom(l.shape, `${l.name}Geom`)}`);
  if (l.extra) out.push(`${pad}  ${l.extra.replaceAll("><", `>\n${pad}  <`)}`);
  for (const c of l.children) emit(c, depth + 1, out);
  out.push(`${pad}</body>`);
}

/**
 * Base pose (x, y, z, qw, qx, qy, qz) that puts a symmetric-legged posture (LoLA order, rad) on
 * the ground with flat feet: the torso turned so the left sole is level, lifted so the sole
 * touches z = 0.
 */
export function groundedBasePose(postureLola: ArrayLike<number>): [number, number, number, number, number, number, number] {
  const k = new NaoKinematics();
  const q = new Float64Array(API_ORDER.length);
  for (let i = 0; i < API_ORDER.length; i++) {
    const n = API_ORDER[i]!;
    const li = LOLA_ORDER.indexOf(n === "RHipYawPitch" ? "LHipYawPitch" : n);
    q[i] = postureLola[li] ?? 0;
  }
  k.update(q);
  const f = 12 * NAO_FRAME_INDEX.LSole;
  const r = k.poses.subarray(f, f + 9);
  // Sole orientation in the torso frame is only a pitch here (symmetric legs, no yaw/roll).
  const pitch = Math.atan2(r[2]!, r[0]!);
  const sx = k.poses[f + 9]!;
  const sz = k.poses[f + 11]!;
  // Torso turned by −pitch about y: the sole's height in the world.
  const c = Math.cos(-pitch);
  const s = Math.sin(-pitch);
  const worldZ = -s * sx + c * sz;
  const worldX = c * sx + s * sz;
  return [-worldX, 0, -worldZ, Math.cos(-pitch / 2), 0, Math.sin(-pitch / 2), 0];
}

function keyframe(name: string, postureLola: ArrayLike<number>): string {
  const base = groundedBasePose(postureLola);
  const joints = NAO_MJCF_JOINTS.map((n) => postureLola[LOLA_ORDER.indexOf((n === "RHipYawPitch" ? "LHipYawPitch" : n) as (typeof LOLA_ORDER)[number])] ?? 0);
  const ctrl = NAO_DRIVEN_JOINTS.map((n) => postureLola[LOLA_ORDER.indexOf(n)] ?? 0);
  return `<key name="${name}" qpos="${vec([...base, ...joints])}" ctrl="${vec(ctrl)}"/>`;
}

/** The NAO v6 MJCF text (see the module comment). */
export function naoMjcf(): string {
  const out: string[] = [];
  out.push("<!-- Generated by src/bodies/nao/mjcf.ts (npm run models) from bodylink's own tables; do not edit. -->");
  out.push("<!-- Masses, centres of mass, link lengths and joint limits: Aldebaran's NAO V6 pages (see masses.ts, kinematics.ts, joints.ts). -->");
  out.push("<!-- Inertias and servo gains: inferred (see mjcf.ts). Joint damping, armature, step: HULKs' identified values. Torque limits: motors.ts. -->");
  out.push(`<mujoco model="bodylink-nao-v6">`);
  out.push(`  <compiler angle="radian" autolimits="true"/>`);
  out.push(`  <option timestep="${num(NAO_TIMESTEP_S)}" integrator="implicitfast"/>`);
  out.push("  <default>");
  out.push(`    <joint damping="${num(NAO_SERVO.dampingNmsPerRad)}" armature="${num(NAO_SERVO.armatureKgM2)}"/>`);
  out.push(`    <geom friction="1 0.005 0.0001" condim="3"/>`);
  out.push("  </default>");
  out.push("  <worldbody>");
  out.push(`    <geom name="floor" type="plane" size="0 0 0.05" contype="1" conaffinity="2" rgba="0.3 0.5 0.3 1"/>`);
  out.push(`    <light pos="0 0 3" dir="0 0 -1"/>`);
  out.push(`    <body name="Torso" pos="0 0 ${num(groundedBasePose(new Float64Array(25))[2])}">`);
  out.push(`      <freejoint name="root"/>`);
  out.push(`      ${inertial(NAO_MASSES.torso, TORSO_SHAPE)}`);
  out.push(`      ${geom(TORSO_SHAPE, "TorsoGeom")}`);
  out.push(`      <site name="imu" pos="${vec(NAO_IMU_POSITION_M)}" size="0.005"/>`);
  // Declared in LoLA's order: head, left arm, left leg, right leg, right arm.
  for (const l of LIMBS) emit(l, 3, out);
  out.push("    </body>");
  out.push("  </worldbody>");
  out.push("  <equality>");
  out.push(`    <joint name="HipYawPitchCoupling" joint1="RHipYawPitch" joint2="LHipYawPitch" polycoef="0 1 0 0 0"/>`);
  out.push("  </equality>");
  out.push("  <actuator>");
  for (const n of NAO_DRIVEN_JOINTS) {
    const d = NAO_JOINT_DRIVES[n];
    const lim = JOINT_LIMITS[n];
    out.push(`    <position name="${n}" joint="${n}" kp="${num(naoServoGain(n))}" ctrlrange="${num(lim.minRad)} ${num(lim.maxRad)}" forcerange="${num(-d.stallTorqueNm)} ${num(d.stallTorqueNm)}"/>`);
  }
  out.push("  </actuator>");
  out.push("  <sensor>");
  const fsrNames = ["FrontLeft", "FrontRight", "RearLeft", "RearRight"];
  for (const p of ["L", "R"]) for (const n of fsrNames) out.push(`    <touch name="${p}FSR${n}" site="${p}FSR${n}"/>`);
  out.push(`    <accelerometer name="accelerometer" site="imu"/>`);
  out.push(`    <gyro name="gyro" site="imu"/>`);
  out.push(`    <framequat name="torsoQuat" objtype="site" objname="imu"/>`);
  for (const l of NAO_CONTACT_LINKS) out.push(`    <contact name="${l}Contact" geom1="${l}Geom" geom2="floor" num="1" data="found force" reduce="netforce"/>`);
  out.push("  </sensor>");
  out.push("  <keyframe>");
  out.push(`    ${keyframe("stand", new Float64Array(25))}`);
  out.push(`    ${keyframe("crouch", REST_POSTURE_RAD)}`);
  out.push("  </keyframe>");
  out.push("</mujoco>");
  return `${out.join("\n")}\n`;
}
