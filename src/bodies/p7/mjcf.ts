/**
 * The AIRBOT P7 as a MuJoCo model (MJCF), generated from the project's own tables (joints.ts):
 * joint axes, link lengths and masses, raw joint limits, effort limits, rotor inertia and viscous
 * friction. The vendor publishes no link model, so those tables are the simulator's own
 * (*inferred*, joints.ts says so field by field); no file of anyone else's is used.
 *
 * - Links: a body per joint at the previous link's end (joint 1 `P7_BASE_HEIGHT_M` above the fixed
 *   base), its hinge about `P7_JOINT_AXIS` (x, y or z of the parent frame: at zero angles the arm
 *   points straight up). Each link's mass sits at the middle of its segment, as in the kinematic
 *   simulator's point-mass model, so the gravity torques agree exactly; its inertia *(inferred)*
 *   is a solid cylinder of radius `P7_LINK_RADIUS_M` along the segment.
 * - Joints: range = the command limits widened by the SDK's raw margin; armature = the rotor
 *   inertia; damping = the viscous friction.
 * - Actuators: a position servo per joint, in SDK order (J1..J7), its force limited to the SDK's
 *   effort bound; gain *(inferred)*: the effort limit at `P7_SERVO_STALL_ERROR_RAD` of error,
 *   damping *(inferred)* `P7_SERVO_DAMPING_S` times the gain.
 * - Collision *(inferred shapes)*: each link a capsule of radius `P7_COLLISION_RADIUS_M` along its
 *   segment, the base a cylinder, the floor a plane. The links collide with the floor, the base
 *   and each other (contype 2, conaffinity 3; the floor and the base 1/2, so not with each other),
 *   except where they always overlap at a joint: a link with its parent (MuJoCo filters those),
 *   with the link two further along the chain (the short joint housings, links 2, 4 and 6, put
 *   their capsules' ends within a radius of each other; `P7_COLLISION_EXCLUDES`), and link 1 with
 *   the base it stands on. So the arm cannot pass through the floor, its base or itself.
 * - Sensors: jointpos, jointvel and actuatorfrc per joint (the state's angles, velocities,
 *   efforts), the IMU site on link 7 (`P7_IMU_MOUNT`) with an accelerometer and a gyro, and per
 *   link (`P7_CONTACT_LINKS`) a contact sensor with the world's geoms, the floor and the base
 *   (contact found, net force).
 *
 * Pure and deterministic: `p7Mjcf()` returns the same text every time, the text shipped as
 * models/p7.xml (`npm run models`; test/p7/mjcf.test.ts checks it with MuJoCo itself).
 */
import {
  GRAVITY_M_S2,
  P7_BASE_HEIGHT_M,
  P7_EFFORT_LIMIT_NM,
  P7_IMU_MOUNT,
  P7_JOINT_AXIS,
  P7_JOINT_COUNT,
  P7_JOINT_NAMES,
  P7_LINK_LENGTH_M,
  P7_LINK_MASS_KG,
  P7_MAX_RAD,
  P7_MIN_RAD,
  P7_RAW_LIMIT_MARGIN_RAD,
  P7_ROTOR_INERTIA_KG_M2,
  P7_VISCOUS_NM_S_RAD,
} from "./joints.js";

/** Radius of each link's cylinder (its inferred inertia and its capsule), m *(inferred)*. */
export const P7_LINK_RADIUS_M = 0.04;
/** Radius of each link's collision capsule, m *(inferred)*: a little inside the inertia's cylinder. */
export const P7_COLLISION_RADIUS_M = P7_LINK_RADIUS_M * 0.8;
/**
 * Body pairs that never collide (besides a link and its parent, which MuJoCo filters): link 1 and
 * the base it stands on ("world"), and each link with the one two further along the chain.
 */
export const P7_COLLISION_EXCLUDES: ReadonlyArray<readonly [string, string]> = Object.freeze([
  ["world", "link1"] as const,
  ...Array.from({ length: P7_JOINT_COUNT - 2 }, (_, i) => [`link${i + 1}`, `link${i + 3}`] as const),
]);
/** Each servo reaches its effort limit at this much position error, rad *(inferred)*. */
export const P7_SERVO_STALL_ERROR_RAD = 0.02;
/** Each servo's damping over its gain, s *(inferred)*: settles a held pose within about a second. */
export const P7_SERVO_DAMPING_S = 0.05;
/** Physics step, s: the simulator's 4 ms state period in four steps. */
export const P7_TIMESTEP_S = 0.001;
/** The links whose contacts with the world (the floor, the base) the state reports, in the contact sensors' order. */
export const P7_CONTACT_LINKS: readonly string[] = Object.freeze(Array.from({ length: P7_JOINT_COUNT }, (_, i) => `link${i + 1}`));
/**
 * Where the viewers and the dashboard draw a contact (P7_CONTACT_LINKS) on the arm's frames (base
 * 0, joint i at i, the flange at 8): link i between its joint and the next joint or the flange.
 */
export const P7_CONTACT_FRAMES: Readonly<Record<string, readonly [number, number]>> = Object.freeze(Object.fromEntries(P7_CONTACT_LINKS.map((l, i) => [l, [i + 1, i + 2] as const])));
/**
 * The sensors in sensordata order: 7 jointpos, 7 jointvel, 7 actuatorfrc, accelerometer 3, gyro 3,
 * then per P7_CONTACT_LINKS entry: contact count, then the net contact force on the link (3, N).
 */
export const P7_SENSOR_ADR = Object.freeze({ position: 0, velocity: 7, effort: 14, accelerometer: 21, gyro: 24, contacts: 27, contactStride: 4 });

/** A number as MJCF text: 9 significant digits, no "-0". */
function num(x: number): string {
  const v = Number(x.toPrecision(9));
  return Object.is(v, -0) || v === 0 ? "0" : String(v);
}
const vec = (v: readonly number[]): string => v.map(num).join(" ");
const AXES = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0, 1],
] as const;

/** Principal inertia (about x, y, z) of a solid cylinder along z of mass `m`, length `h`. */
export function linkInertia(m: number, h: number): [number, number, number] {
  const r = P7_LINK_RADIUS_M;
  const across = (m * (3 * r * r + h * h)) / 12;
  return [across, across, 0.5 * m * r * r];
}

/** The P7 MJCF text (see the module comment). */
export function p7Mjcf(): string {
  const out: string[] = [];
  out.push("<!-- Generated by src/bodies/p7/mjcf.ts (npm run models) from bodylink's own tables; do not edit. -->");
  out.push(
    "<!-- Joint limits and effort limits: the AIRBOT P7 SDK guide. Axes, link lengths and masses, friction, rotor inertia, servo gains: the simulator's own model (inferred; src/bodies/p7/joints.ts). -->",
  );
  out.push(`<mujoco model="bodylink-airbot-p7">`);
  out.push(`  <compiler angle="radian" autolimits="true"/>`);
  out.push(`  <option timestep="${num(P7_TIMESTEP_S)}" gravity="0 0 ${num(-GRAVITY_M_S2)}" integrator="implicitfast"/>`);
  out.push("  <worldbody>");
  out.push(`    <geom name="floor" type="plane" size="0 0 0.05" contype="1" conaffinity="2" rgba="0.3 0.3 0.35 1"/>`);
  out.push(`    <geom name="base" type="cylinder" pos="0 0 ${num(P7_BASE_HEIGHT_M / 2)}" size="0.06 ${num(P7_BASE_HEIGHT_M / 2)}" contype="1" conaffinity="2" rgba="0.23 0.26 0.31 1"/>`);
  let pad = "    ";
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    const len = P7_LINK_LENGTH_M[i]!;
    const m = P7_LINK_MASS_KG[i]!;
    const pos = i === 0 ? [0, 0, P7_BASE_HEIGHT_M] : [0, 0, P7_LINK_LENGTH_M[i - 1]!];
    out.push(`${pad}<body name="link${i + 1}" pos="${vec(pos)}">`);
    const lo = P7_MIN_RAD[i]! - P7_RAW_LIMIT_MARGIN_RAD;
    const hi = P7_MAX_RAD[i]! + P7_RAW_LIMIT_MARGIN_RAD;
    out.push(
      `${pad}  <joint name="${P7_JOINT_NAMES[i]}" axis="${vec(AXES[P7_JOINT_AXIS[i]!])}" range="${num(lo)} ${num(hi)}" armature="${num(P7_ROTOR_INERTIA_KG_M2[i]!)}" damping="${num(P7_VISCOUS_NM_S_RAD[i]!)}"/>`,
    );
    out.push(`${pad}  <inertial pos="0 0 ${num(len / 2)}" mass="${num(m)}" diaginertia="${vec(linkInertia(m, len))}"/>`);
    out.push(`${pad}  <geom name="link${i + 1}Geom" type="capsule" fromto="0 0 0 0 0 ${num(len)}" size="${num(P7_COLLISION_RADIUS_M)}" contype="2" conaffinity="3" rgba="0.85 0.55 0.2 1"/>`);
    if (i + 1 === P7_IMU_MOUNT.link) {
      out.push(`${pad}  <site name="${P7_IMU_MOUNT.frame}" pos="0 0 ${num(P7_IMU_MOUNT.offsetM)}" size="0.01"/>`);
      out.push(`${pad}  <site name="flange" pos="0 0 ${num(len)}" size="0.01"/>`);
    }
    pad += "  ";
  }
  for (let i = P7_JOINT_COUNT - 1; i >= 0; i--) {
    pad = pad.slice(2);
    out.push(`${pad}</body>`);
  }
  out.push("  </worldbody>");
  out.push("  <contact>");
  for (const [a, b] of P7_COLLISION_EXCLUDES) out.push(`    <exclude body1="${a}" body2="${b}"/>`);
  out.push("  </contact>");
  out.push("  <actuator>");
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    const lim = P7_EFFORT_LIMIT_NM[i]!;
    out.push(
      `    <position name="${P7_JOINT_NAMES[i]}" joint="${P7_JOINT_NAMES[i]}" kp="${num(lim / P7_SERVO_STALL_ERROR_RAD)}" kv="${num((lim / P7_SERVO_STALL_ERROR_RAD) * P7_SERVO_DAMPING_S)}" ctrlrange="${num(P7_MIN_RAD[i]!)} ${num(P7_MAX_RAD[i]!)}" forcerange="${num(-lim)} ${num(lim)}"/>`,
    );
  }
  out.push("  </actuator>");
  out.push("  <sensor>");
  for (const n of P7_JOINT_NAMES) out.push(`    <jointpos name="${n}Position" joint="${n}"/>`);
  for (const n of P7_JOINT_NAMES) out.push(`    <jointvel name="${n}Velocity" joint="${n}"/>`);
  for (const n of P7_JOINT_NAMES) out.push(`    <actuatorfrc name="${n}Effort" actuator="${n}"/>`);
  out.push(`    <accelerometer name="accelerometer" site="${P7_IMU_MOUNT.frame}"/>`);
  out.push(`    <gyro name="gyro" site="${P7_IMU_MOUNT.frame}"/>`);
  for (const l of P7_CONTACT_LINKS) out.push(`    <contact name="${l}Contact" body1="${l}" body2="world" num="1" data="found force" reduce="netforce"/>`);
  out.push("  </sensor>");
  out.push("</mujoco>");
  return `${out.join("\n")}\n`;
}
