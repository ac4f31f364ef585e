/**
 * The robot in the viewers' 3D panel (src/record/viewer-3d.ts): per body, the transforms form one
 * tree rooted at the body's base, and composing them (as a viewer does, through the quaternions
 * in the message) puts every link where the body's own kinematics puts it, for any joint angles:
 * the NAO's frames (NaoKinematics), the P7's joints and flange (P7Kinematics), the TNY-360's feet
 * (footInBody). The scene's shapes hang on those frames; both schemas pass Lichtblick's rule and
 * the messages validate against them. Recordings carry both channels (strict-mcap.test.ts).
 */
import fc from "fast-check";
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { API_ORDER } from "../../src/bodies/nao/joints.js";
import { NAO_FRAMES, NaoKinematics } from "../../src/bodies/nao/kinematics.js";
import { P7Kinematics } from "../../src/bodies/p7/kinematics.js";
import { footInBody } from "../../src/bodies/tny360/kinematics.js";
import { BODY_KINDS } from "../../src/bodies/registry.js";
import { API_TO_LOLA } from "../../src/bodies/nao/joints.js";
import { FRAME_TRANSFORMS_SCHEMA, FRAME_TRANSFORMS_SCHEMA_NAME, SCENE_UPDATE_SCHEMA, SCENE_UPDATE_SCHEMA_NAME } from "../../src/record/foxglove-schemas.js";
import { Viewer3d } from "../../src/record/viewer-3d.js";
import { officialProblems } from "../support/foxglove-official.js";
import { singleTypeProblems } from "../support/single-type.js";

type Json = Record<string, unknown>;
interface V3 {
  x: number;
  y: number;
  z: number;
}
interface Q extends V3 {
  w: number;
}
interface Tf {
  parent_frame_id: string;
  child_frame_id: string;
  translation: V3;
  rotation: Q;
}

const qmul = (a: Q, b: Q): Q => ({
  w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
  x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
  y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
  z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
});
const rotate = (q: Q, v: V3): V3 => {
  const r = qmul(qmul(q, { w: 0, ...v }), { w: q.w, x: -q.x, y: -q.y, z: -q.z });
  return { x: r.x, y: r.y, z: r.z };
};

/** Every frame's pose in the root, composed from the message as a viewer does; throws unless one tree. */
function compose(msg: Json, root: string): Map<string, { p: V3; q: Q }> {
  const tfs = msg.transforms as Tf[];
  const world = new Map<string, { p: V3; q: Q }>([[root, { p: { x: 0, y: 0, z: 0 }, q: { x: 0, y: 0, z: 0, w: 1 } }]]);
  const children = new Set<string>();
  for (const t of tfs) {
    if (children.has(t.child_frame_id)) throw new Error(`${t.child_frame_id} has two parents`);
    children.add(t.child_frame_id);
    const parent = world.get(t.parent_frame_id);
    if (!parent) throw new Error(`${t.child_frame_id}'s parent ${t.parent_frame_id} is not (yet) in the tree from ${root}`);
    const n = Math.hypot(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
    expect(n).toBeCloseTo(1, 9);
    const d = rotate(parent.q, t.translation);
    world.set(t.child_frame_id, { p: { x: parent.p.x + d.x, y: parent.p.y + d.y, z: parent.p.z + d.z }, q: qmul(parent.q, t.rotation) });
  }
  expect(children.has(root)).toBe(false);
  return world;
}

const angles = (n: number) => fc.array(fc.double({ min: -Math.PI, max: Math.PI, noNaN: true }), { minLength: n, maxLength: n });
const close = (a: V3, b: ArrayLike<number>, at = 0) => {
  expect(a.x).toBeCloseTo(b[at]!, 9);
  expect(a.y).toBeCloseTo(b[at + 1]!, 9);
  expect(a.z).toBeCloseTo(b[at + 2]!, 9);
};

describe("foxglove.FrameTransforms from the kinematics", () => {
  it("NAO: one tree from nao/Torso; every frame where NaoKinematics puts it (from /nao/state's LoLA-order positions)", () => {
    const v = new Viewer3d("nao");
    const fk = new NaoKinematics();
    fc.assert(
      fc.property(angles(25), (lola) => {
        const msg = v.transforms({ position: lola }, 1_000_000_123n)!;
        const world = compose(msg, "nao/Torso");
        expect(world.size).toBe(NAO_FRAMES.length);
        fk.update(API_ORDER.map((_, i) => lola[API_TO_LOLA[i]!]!));
        NAO_FRAMES.forEach((f, i) => {
          close(world.get(`nao/${f}`)!.p, fk.poses, 12 * i + 9);
        });
      }),
      { numRuns: 50 },
    );
  });

  it("AIRBOT P7: one chain from p7/base; every joint and the flange where P7Kinematics puts them", () => {
    const v = new Viewer3d("p7");
    const fk = new P7Kinematics();
    fc.assert(
      fc.property(angles(7), (q) => {
        const world = compose(v.transforms({ joint_positions: q }, 5n)!, "p7/base");
        fk.update(q);
        for (let i = 0; i < 7; i++) close(world.get(`p7/link${i + 1}`)!.p, fk.jointPosM, 3 * i);
        close(world.get("p7/flange")!.p, fk.flangeM);
      }),
      { numRuns: 50 },
    );
  });

  it("TNY-360: one tree from tny360/body; every foot where footInBody puts it", () => {
    const v = new Viewer3d("tny360");
    const foot = new Float64Array(3);
    fc.assert(
      fc.property(angles(14), (q) => {
        const world = compose(v.transforms({ joint_positions: q }, 5n)!, "tny360/body");
        expect(world.size).toBe(1 + 4 * 4);
        ["FrontLeft", "BackLeft", "BackRight", "FrontRight"].forEach((leg, l) => {
          footInBody(l, q[3 * l]!, q[3 * l + 1]!, q[3 * l + 2]!, foot);
          close(world.get(`tny360/${leg}Foot`)!.p, foot);
        });
      }),
      { numRuns: 50 },
    );
  });

  it("a state without joint angles gives no transforms (nothing made up)", () => {
    expect(new Viewer3d("p7").transforms({ joint_positions: [1, 2] }, 0n)).toBeNull();
    expect(new Viewer3d("nao").transforms({}, 0n)).toBeNull();
  });
});

describe.each(BODY_KINDS)("%s: the scene and the schemas", (kind) => {
  it("shapes on the tree's frames, one entity per frame, frame_locked; both messages valid and single-typed", () => {
    const v = new Viewer3d(kind);
    const scene = v.scene(1_500_000_000n);
    const entities = scene.entities as Json[];
    expect(entities.map((e) => e.frame_id)).toEqual(v.body.frames);
    for (const e of entities) expect(e).toMatchObject({ frame_locked: true, lifetime: { sec: 0, nsec: 0 }, timestamp: { sec: 1, nsec: 500_000_000 } });
    // Every bone ends at a child frame's origin (the lines are drawn in the parent's frame).
    const bones = entities.flatMap((e) => (e.lines as Json[]).flatMap((l) => l.points as V3[]));
    expect(bones.length).toBe(2 * (v.body.frames.length - 1));
    expect(singleTypeProblems(SCENE_UPDATE_SCHEMA)).toEqual([]);
    expect(singleTypeProblems(FRAME_TRANSFORMS_SCHEMA)).toEqual([]);
    expect(Compile(SCENE_UPDATE_SCHEMA as never).Check(scene)).toBe(true);
    const q = new Array(30).fill(0.1);
    const tf = v.transforms({ position: q, joint_positions: kind === "p7" ? q.slice(0, 7) : q.slice(0, 14) }, 7n)!;
    expect(Compile(FRAME_TRANSFORMS_SCHEMA as never).Check(tf)).toBe(true);
  });
});

describe("a physics body's world (the state's sim): rooted at world, the ground, the contacts", () => {
  const sim = (over: Partial<Json> = {}): Json => ({
    time_s: 1,
    base_position_m: [0.1, -0.2, 0.3],
    base_orientation_xyzw: [0, Math.sin(0.2), 0, Math.cos(0.2)], // pitched 0.4 rad
    fallen: false,
    real_time_factor: 1,
    contacts: [
      { link: "LFoot", force_n: 26 },
      { link: "RTibia", force_n: 300 },
      { link: "Nowhere", force_n: 5 },
    ],
    ...over,
  });

  it("one tree from world: world → nao/Torso is the base pose, every frame where base pose · NaoKinematics puts it", () => {
    const v = new Viewer3d("nao");
    const fk = new NaoKinematics();
    fc.assert(
      fc.property(angles(25), (lola) => {
        const s = sim();
        const world = compose(v.transforms({ position: lola, sim: s }, 9n)!, "world");
        expect(world.size).toBe(NAO_FRAMES.length + 1);
        const base = world.get("nao/Torso")!;
        close(base.p, s.base_position_m as number[]);
        const q = s.base_orientation_xyzw as number[];
        expect([base.q.x, base.q.y, base.q.z, base.q.w]).toEqual(q);
        fk.update(API_ORDER.map((_, i) => lola[API_TO_LOLA[i]!]!));
        NAO_FRAMES.forEach((f, i) => {
          const local = { x: fk.poses[12 * i + 9]!, y: fk.poses[12 * i + 10]!, z: fk.poses[12 * i + 11]! };
          const r = rotate({ x: q[0]!, y: q[1]!, z: q[2]!, w: q[3]! }, local);
          close(world.get(`nao/${f}`)!.p, [r.x + 0.1, r.y - 0.2, r.z + 0.3]);
        });
      }),
      { numRuns: 30 },
    );
  });

  it("without a world the same message is rooted at the base (kinematic simulator, a robot)", () => {
    const v = new Viewer3d("nao");
    const msg = v.transforms({ position: new Array(25).fill(0) }, 9n)!;
    expect(compose(msg, "nao/Torso").size).toBe(NAO_FRAMES.length);
    expect((msg.transforms as Tf[]).some((t) => t.parent_frame_id === "world")).toBe(false);
    expect(v.contacts({ position: new Array(25).fill(0) }, 9n)).toBeNull();
    expect((v.scene(9n).entities as Json[]).some((e) => e.id === "world/ground")).toBe(false);
  });

  it("the scene adds the ground at z = 0; the contacts mark each touching link on the floor under it, an arrow by its force, and a fall", () => {
    const v = new Viewer3d("nao");
    const s = sim();
    const lola = new Array(25).fill(0);
    const tf = v.transforms({ position: lola, sim: s }, 2_000_000_000n)!;
    const world = compose(tf, "world");
    const scene = v.scene(2_000_000_000n, true);
    const ground = (scene.entities as Json[]).find((e) => e.id === "world/ground")!;
    expect(ground.frame_id).toBe("world");
    const [cube] = ground.cubes as Array<{ pose: { position: V3 }; size: V3 }>;
    expect(cube!.pose.position.z + cube!.size.z / 2).toBeCloseTo(0, 12);
    expect(Compile(SCENE_UPDATE_SCHEMA as never).Check(scene)).toBe(true);

    const c = v.contacts({ position: lola, sim: s }, 2_000_000_000n)!;
    expect(Compile(SCENE_UPDATE_SCHEMA as never).Check(c)).toBe(true);
    const [e] = c.entities as Json[];
    expect(e).toMatchObject({ id: "world/contacts", frame_id: "world", texts: [] });
    const spheres = e!.spheres as Array<{ pose: { position: V3 } }>;
    const arrows = e!.arrows as Array<{ shaft_length: number; pose: { position: V3; orientation: Q } }>;
    expect(spheres).toHaveLength(2); // the unknown link is skipped
    const sole = world.get("nao/LSole")!.p;
    expect(spheres[0]!.pose.position.x).toBeCloseTo(sole.x, 9);
    expect(spheres[0]!.pose.position.y).toBeCloseTo(sole.y, 9);
    expect(spheres[0]!.pose.position.z).toBeCloseTo(0, 2);
    const knee = world.get("nao/RKnee")!.p;
    const ankle = world.get("nao/RAnkle")!.p;
    expect(spheres[1]!.pose.position.x).toBeCloseTo((knee.x + ankle.x) / 2, 9);
    expect(arrows.map((a) => a.shaft_length)).toEqual([0.026, 0.3]);
    // The arrows point up in the world.
    const dir = rotate(arrows[0]!.pose.orientation, { x: 1, y: 0, z: 0 });
    expect(dir.z).toBeCloseTo(1, 9);

    const fallen = v.contacts({ position: lola, sim: sim({ fallen: true, contacts: [] }) }, 3n)!;
    const [f] = fallen.entities as Json[];
    expect(f!.spheres).toEqual([]);
    expect((f!.texts as Array<{ text: string }>).map((t) => t.text)).toEqual(["fallen"]);
  });
});

describe("Foxglove's own definitions (@foxglove/schemas, the panels' types): every message bodylink builds is valid", () => {
  it.each(BODY_KINDS)("%s: transforms for any joint angles and the scene", (kind) => {
    const v = new Viewer3d(kind);
    const n = { nao: 25, p7: 7, tny360: 16 }[kind];
    fc.assert(
      fc.property(angles(n), (q) => {
        const msg = kind === "nao" ? v.transforms({ position: q }, 3n) : v.transforms({ joint_positions: q }, 3n);
        expect(officialProblems(FRAME_TRANSFORMS_SCHEMA_NAME, msg)).toEqual([]);
      }),
      { numRuns: 50 },
    );
    expect(officialProblems(SCENE_UPDATE_SCHEMA_NAME, v.scene(1_500_000_000n))).toEqual([]);
  });

  it("NAO with a physics world: transforms from world, the ground, contacts and a fall", () => {
    const v = new Viewer3d("nao");
    const lola = Array.from({ length: 25 }, (_, i) => 0.05 * i);
    for (const fallen of [false, true]) {
      const sim = {
        time_s: 2,
        base_position_m: [0.1, -0.2, 0.3],
        base_orientation_xyzw: [0, 0, 0, 1],
        fallen,
        real_time_factor: 1,
        contacts: [
          { link: "LFoot", force_n: 26 },
          { link: "RTibia", force_n: 300 },
        ],
      };
      expect(officialProblems(FRAME_TRANSFORMS_SCHEMA_NAME, v.transforms({ position: lola, sim }, 2_000_000_000n))).toEqual([]);
      expect(officialProblems(SCENE_UPDATE_SCHEMA_NAME, v.scene(2_000_000_000n, true))).toEqual([]);
      expect(officialProblems(SCENE_UPDATE_SCHEMA_NAME, v.contacts({ position: lola, sim }, 2_000_000_000n))).toEqual([]);
    }
  });

  it("the check is Foxglove's: a transform without its timestamp, or a quaternion as an array, is refused", () => {
    const msg = new Viewer3d("p7").transforms({ joint_positions: [0, 0, 0, 0, 0, 0, 0] }, 3n) as { transforms: Array<Record<string, unknown>> };
    const { timestamp: _, ...noStamp } = msg.transforms[0]!;
    expect(officialProblems(FRAME_TRANSFORMS_SCHEMA_NAME, { transforms: [noStamp] }).join()).toMatch(/timestamp/);
    expect(officialProblems(FRAME_TRANSFORMS_SCHEMA_NAME, { transforms: [{ ...msg.transforms[0], rotation: [0, 0, 0, 1] }] }).join()).toMatch(/rotation/);
  });
});
