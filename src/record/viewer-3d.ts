/**
 * The robot in the viewers' 3D panel: per body, the link frames from its own kinematics
 * (src/bodies/<body>/kinematics.ts, the tables the simulator and the dashboard use) as
 * `foxglove.FrameTransforms`, and the body's shapes as a `foxglove.SceneUpdate` whose entities are
 * attached to those frames (`frame_locked`), so Foxglove or Lichtblick draws the robot moving.
 *
 * The frames form one tree rooted at the body's base: the NAO's torso (`nao/Torso`), the P7's base
 * (`p7/base`), the TNY-360's body (`tny360/body`). Each transform is a link's pose in its parent's
 * frame. The shapes are lines from each frame to its children (the bones the dashboard draws),
 * spheres at the joints, and a box or cylinder for the trunk, sized from the same tables.
 *
 * With a physics body (the state carries `sim`, docs/simulation.md) the tree is rooted at `world`
 * instead: one more transform puts the base where the simulator has it (`world` → `nao/Torso`),
 * the scene adds the ground (the plane z = 0 of `world`), and a `world/contacts` entity, sent with
 * the transforms, marks each link touching the floor (a disc on the floor under it and an arrow up,
 * 1 cm per 10 N) and says "fallen" over the robot when it has.
 *
 * Consumer side (the recorder, after the ring): allocates the messages, at most every
 * `TF_EVERY_MS` for the transforms and `SCENE_EVERY_MS` for the scene (a late viewer or a seek in a
 * file sees the robot within a second).
 */
import { P7_CONTACT_FRAMES } from "../bodies/p7/mjcf.js";
import type { BodyKind } from "../bodies/registry.js";
import { API_ORDER, API_TO_LOLA } from "../bodies/nao/joints.js";
import { NAO_FRAMES, NAO_LINKS_M, NaoKinematics } from "../bodies/nao/kinematics.js";
import { NAO_CONTACT_FRAMES } from "../bodies/nao/sim-world.js";
import { P7_BASE_HEIGHT_M, P7_JOINT_COUNT } from "../bodies/p7/joints.js";
import { P7Kinematics } from "../bodies/p7/kinematics.js";
import { LEG_NAMES, LEG_Y_INVERTED } from "../bodies/tny360/joints.js";
import { CALF_LENGTH_M, HIP_OFFSET_M, HIP_POSITIONS_M, HIP_POS_X_M, HIP_POS_Y_M, THIGH_LENGTH_M } from "../bodies/tny360/kinematics.js";

/** Transforms at most this often (the robot API's stream rate). */
export const TF_EVERY_MS = 50;
/** The scene again at most this often. */
export const SCENE_EVERY_MS = 1000;

type Json = Record<string, unknown>;

/** One body's frames: names, parents, and their poses from the recorded state's joint angles. */
export interface BodyFrames {
  /** Frame ids; index 0 is the root. */
  readonly frames: readonly string[];
  /** Parent index per frame (-1 for the root); a parent always comes before its children. */
  readonly parents: readonly number[];
  /** The joint angles (rad) from a recorded state message, in the order `poses` takes; null when it carries none. */
  joints(message: Json): ArrayLike<number> | null;
  /** Every frame's pose in the root frame: 12 numbers per frame (row-major rotation, then position, m). */
  poses(q: ArrayLike<number>, out: Float64Array): void;
  /** Colour of the body's shapes. */
  readonly color: readonly [number, number, number];
  /**
   * Per physics contact link (bodies/nao/mjcf.ts NAO_CONTACT_LINKS): the two frames whose origins'
   * midpoint stands for it (the same frame twice for a foot or the head). Empty for a body without physics.
   */
  readonly contactFrames: Readonly<Record<string, readonly [number, number]>>;
  /** Extra shapes on some frames (the trunk, the head, the feet). */
  readonly solids: ReadonlyArray<{
    readonly frame: number;
    readonly kind: "cube" | "sphere" | "cylinder";
    readonly sizeM: readonly [number, number, number];
    readonly atM: readonly [number, number, number];
  }>;
}

// ---- NAO ---------------------------------------------------------------------------------------

const NAO_PARENT: Readonly<Record<(typeof NAO_FRAMES)[number], (typeof NAO_FRAMES)[number] | null>> = {
  Torso: null,
  Neck: "Torso",
  Head: "Neck",
  LShoulder: "Torso",
  LElbow: "LShoulder",
  LWrist: "LElbow",
  LHand: "LWrist",
  RShoulder: "Torso",
  RElbow: "RShoulder",
  RWrist: "RElbow",
  RHand: "RWrist",
  LHip: "Torso",
  LKnee: "LHip",
  LAnkle: "LKnee",
  LSole: "LAnkle",
  RHip: "Torso",
  RKnee: "RHip",
  RAnkle: "RKnee",
  RSole: "RAnkle",
};

function naoFrames(): BodyFrames {
  const fk = new NaoKinematics();
  const api = new Float64Array(API_ORDER.length);
  const at = (f: (typeof NAO_FRAMES)[number]) => NAO_FRAMES.indexOf(f);
  const L = NAO_LINKS_M;
  return {
    frames: NAO_FRAMES.map((f) => `nao/${f}`),
    parents: NAO_FRAMES.map((f) => (NAO_PARENT[f] === null ? -1 : at(NAO_PARENT[f]!))),
    joints(m) {
      const lola = m.position;
      if (!Array.isArray(lola)) return null;
      // LoLA order (25) to the API order (26) the kinematics take; RHipYawPitch is LHipYawPitch's motor.
      for (let i = 0; i < api.length; i++) api[i] = Number(lola[API_TO_LOLA[i]!] ?? 0);
      return api;
    },
    poses(q, out) {
      fk.update(q);
      out.set(fk.poses);
    },
    color: [0.92, 0.92, 0.95],
    contactFrames: NAO_CONTACT_FRAMES,
    solids: [
      { frame: at("Torso"), kind: "cube", sizeM: [0.08, 0.14, 0.16], atM: [-0.01, 0, 0.03] },
      { frame: at("Head"), kind: "sphere", sizeM: [0.12, 0.12, 0.12], atM: [0, 0, 0.06] },
      { frame: at("LSole"), kind: "cube", sizeM: [0.16, 0.088, 0.01], atM: [0.02, 0, 0.005] },
      { frame: at("RSole"), kind: "cube", sizeM: [0.16, 0.088, 0.01], atM: [0.02, 0, 0.005] },
      { frame: at("Torso"), kind: "cube", sizeM: [0.06, 2 * L.hipOffsetY + 0.04, 0.03], atM: [0, 0, -L.hipOffsetZ] },
    ],
  };
}

// ---- AIRBOT P7 ---------------------------------------------------------------------------------

function p7Frames(): BodyFrames {
  const fk = new P7Kinematics();
  const frames = ["p7/base", ...Array.from({ length: P7_JOINT_COUNT }, (_, i) => `p7/link${i + 1}`), "p7/flange"];
  return {
    frames,
    parents: frames.map((_, i) => i - 1),
    joints(m) {
      const q = m.joint_positions;
      return Array.isArray(q) && q.length === P7_JOINT_COUNT ? (q as number[]) : null;
    },
    poses(q, out) {
      fk.update(q);
      setPose(out, 0, IDENTITY, 0, 0, 0, 0);
      for (let i = 0; i < P7_JOINT_COUNT; i++) setPose(out, i + 1, fk.rotation, 9 * i, fk.jointPosM[3 * i]!, fk.jointPosM[3 * i + 1]!, fk.jointPosM[3 * i + 2]!);
      setPose(out, P7_JOINT_COUNT + 1, fk.rotation, 9 * (P7_JOINT_COUNT - 1), fk.flangeM[0]!, fk.flangeM[1]!, fk.flangeM[2]!);
    },
    color: [0.85, 0.55, 0.2],
    // a physics contact (P7_CONTACT_LINKS): link i between its joint's frame and the next one
    contactFrames: P7_CONTACT_FRAMES,
    solids: [{ frame: 0, kind: "cylinder", sizeM: [0.12, 0.12, P7_BASE_HEIGHT_M], atM: [0, 0, P7_BASE_HEIGHT_M / 2] }],
  };
}

// ---- TNY-360 -----------------------------------------------------------------------------------

const TNY_PER_LEG = ["Hip", "Thigh", "Calf", "Foot"] as const;

function tnyFrames(): BodyFrames {
  const frames = ["tny360/body"];
  const parents = [-1];
  for (const leg of LEG_NAMES) {
    TNY_PER_LEG.forEach((part, k) => {
      frames.push(`tny360/${leg}${part}`);
      parents.push(k === 0 ? 0 : frames.length - 2);
    });
  }
  const r = new Float64Array(9);
  const s = new Float64Array(9);
  return {
    frames,
    parents,
    joints(m) {
      const q = m.joint_positions;
      return Array.isArray(q) && q.length >= 12 ? (q as number[]) : null;
    },
    poses(q, out) {
      setPose(out, 0, IDENTITY, 0, 0, 0, 0);
      for (let leg = 0; leg < LEG_NAMES.length; leg++) {
        // legFK in frames: the hip turns about x (by −roll; a mirrored leg by +roll, with its offset
        // on +y), the thigh about y by −pitch, the calf about y by −knee (kinematics.ts).
        const mirrored = LEG_Y_INVERTED[leg]!;
        const roll = finite(q[3 * leg]);
        const pitch = finite(q[3 * leg + 1]);
        const knee = finite(q[3 * leg + 2]);
        const f = 1 + 4 * leg;
        rotX(mirrored ? roll : -roll, r);
        setPose(out, f, r, 0, HIP_POSITIONS_M[2 * leg]!, HIP_POSITIONS_M[2 * leg + 1]!, 0);
        childPose(out, f, 0, mirrored ? HIP_OFFSET_M : -HIP_OFFSET_M, 0, rotY(-pitch, s), f + 1);
        childPose(out, f + 1, 0, 0, -THIGH_LENGTH_M, rotY(-knee, s), f + 2);
        childPose(out, f + 2, 0, 0, -CALF_LENGTH_M, IDENTITY, f + 3);
      }
    },
    color: [0.3, 0.6, 0.9],
    // a physics contact (TNY360_CONTACT_LINKS): the body at its centre, a paw at its leg's foot frame
    contactFrames: Object.fromEntries([["Body", [0, 0] as const], ...LEG_NAMES.map((leg, l) => [`${leg}Paw`, [4 + 4 * l, 4 + 4 * l] as const])]),
    solids: [{ frame: 0, kind: "cube", sizeM: [2 * HIP_POS_X_M + 0.04, 2 * HIP_POS_Y_M, 0.05], atM: [0, 0, 0] }],
  };
}

/** Per body (a new body does not compile without its entry). */
export const BODY_FRAMES: { readonly [K in BodyKind]: () => BodyFrames } = {
  nao: naoFrames,
  p7: p7Frames,
  tny360: tnyFrames,
};

// ---- messages ----------------------------------------------------------------------------------

const IDENTITY = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);

function finite(v: number | undefined): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function setPose(out: Float64Array, f: number, rot: ArrayLike<number>, at: number, x: number, y: number, z: number): void {
  for (let i = 0; i < 9; i++) out[12 * f + i] = rot[at + i]!;
  out[12 * f + 9] = x;
  out[12 * f + 10] = y;
  out[12 * f + 11] = z;
}

/** Frame `child` = frame `parent` · Trans(x, y, z) · rot. */
function childPose(out: Float64Array, parent: number, x: number, y: number, z: number, rot: ArrayLike<number>, child: number): void {
  const p = 12 * parent;
  const c = 12 * child;
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) out[c + 3 * i + j] = out[p + 3 * i]! * rot[j]! + out[p + 3 * i + 1]! * rot[3 + j]! + out[p + 3 * i + 2]! * rot[6 + j]!;
    out[c + 9 + i] = out[p + 9 + i]! + out[p + 3 * i]! * x + out[p + 3 * i + 1]! * y + out[p + 3 * i + 2]! * z;
  }
}

function rotX(a: number, out: Float64Array): Float64Array {
  const c = Math.cos(a);
  const s = Math.sin(a);
  out.set([1, 0, 0, 0, c, -s, 0, s, c]);
  return out;
}

function rotY(a: number, out: Float64Array): Float64Array {
  const c = Math.cos(a);
  const s = Math.sin(a);
  out.set([c, 0, s, 0, 1, 0, -s, 0, c]);
  return out;
}

/** Unit quaternion of a row-major rotation matrix at `m[at..at+8]`. */
export function quaternionOf(m: ArrayLike<number>, at = 0): { x: number; y: number; z: number; w: number } {
  const r = (i: number) => m[at + i]!;
  const tr = r(0) + r(4) + r(8);
  if (tr > 0) {
    const s = Math.sqrt(tr + 1) * 2;
    return { x: (r(7) - r(5)) / s, y: (r(2) - r(6)) / s, z: (r(3) - r(1)) / s, w: s / 4 };
  }
  if (r(0) > r(4) && r(0) > r(8)) {
    const s = Math.sqrt(1 + r(0) - r(4) - r(8)) * 2;
    return { x: s / 4, y: (r(1) + r(3)) / s, z: (r(2) + r(6)) / s, w: (r(7) - r(5)) / s };
  }
  if (r(4) > r(8)) {
    const s = Math.sqrt(1 + r(4) - r(0) - r(8)) * 2;
    return { x: (r(1) + r(3)) / s, y: s / 4, z: (r(5) + r(7)) / s, w: (r(2) - r(6)) / s };
  }
  const s = Math.sqrt(1 + r(8) - r(0) - r(4)) * 2;
  return { x: (r(2) + r(6)) / s, y: (r(5) + r(7)) / s, z: s / 4, w: (r(3) - r(1)) / s };
}

/** Pose of frame `c` in frame `p` (both given in the root frame): rotation Rpᵀ·Rc, translation Rpᵀ·(tc − tp). */
function relative(poses: Float64Array, p: number, c: number, rot: Float64Array): { x: number; y: number; z: number } {
  const P = 12 * p;
  const C = 12 * c;
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) rot[3 * i + j] = poses[P + i]! * poses[C + j]! + poses[P + 3 + i]! * poses[C + 3 + j]! + poses[P + 6 + i]! * poses[C + 6 + j]!;
  const dx = poses[C + 9]! - poses[P + 9]!;
  const dy = poses[C + 10]! - poses[P + 10]!;
  const dz = poses[C + 11]! - poses[P + 11]!;
  return {
    x: poses[P]! * dx + poses[P + 3]! * dy + poses[P + 6]! * dz,
    y: poses[P + 1]! * dx + poses[P + 4]! * dy + poses[P + 7]! * dz,
    z: poses[P + 2]! * dx + poses[P + 5]! * dy + poses[P + 8]! * dz,
  };
}

function stamp(logTimeNs: bigint): { sec: number; nsec: number } {
  return { sec: Number(logTimeNs / 1_000_000_000n), nsec: Number(logTimeNs % 1_000_000_000n) };
}

/** The frame a physics body's base pose is given in (z up, the floor at z = 0). */
export const WORLD_FRAME = "world";
/** The scene entity that marks the contacts (replaced with every transform). */
export const CONTACTS_ID = "world/contacts";

/** A state message's physics world, as the state carries it (`sim`), or null. */
interface SimWorldJson {
  readonly base_position_m: readonly [number, number, number];
  readonly base_orientation_xyzw: readonly [number, number, number, number];
  readonly fallen: boolean;
  readonly contacts: ReadonlyArray<{ readonly link: string; readonly force_n: number }>;
}
function worldOf(message: Json): SimWorldJson | null {
  const w = message.sim as Partial<SimWorldJson> | undefined;
  if (!w || typeof w !== "object" || !Array.isArray(w.base_position_m) || w.base_position_m.length !== 3 || !Array.isArray(w.base_orientation_xyzw) || w.base_orientation_xyzw.length !== 4)
    return null;
  return { base_position_m: w.base_position_m, base_orientation_xyzw: w.base_orientation_xyzw, fallen: w.fallen === true, contacts: Array.isArray(w.contacts) ? w.contacts : [] };
}

/** v rotated by the unit quaternion (x, y, z, w). */
function rotateByQuaternion(x: number, y: number, z: number, w: number, vx: number, vy: number, vz: number): [number, number, number] {
  // t = 2 q×v; v' = v + w t + q×t
  const tx = 2 * (y * vz - z * vy);
  const ty = 2 * (z * vx - x * vz);
  const tz = 2 * (x * vy - y * vx);
  return [vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx)];
}

/** The ground: a 6 m square, 1 cm thick, its top at z = 0 of the world. */
const GROUND: Json = {
  frame_id: WORLD_FRAME,
  id: "world/ground",
  lifetime: { sec: 0, nsec: 0 },
  frame_locked: false,
  metadata: [],
  arrows: [],
  cubes: [{ pose: { position: { x: 0, y: 0, z: -0.005 }, orientation: { x: 0, y: 0, z: 0, w: 1 } }, size: { x: 6, y: 6, z: 0.01 }, color: { r: 0.3, g: 0.5, b: 0.3, a: 0.6 } }],
  spheres: [],
  cylinders: [],
  lines: [],
  triangles: [],
  texts: [],
  models: [],
};

/** A body's viewer messages from its recorded state messages. */
export class Viewer3d {
  readonly body: BodyFrames;
  readonly #poses: Float64Array;
  readonly #rot = new Float64Array(9);
  #scene: Json | null = null;

  constructor(kind: BodyKind) {
    this.body = BODY_FRAMES[kind]();
    this.#poses = new Float64Array(12 * this.body.frames.length);
  }

  /** `foxglove.FrameTransforms` for a state message (null when it carries no joint angles); rooted at `world` when it carries a physics world. */
  transforms(message: Json, logTimeNs: bigint): Json | null {
    const q = this.body.joints(message);
    if (!q) return null;
    this.body.poses(q, this.#poses);
    const timestamp = stamp(logTimeNs);
    const transforms: Json[] = [];
    const { frames, parents } = this.body;
    const w = worldOf(message);
    if (w) {
      const [x, y, z] = w.base_position_m;
      const [qx, qy, qz, qw] = w.base_orientation_xyzw;
      transforms.push({ timestamp, parent_frame_id: WORLD_FRAME, child_frame_id: frames[0], translation: { x, y, z }, rotation: { x: qx, y: qy, z: qz, w: qw } });
    }
    for (let c = 1; c < frames.length; c++) {
      const translation = relative(this.#poses, parents[c]!, c, this.#rot);
      transforms.push({ timestamp, parent_frame_id: frames[parents[c]!], child_frame_id: frames[c], translation, rotation: quaternionOf(this.#rot) });
    }
    return { transforms };
  }

  /** `foxglove.SceneUpdate`: one entity per frame with its bones, joint and solids; with `world`, the ground too. */
  scene(logTimeNs: bigint, world = false): Json {
    this.#scene ??= this.#buildScene();
    const timestamp = stamp(logTimeNs);
    const entities = (this.#scene.entities as Json[]).map((e) => ({ ...e, timestamp }));
    if (world) entities.push({ ...GROUND, timestamp });
    return { deletions: [], entities };
  }

  /**
   * The contacts entity (`world/contacts`, in `world`) for a state message after `transforms()` ran
   * on it: a disc on the floor under each link that touches it and an arrow up (1 cm per 10 N, at
   * most 0.5 m), and "fallen" over the robot; null without a physics world.
   */
  contacts(message: Json, logTimeNs: bigint): Json | null {
    const w = worldOf(message);
    if (!w) return null;
    const timestamp = stamp(logTimeNs);
    const p = this.#poses;
    const [bx, by, bz] = w.base_position_m;
    const [qx, qy, qz, qw] = w.base_orientation_xyzw;
    // A point in the base frame, in the world.
    const toWorld = (x: number, y: number, z: number): [number, number, number] => {
      const r = rotateByQuaternion(qx, qy, qz, qw, x, y, z);
      return [r[0] + bx, r[1] + by, r[2] + bz];
    };
    const red = { r: 0.9, g: 0.2, b: 0.15, a: 0.9 };
    const up = { x: 0, y: -Math.SQRT1_2, z: 0, w: Math.SQRT1_2 }; // the arrow's +x turned to +z
    const spheres: Json[] = [];
    const arrows: Json[] = [];
    for (const c of w.contacts) {
      const pair = this.body.contactFrames[c.link];
      if (!pair || !(c.force_n > 0)) continue;
      const [a, b] = pair;
      const [x, y] = toWorld((p[12 * a + 9]! + p[12 * b + 9]!) / 2, (p[12 * a + 10]! + p[12 * b + 10]!) / 2, (p[12 * a + 11]! + p[12 * b + 11]!) / 2);
      const position = { x, y, z: 0.002 };
      spheres.push({ pose: { position, orientation: { x: 0, y: 0, z: 0, w: 1 } }, size: { x: 0.05, y: 0.05, z: 0.004 }, color: red });
      const length = Math.min(0.5, c.force_n / 1000);
      arrows.push({ pose: { position, orientation: up }, shaft_length: length, shaft_diameter: 0.006, head_length: 0.02, head_diameter: 0.015, color: red });
    }
    const texts: Json[] = w.fallen
      ? [
          {
            pose: { position: { x: bx, y: by, z: Math.max(bz, 0.1) + 0.25 }, orientation: { x: 0, y: 0, z: 0, w: 1 } },
            billboard: true,
            font_size: 24,
            scale_invariant: true,
            color: red,
            text: "fallen",
          },
        ]
      : [];
    const entity = {
      timestamp,
      frame_id: WORLD_FRAME,
      id: CONTACTS_ID,
      lifetime: { sec: 0, nsec: 0 },
      frame_locked: false,
      metadata: [],
      arrows,
      cubes: [],
      spheres,
      cylinders: [],
      lines: [],
      triangles: [],
      texts,
      models: [],
    };
    return { deletions: [], entities: [entity] };
  }

  #buildScene(): Json {
    const { frames, parents, color, solids } = this.body;
    const zero = new Float64Array(12 * frames.length);
    this.body.poses(new Float64Array(64), zero);
    const [r, g, b] = color;
    const rgba = { r, g, b, a: 1 };
    const joint = { r: r * 0.6, g: g * 0.6, b: b * 0.6, a: 1 };
    const noTurn = { x: 0, y: 0, z: 0, w: 1 };
    const at = (p: readonly [number, number, number]) => ({ position: { x: p[0], y: p[1], z: p[2] }, orientation: noTurn });
    const entities: Json[] = frames.map((frame, f) => {
      // The bones: a line from this frame's origin to each child's (fixed in this frame: the child's offset).
      const points: Json[] = [];
      for (let c = 0; c < frames.length; c++) {
        if (parents[c] !== f) continue;
        const t = relative(zero, f, c, this.#rot);
        points.push({ x: 0, y: 0, z: 0 }, t);
      }
      const mine = solids.filter((s) => s.frame === f);
      return {
        frame_id: frame,
        id: `${frame}#shape`,
        lifetime: { sec: 0, nsec: 0 },
        frame_locked: true,
        metadata: [],
        arrows: [],
        cubes: mine.filter((s) => s.kind === "cube").map((s) => ({ pose: at(s.atM), size: { x: s.sizeM[0], y: s.sizeM[1], z: s.sizeM[2] }, color: rgba })),
        spheres: [
          { pose: at([0, 0, 0]), size: { x: 0.02, y: 0.02, z: 0.02 }, color: joint },
          ...mine.filter((s) => s.kind === "sphere").map((s) => ({ pose: at(s.atM), size: { x: s.sizeM[0], y: s.sizeM[1], z: s.sizeM[2] }, color: rgba })),
        ],
        cylinders: mine.filter((s) => s.kind === "cylinder").map((s) => ({ pose: at(s.atM), size: { x: s.sizeM[0], y: s.sizeM[1], z: s.sizeM[2] }, bottom_scale: 1, top_scale: 1, color: rgba })),
        lines: points.length > 0 ? [{ type: 1, pose: at([0, 0, 0]), thickness: 0.012, scale_invariant: false, points, color: rgba, colors: [], indices: [] }] : [],
        triangles: [],
        texts: [],
        models: [],
      };
    });
    return { deletions: [], entities };
  }
}
