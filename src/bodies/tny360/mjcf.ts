/**
 * The TNY-360 as a MuJoCo model (MJCF), generated from the project's own tables: hip positions,
 * hip offset, thigh and calf lengths (kinematics.ts, the firmware's `config.hpp`), joint names,
 * order and limits (joints.ts, `Body::Body()`), the servos' published figures (servos.ts). No mesh
 * and no file of anyone else's is used; the shapes are primitives.
 *
 * - Frames: the body frame of kinematics.ts (x forward, y left, z up, origin at the body centre).
 *   Each leg's joints turn the way legFK says, so that MuJoCo's paw lands where `footInBody` puts
 *   it for every angle (test/tny/mjcf.test.ts): hip roll about ∓x (about +x on the y-inverted legs,
 *   FL and BL, whose leg frame is the body's mirrored in y), the hip offset `HIP_OFFSET_M`
 *   outward, hip pitch and knee about −y (the knee folds backward, 0 = straight).
 * - Joints: all 14 in JointId order (`qpos[7..20]`), with the firmware's limits; the ears too
 *   (SG90s on top of the body), so the model's order is the body's.
 * - Masses *(inferred, the vendor publishes only the total)*: 1.8 kg in all ([WEB] llms.txt);
 *   each leg carries its servos (MG996R 55 g each: the hip pitch servo on the hip link, the knee
 *   servo on the thigh) and some structure; the body holds the rest (hip-roll servos, battery,
 *   boards). Inertias *(inferred)*: each link as a solid box, capsule or sphere of its mass.
 * - Actuators: a position servo per joint in JointId order. Torque limit = the servo's stall
 *   torque; gain *(inferred)*: the stall torque at `TNY360_SERVO.stallErrorRad` of error;
 *   damping: the motor's torque–speed slope (stall torque over no-load speed). The
 *   simulator (sim/tny360/physics/mujoco-tny.ts) turns a disabled servo's gain and torque off and
 *   shapes the torque limit with the servo's torque–speed line each step, so the joints cannot
 *   outrun the published no-load speed. Gear friction and reflected rotor inertia *(inferred)*:
 *   see TNY360_SERVO.
 * - Collision: paws are rubber spheres (`TNY360_PAW_RADIUS_M`, their bottom at the kinematic foot
 *   point with the calf vertical; friction `TNY360_PAW_FRICTION`), thighs and calves capsules, the
 *   body a box. The robot never collides
 *   with itself (contype 2, conaffinity 1; the floor 1/2).
 * - Sensors: an IMU site at the body centre with accelerometer, gyro and framequat; per
 *   TNY360_CONTACT_LINKS entry a contact sensor with the floor (contact found, net force).
 *
 * Pure and deterministic: `tny360Mjcf()` returns the same text every time, the text shipped as
 * models/tny360.xml (`npm run models`; test/bodies/models.test.ts checks they agree).
 */
import { JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";
import { mjcfNum as num, mjcfVec as vec, shapeInertia, type MjcfShape } from "../mjcf-text.js";
import { JOINTS, LEG_NAMES, LEG_Y_INVERTED } from "./joints.js";
import { CALF_LENGTH_M, HIP_OFFSET_M, HIP_POSITIONS_M, THIGH_LENGTH_M } from "./kinematics.js";
import { TNY360_JOINT_SERVO, TNY360_SERVO, TNY360_SERVOS } from "./servos.js";

/** Total mass, kg ([WEB] `public/llms.txt`: "weighs 1.8 kg"). */
export const TNY360_TOTAL_MASS_KG = 1.8;
/**
 * Link masses, kg *(inferred)*: servo masses from the datasheets (servos.ts), the rest structure.
 * The body is what is left of the published total.
 */
export const TNY360_LINK_MASS_KG = Object.freeze({
  /** The hip link after the roll joint: the hip pitch servo (55 g) and its bracket. */
  hip: TNY360_SERVOS.MG996R.massKg + 0.02,
  /** The thigh: the knee servo (55 g) and the thigh's structure. */
  thigh: TNY360_SERVOS.MG996R.massKg + 0.035,
  /** The calf and its paw. */
  calf: 0.035,
  /** An ear: its SG90 (9 g) and the ear. */
  ear: TNY360_SERVOS.SG90.massKg + 0.005,
});
const LEG_MASS_KG = TNY360_LINK_MASS_KG.hip + TNY360_LINK_MASS_KG.thigh + TNY360_LINK_MASS_KG.calf;
/** The body: the published total less four legs and two ears (the hip-roll servos, battery, boards, frame). */
export const TNY360_BODY_MASS_KG = TNY360_TOTAL_MASS_KG - LEG_COUNT * LEG_MASS_KG - 2 * TNY360_LINK_MASS_KG.ear;

/** Body box half sizes, m *(inferred from the 350 × 300 × 150 mm outline with the legs)*. */
export const TNY360_BODY_HALF_M = Object.freeze([0.115, 0.05, 0.03] as const);
/** Paw sphere radius, m *(inferred)*. */
export const TNY360_PAW_RADIUS_M = 0.012;
/**
 * Paw friction against the floor *(inferred: rubber paws)*. MuJoCo takes the larger of the two
 * geoms' coefficients, so the paws grip at this and every other part slides at 1. At 1 the trot
 * slips and turns 0.7 rad in 5 s at 0.1 m/s; at 1.5 it walks straight within 0.1 rad.
 */
export const TNY360_PAW_FRICTION = 1.5;
/** Physics step, s: two steps per 5 ms firmware tick. */
export const TNY360_TIMESTEP_S = 0.0025;
/** The links that can touch the floor, in the contact sensors' order: the body, then the paws (leg order). */
export const TNY360_CONTACT_LINKS: readonly string[] = Object.freeze(["Body", ...LEG_NAMES.map((l) => `${l}Paw`)]);
/**
 * The sensors in sensordata order: accelerometer 3, gyro 3, body quaternion 4 (w, x, y, z), then
 * per TNY360_CONTACT_LINKS entry: contact count, then the net contact force on the link (3, N).
 */
export const TNY360_SENSOR_ADR = Object.freeze({ accelerometer: 0, gyro: 3, quat: 6, contacts: 10, contactStride: 4 });

const L1 = THIGH_LENGTH_M;
const L2 = CALF_LENGTH_M;
const H = HIP_OFFSET_M;
const R = TNY360_PAW_RADIUS_M;

const contactGeom = (name: string, s: MjcfShape, extra = ""): string => {
  const common = `name="${name}" contype="2" conaffinity="1" group="1" rgba="0.9 0.6 0.2 1"${extra}`;
  if (s.kind === "box") return `<geom ${common} type="box" pos="${vec(s.at)}" size="${vec(s.half)}"/>`;
  if (s.kind === "sphere") return `<geom ${common} type="sphere" pos="${vec(s.at)}" size="${num(s.r)}"/>`;
  return `<geom ${common} type="capsule" fromto="${vec([...s.from, ...s.to])}" size="${num(s.r)}"/>`;
};
const inertial = (massKg: number, at: readonly number[], s: MjcfShape): string => `<inertial pos="${vec(at)}" mass="${num(massKg)}" diaginertia="${vec(shapeInertia(s, massKg))}"/>`;

function joint(id: number, axis: readonly number[]): string {
  const j = JOINTS[id]!;
  const servo = TNY360_SERVOS[TNY360_JOINT_SERVO[id]!];
  return `<joint name="${j.name}" axis="${vec(axis)}" range="${num(j.minRad)} ${num(j.maxRad)}" frictionloss="${num(servo.stallTorqueNm * TNY360_SERVO.frictionOfStall)}" armature="${num(servo.armatureKgM2)}"/>`;
}

/** One leg's bodies (hip roll → hip → thigh → calf), as the body-frame FK of kinematics.ts. */
function leg(l: number, pad: string): string[] {
  const name = LEG_NAMES[l]!;
  const mirrored = LEG_Y_INVERTED[l]!;
  const side = mirrored ? 1 : -1; // the hip offset points outward: +y on the left legs
  const base = l * 3;
  const hx = HIP_POSITIONS_M[l * 2]!;
  const hy = HIP_POSITIONS_M[l * 2 + 1]!;
  const hipShape: MjcfShape = { kind: "sphere", r: 0.02, at: [0, (side * H) / 2, 0] };
  const thighShape: MjcfShape = { kind: "capsule", from: [0, 0, 0], to: [0, 0, -L1], r: 0.014 };
  const calfShape: MjcfShape = { kind: "capsule", from: [0, 0, 0], to: [0, 0, -(L2 - R)], r: 0.008 };
  const pawShape: MjcfShape = { kind: "sphere", r: R, at: [0, 0, -(L2 - R)] };
  return [
    `${pad}<body name="${name}Hip" pos="${vec([hx, hy, 0])}">`,
    `${pad}  ${joint(base, [mirrored ? 1 : -1, 0, 0])}`,
    `${pad}  ${inertial(TNY360_LINK_MASS_KG.hip, hipShape.at, hipShape)}`,
    `${pad}  <body name="${name}Thigh" pos="${vec([0, side * H, 0])}">`,
    `${pad}    ${joint(base + 1, [0, -1, 0])}`,
    `${pad}    ${inertial(TNY360_LINK_MASS_KG.thigh, [0, 0, -L1 / 2], thighShape)}`,
    `${pad}    ${contactGeom(`${name}ThighGeom`, thighShape)}`,
    `${pad}    <body name="${name}Calf" pos="${vec([0, 0, -L1])}">`,
    `${pad}      ${joint(base + 2, [0, -1, 0])}`,
    `${pad}      ${inertial(TNY360_LINK_MASS_KG.calf, [0, 0, -L2 / 2], calfShape)}`,
    `${pad}      ${contactGeom(`${name}CalfGeom`, calfShape)}`,
    `${pad}      ${contactGeom(`${name}PawGeom`, pawShape, ` friction="${num(TNY360_PAW_FRICTION)} 0.005 0.0001"`)}`,
    `${pad}      <site name="${name}Foot" pos="${vec([0, 0, -L2])}" size="0.004"/>`,
    `${pad}    </body>`,
    `${pad}  </body>`,
    `${pad}</body>`,
  ];
}

/** An ear (SG90, no feedback): a flap on top of the body turning about y. */
function ear(id: number, pad: string): string[] {
  const left = JOINTS[id]!.name === "EarLeft";
  const shape: MjcfShape = { kind: "box", half: [0.005, 0.015, 0.025], at: [0, 0, 0.025] };
  const [bx, , bz] = TNY360_BODY_HALF_M;
  return [
    `${pad}<body name="${JOINTS[id]!.name}" pos="${vec([bx - 0.03, left ? 0.035 : -0.035, bz])}">`,
    `${pad}  ${joint(id, [0, 1, 0])}`,
    `${pad}  ${inertial(TNY360_LINK_MASS_KG.ear, shape.at, shape)}`,
    `${pad}  <geom type="box" pos="${vec(shape.at)}" size="${vec(shape.half)}" contype="0" conaffinity="0" group="1" rgba="0.2 0.2 0.2 1"/>`,
    `${pad}</body>`,
  ];
}

/** The TNY-360 MJCF text (see the module comment). */
export function tny360Mjcf(): string {
  const bodyShape: MjcfShape = { kind: "box", half: TNY360_BODY_HALF_M, at: [0, 0, 0] };
  const out: string[] = [];
  out.push("<!-- Generated by src/bodies/tny360/mjcf.ts (npm run models) from bodylink's own tables; do not edit. -->");
  out.push("<!-- Link lengths, hip positions and joint limits: the TNY-360 firmware's config.hpp and Body.cpp (kinematics.ts, joints.ts). -->");
  out.push("<!-- Total mass 1.8 kg (TNY Robotics); link masses, inertias, gains, friction, armature: inferred (mjcf.ts, servos.ts). Servo torque and speed: MG996R/SG90 datasheets. -->");
  out.push(`<mujoco model="bodylink-tny360">`);
  out.push(`  <compiler angle="radian" autolimits="true"/>`);
  out.push(`  <option timestep="${num(TNY360_TIMESTEP_S)}" integrator="implicitfast"/>`);
  out.push("  <default>");
  out.push(`    <joint damping="${num(TNY360_SERVO.dampingNmsPerRad)}"/>`);
  out.push(`    <geom friction="1 0.005 0.0001" condim="3"/>`);
  out.push("  </default>");
  out.push("  <worldbody>");
  out.push(`    <geom name="floor" type="plane" size="0 0 0.05" contype="1" conaffinity="2" rgba="0.3 0.5 0.3 1"/>`);
  out.push(`    <light pos="0 0 3" dir="0 0 -1"/>`);
  out.push(`    <body name="Body" pos="0 0 0.2">`);
  out.push(`      <freejoint name="root"/>`);
  out.push(`      ${inertial(TNY360_BODY_MASS_KG, [0, 0, 0], bodyShape)}`);
  out.push(`      ${contactGeom("BodyGeom", bodyShape)}`);
  out.push(`      <site name="imu" pos="0 0 0" size="0.005"/>`);
  // Declared in JointId order: FL, BL, BR, FR legs, then the ears.
  for (let l = 0; l < LEG_COUNT; l++) out.push(...leg(l, "      "));
  for (let id = LEG_COUNT * 3; id < JOINT_COUNT; id++) out.push(...ear(id, "      "));
  out.push("    </body>");
  out.push("  </worldbody>");
  out.push("  <actuator>");
  for (const j of JOINTS) {
    const s = TNY360_SERVOS[TNY360_JOINT_SERVO[j.id]!];
    out.push(
      `    <position name="${j.name}" joint="${j.name}" kp="${num(s.stallTorqueNm / TNY360_SERVO.stallErrorRad)}" kv="${num(s.stallTorqueNm / s.noLoadSpeedRadS)}" ctrlrange="${num(j.minRad)} ${num(j.maxRad)}" forcerange="${num(-s.stallTorqueNm)} ${num(s.stallTorqueNm)}"/>`,
    );
  }
  out.push("  </actuator>");
  out.push("  <sensor>");
  out.push(`    <accelerometer name="accelerometer" site="imu"/>`);
  out.push(`    <gyro name="gyro" site="imu"/>`);
  out.push(`    <framequat name="bodyQuat" objtype="site" objname="imu"/>`);
  for (const l of TNY360_CONTACT_LINKS) out.push(`    <contact name="${l}Contact" geom1="${l}Geom" geom2="floor" num="1" data="found force" reduce="netforce"/>`);
  out.push("  </sensor>");
  out.push("</mujoco>");
  return `${out.join("\n")}\n`;
}
