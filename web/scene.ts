/**
 * The 3D view (three.js): each body drawn from its own kinematics, in the robot's frame (x
 * forward, y left, z up, metres), standing on a grid. Joints live from the stream; the commanded
 * pose as a translucent ghost while this page holds control (or, on the TNY-360, the runtime's
 * joint targets). Orbit with the mouse (drag, wheel, right-drag pans).
 *
 * With a physics body (`setWorld`, from the state's `sim`) the robot stands where the simulator
 * has it instead: its torso at the world pose (walking, falling, lying), a ground plane under the
 * grid, a red disc under each link touching the floor, and the view's `data-fallen` set.
 *
 * Rendered on demand only: a new state or a camera move asks for one frame, so an idle page
 * costs nothing and a 20 Hz stream costs 20 frames a second, whatever the display's rate.
 */
import {
  AmbientLight,
  BoxGeometry,
  Color,
  CylinderGeometry,
  DirectionalLight,
  GridHelper,
  Group,
  HemisphereLight,
  Matrix4,
  Mesh,
  MeshStandardMaterial,
  PerspectiveCamera,
  PlaneGeometry,
  Quaternion,
  Scene,
  SphereGeometry,
  Vector3,
  WebGLRenderer,
} from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { NAO_BONES, NAO_FRAME_INDEX as NF, NAO_FRAMES, NaoKinematics } from "../src/bodies/nao/kinematics.js";
import { NAO_CONTACT_FRAMES } from "../src/bodies/nao/sim-world.js";
import { P7_JOINT_COUNT } from "../src/bodies/p7/joints.js";
import { P7_CONTACT_FRAMES } from "../src/bodies/p7/mjcf.js";
import { P7Kinematics } from "../src/bodies/p7/kinematics.js";
import { LEG_NAMES, LEG_Y_INVERTED } from "../src/bodies/tny360/joints.js";
import { footInBody, HIP_OFFSET_M, HIP_POSITIONS_M, rotationXYZ, THIGH_LENGTH_M } from "../src/bodies/tny360/kinematics.js";
import type { BodyKind } from "../src/client/index.js";

const UP = new Vector3(0, 1, 0);
/** Show the commanded pose once some joint is this far from it. */
const GHOST_APART_RAD = 0.03;

/** Unit-length cylinders and spheres, scaled per bone; one geometry each, shared. */
const BONE_GEOMETRY = new CylinderGeometry(1, 1, 1, 16);
const JOINT_GEOMETRY = new SphereGeometry(1, 16, 12);
const BOX_GEOMETRY = new BoxGeometry(1, 1, 1);

interface Box {
  /** Frame (point index) the box moves with, and its offset/size in that frame, m. */
  readonly frame: number;
  readonly offset: readonly [number, number, number];
  readonly size: readonly [number, number, number];
  readonly mesh: Mesh;
}

/**
 * A body's drawing: points (joint origins) joined by bones, plus boxes that follow a frame's
 * rotation. `pose(points, rotations)` moves everything; points are 3·n numbers, rotations 9·n.
 */
class Figure {
  readonly group = new Group();
  readonly #bones: Array<{ a: number; b: number; mesh: Mesh; radius: number }> = [];
  readonly #joints: Array<{ i: number; mesh: Mesh }> = [];
  readonly #boxes: Box[] = [];
  readonly #a = new Vector3();
  readonly #b = new Vector3();
  readonly #d = new Vector3();
  readonly #m = new Matrix4();
  readonly #q = new Quaternion();

  constructor(
    readonly material: MeshStandardMaterial,
    readonly jointMaterial: MeshStandardMaterial,
  ) {}

  bone(a: number, b: number, radius: number, material = this.material): void {
    const mesh = new Mesh(BONE_GEOMETRY, material);
    this.group.add(mesh);
    this.#bones.push({ a, b, mesh, radius });
  }

  joint(i: number, radius: number, material = this.jointMaterial): void {
    const mesh = new Mesh(JOINT_GEOMETRY, material);
    mesh.scale.setScalar(radius);
    this.group.add(mesh);
    this.#joints.push({ i, mesh });
  }

  box(frame: number, offset: readonly [number, number, number], size: readonly [number, number, number], material = this.material, round = false): void {
    const mesh = new Mesh(round ? JOINT_GEOMETRY : BOX_GEOMETRY, material);
    // The sphere has radius 1, the box side 1: halve the sizes of a round one.
    const k = round ? 0.5 : 1;
    mesh.scale.set(size[0] * k, size[1] * k, size[2] * k);
    this.group.add(mesh);
    this.#boxes.push({ frame, offset, size, mesh });
  }

  pose(p: ArrayLike<number>, r: ArrayLike<number>): void {
    for (const bone of this.#bones) {
      this.#a.set(p[3 * bone.a]!, p[3 * bone.a + 1]!, p[3 * bone.a + 2]!);
      this.#b.set(p[3 * bone.b]!, p[3 * bone.b + 1]!, p[3 * bone.b + 2]!);
      this.#d.subVectors(this.#b, this.#a);
      const len = this.#d.length();
      bone.mesh.visible = len > 1e-6;
      if (!bone.mesh.visible) continue;
      bone.mesh.position.addVectors(this.#a, this.#b).multiplyScalar(0.5);
      bone.mesh.quaternion.setFromUnitVectors(UP, this.#d.divideScalar(len));
      bone.mesh.scale.set(bone.radius, len, bone.radius);
    }
    for (const j of this.#joints) j.mesh.position.set(p[3 * j.i]!, p[3 * j.i + 1]!, p[3 * j.i + 2]!);
    for (const b of this.#boxes) {
      const o = 9 * b.frame;
      // three's Matrix4.set takes row-major values, as the kinematics store them.
      this.#m.set(r[o]!, r[o + 1]!, r[o + 2]!, 0, r[o + 3]!, r[o + 4]!, r[o + 5]!, 0, r[o + 6]!, r[o + 7]!, r[o + 8]!, 0, 0, 0, 0, 1);
      this.#q.setFromRotationMatrix(this.#m);
      b.mesh.quaternion.copy(this.#q);
      this.#a.set(b.offset[0], b.offset[1], b.offset[2]).applyQuaternion(this.#q);
      b.mesh.position.set(p[3 * b.frame]! + this.#a.x, p[3 * b.frame + 1]! + this.#a.y, p[3 * b.frame + 2]! + this.#a.z);
    }
  }
}

/** A physics body's world, as the state's `sim` carries it (docs/simulation.md). */
export interface ViewWorld {
  readonly base_position_m: readonly number[];
  readonly base_orientation_xyzw: readonly number[];
  readonly fallen: boolean;
  readonly contacts: ReadonlyArray<{ readonly link: string; readonly force_n: number }>;
}

/** Turns joint angles (+ orientation) into points and rotations on the ground, per body. */
interface BodyModel {
  readonly points: Float64Array;
  readonly rotations: Float64Array;
  build(f: Figure): void;
  /**
   * `q`: joint angles (API order); `tilt`: [roll, pitch] rad of the base, or null; `world`: the
   * base's pose in the world (a physics body), which replaces the tilt and the grounding.
   */
  solve(q: ArrayLike<number>, tilt: readonly number[] | null, world?: ViewWorld | null): void;
  /** Per physics contact link, the two points whose midpoint stands for it (none for a body without physics). */
  readonly contactPoints?: Readonly<Record<string, readonly [number, number]>>;
  /** Camera target height and distance. */
  readonly view: { readonly targetZ: number; readonly distance: number };
}

/** Row-major rotation matrix of the unit quaternion (x, y, z, w). */
function quaternionMatrix(x: number, y: number, z: number, w: number, R: Float64Array): void {
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - z * w);
  R[2] = 2 * (x * z + y * w);
  R[3] = 2 * (x * y + z * w);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - x * w);
  R[6] = 2 * (x * z - y * w);
  R[7] = 2 * (y * z + x * w);
  R[8] = 1 - 2 * (x * x + y * y);
}

/**
 * Rotate all points/rotations by R = Ry(pitch)·Rx(roll) and lift the lowest of `feet` to z = 0;
 * with `world`, by the base's orientation and then to its position instead (the simulator's floor is z = 0).
 */
function tiltAndGround(points: Float64Array, rotations: Float64Array, tilt: readonly number[] | null, feet: readonly number[], world: ViewWorld | null = null): void {
  const roll = tilt?.[0] ?? 0;
  const pitch = tilt?.[1] ?? 0;
  const R = new Float64Array(9);
  if (world) {
    const o = world.base_orientation_xyzw;
    quaternionMatrix(o[0]!, o[1]!, o[2]!, o[3]!, R);
  } else rotationXYZ(roll, pitch, 0, R);
  const n = points.length / 3;
  for (let i = 0; i < n; i++) {
    const x = points[3 * i]!,
      y = points[3 * i + 1]!,
      z = points[3 * i + 2]!;
    points[3 * i] = R[0]! * x + R[1]! * y + R[2]! * z;
    points[3 * i + 1] = R[3]! * x + R[4]! * y + R[5]! * z;
    points[3 * i + 2] = R[6]! * x + R[7]! * y + R[8]! * z;
    const o = 9 * i;
    const m = rotations.slice(o, o + 9);
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) rotations[o + 3 * r + c] = R[3 * r]! * m[c]! + R[3 * r + 1]! * m[3 + c]! + R[3 * r + 2]! * m[6 + c]!;
  }
  if (world) {
    const b = world.base_position_m;
    for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) points[3 * i + k] = points[3 * i + k]! + b[k]!;
    return;
  }
  let minZ = Number.POSITIVE_INFINITY;
  for (const f of feet) minZ = Math.min(minZ, points[3 * f + 2]!);
  if (!Number.isFinite(minZ)) return;
  for (let i = 0; i < n; i++) points[3 * i + 2] = points[3 * i + 2]! - minZ;
}

/**
 * The NAO's centre of mass: red, with a thin line down to its ground projection. Drawn over the
 * body (no depth test; transparent objects draw after the opaque ones): it sits inside the torso.
 */
const COM_MATERIAL = new MeshStandardMaterial({ color: 0xc01515, roughness: 0.4, metalness: 0, transparent: true, opacity: 0.95, depthTest: false });

function naoModel(): BodyModel {
  const k = new NaoKinematics();
  const n = NAO_FRAMES.length;
  // Two points after the frames: the centre of mass and its projection on the ground.
  const com = n;
  const comGround = n + 1;
  const points = new Float64Array(3 * (n + 2));
  const rotations = new Float64Array(9 * (n + 2));
  for (const i of [com, comGround]) rotations[9 * i] = rotations[9 * i + 4] = rotations[9 * i + 8] = 1;
  return {
    points,
    rotations,
    view: { targetZ: 0.28, distance: 0.95 },
    contactPoints: NAO_CONTACT_FRAMES,
    build(f) {
      for (const [a, b] of NAO_BONES) if (a !== NF.Torso) f.bone(a, b, a === NF.LHip || a === NF.RHip || a === NF.LKnee || a === NF.RKnee ? 0.022 : 0.017);
      for (const i of [NF.LShoulder, NF.RShoulder, NF.LElbow, NF.RElbow, NF.LWrist, NF.RWrist, NF.LHip, NF.RHip, NF.LKnee, NF.RKnee, NF.LAnkle, NF.RAnkle]) f.joint(i, 0.024);
      // Torso from the hips to the neck (x 85 mm deep, y 130 mm wide); head above the neck; soles.
      f.box(NF.Torso, [-0.005, 0, 0.02], [0.085, 0.135, 0.2]);
      f.box(NF.Head, [0, 0, 0.065], [0.12, 0.135, 0.125], f.jointMaterial, true);
      f.box(NF.Head, [0.055, 0, 0.075], [0.02, 0.1, 0.035], f.material);
      f.box(NF.LSole, [0.02, 0.005, 0.012], [0.16, 0.088, 0.024]);
      f.box(NF.RSole, [0.02, -0.005, 0.012], [0.16, 0.088, 0.024]);
      // On top of the body, so it shows through the torso box's edges and on the floor.
      // The ghost (commanded pose) draws its centre of mass in its own colour.
      const m = f.material.transparent ? f.material : COM_MATERIAL;
      f.joint(com, 0.014, m);
      f.bone(com, comGround, 0.0025, m);
      f.joint(comGround, 0.008, m);
    },
    solve(q, tilt, world) {
      k.update(q);
      for (let i = 0; i < n; i++) {
        points[3 * i] = k.poses[12 * i + 9]!;
        points[3 * i + 1] = k.poses[12 * i + 10]!;
        points[3 * i + 2] = k.poses[12 * i + 11]!;
        rotations.set(k.poses.subarray(12 * i, 12 * i + 9), 9 * i);
      }
      points.set(k.centerOfMass, 3 * com);
      tiltAndGround(points, rotations, tilt, [NF.LSole, NF.RSole], world ?? null);
      // Straight down (gravity is −z once tilted), onto the floor the soles stand on.
      points[3 * comGround] = points[3 * com]!;
      points[3 * comGround + 1] = points[3 * com + 1]!;
      points[3 * comGround + 2] = 0;
    },
  };
}

function p7Model(): BodyModel {
  const k = new P7Kinematics();
  const n = P7_JOINT_COUNT + 2; // base, 7 joints, flange
  const points = new Float64Array(3 * n);
  const rotations = new Float64Array(9 * n);
  return {
    points,
    rotations,
    view: { targetZ: 0.35, distance: 1.5 },
    contactPoints: P7_CONTACT_FRAMES,
    build(f) {
      for (let i = 0; i < n - 1; i++) f.bone(i, i + 1, i < 4 ? 0.032 : 0.024);
      for (let i = 1; i < n - 1; i++) f.joint(i, i < 4 ? 0.042 : 0.032);
      f.box(0, [0, 0, 0.06], [0.16, 0.16, 0.12], f.jointMaterial);
      f.box(n - 1, [0, 0, 0.02], [0.05, 0.09, 0.04]);
    },
    solve(q) {
      k.update(q);
      points.fill(0);
      rotations.fill(0);
      rotations[0] = rotations[4] = rotations[8] = 1;
      for (let i = 0; i < P7_JOINT_COUNT; i++) {
        points[3 * (i + 1)] = k.jointPosM[3 * i]!;
        points[3 * (i + 1) + 1] = k.jointPosM[3 * i + 1]!;
        points[3 * (i + 1) + 2] = k.jointPosM[3 * i + 2]!;
        rotations.set(k.rotation.subarray(9 * i, 9 * i + 9), 9 * (i + 1));
      }
      points.set(k.flangeM, 3 * (n - 1));
      rotations.set(k.rotation.subarray(9 * (P7_JOINT_COUNT - 1), 9 * P7_JOINT_COUNT), 9 * (n - 1));
    },
  };
}

/** The TNY-360's physics contact links (bodies/tny360/mjcf.ts) on its points: the body at its centre, each paw at its foot. */
const TNY_CONTACT_POINTS: Readonly<Record<string, readonly [number, number]>> = Object.freeze(
  Object.fromEntries([["Body", [0, 0] as const], ...LEG_NAMES.map((l, leg) => [`${l}Paw`, [4 + 4 * leg, 4 + 4 * leg] as const])]),
);

/** TNY-360: point 0 = body centre, then per leg: hip, hip-offset end, knee, foot. */
function tnyModel(): BodyModel {
  const n = 1 + 4 * 4;
  const points = new Float64Array(3 * n);
  const rotations = new Float64Array(9 * n);
  const foot = new Float64Array(3);
  const feet = [4, 8, 12, 16];
  return {
    points,
    rotations,
    view: { targetZ: 0.06, distance: 0.8 },
    contactPoints: TNY_CONTACT_POINTS,
    build(f) {
      for (let leg = 0; leg < 4; leg++) {
        const b = 1 + 4 * leg;
        f.bone(b, b + 1, 0.012);
        f.bone(b + 1, b + 2, 0.014);
        f.bone(b + 2, b + 3, 0.011);
        f.joint(b + 2, 0.016);
        f.joint(b + 3, 0.013);
      }
      f.box(0, [0, 0, 0.012], [0.22, 0.1, 0.05]);
      f.box(0, [0.125, 0, 0.03], [0.05, 0.07, 0.05], f.jointMaterial);
    },
    solve(q, tilt, world) {
      points.fill(0);
      rotations.fill(0);
      for (let i = 0; i < n; i++) rotations[9 * i] = rotations[9 * i + 4] = rotations[9 * i + 8] = 1;
      for (let leg = 0; leg < 4; leg++) {
        const roll = q[3 * leg] ?? 0,
          pitch = q[3 * leg + 1] ?? 0,
          knee = q[3 * leg + 2] ?? 0;
        const hx = HIP_POSITIONS_M[2 * leg]!,
          hy = HIP_POSITIONS_M[2 * leg + 1]!;
        const sign = LEG_Y_INVERTED[leg] ? -1 : 1;
        const c = Math.cos(roll),
          s = Math.sin(roll);
        const b = 1 + 4 * leg;
        points.set([hx, hy, 0], 3 * b);
        // The end of the hip offset, then the knee (the leg FK's formula with the thigh only).
        points.set([hx, hy + sign * (-HIP_OFFSET_M * c), HIP_OFFSET_M * s], 3 * (b + 1));
        const kx = THIGH_LENGTH_M * Math.sin(pitch),
          kz = -THIGH_LENGTH_M * Math.cos(pitch);
        points.set([hx + kx, hy + sign * (-HIP_OFFSET_M * c + kz * s), HIP_OFFSET_M * s + kz * c], 3 * (b + 2));
        footInBody(leg, roll, pitch, knee, foot);
        points.set(foot, 3 * (b + 3));
      }
      tiltAndGround(points, rotations, tilt, feet, world ?? null);
    },
  };
}

/** Skip a redraw unless some joint (or the tilt) moved this much since the last one: a third of a pixel at the default zoom. */
const MOVED_RAD = 0.002;
/** Software WebGL (SwiftShader, llvmpipe): at most this many state-driven frames a second. */
const SOFTWARE_MAX_HZ = 10;

/** The WebGL implementation's renderer string (to tell software rendering), via a throwaway context. */
function glRenderer(): string {
  const probe = document.createElement("canvas").getContext("webgl2");
  if (!probe) return "";
  const info = probe.getExtension("WEBGL_debug_renderer_info");
  const name = String(probe.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : probe.RENDERER) ?? "");
  probe.getExtension("WEBGL_lose_context")?.loseContext();
  return name;
}

/**
 * Software WebGL's frame, read back without blocking the page: the scene renders into a canvas
 * outside the document, its pixels are copied into a pixel-pack buffer behind a fence, and a later
 * animation frame (once the fence has passed) puts them into the visible 2D canvas. A WebGL canvas
 * in the document would instead be read back synchronously by chromium's software compositor at
 * every commit, stalling the page's main thread until the GPU process has rasterized the frame
 * (measured: 50-400 ms long tasks in GLES2::ReadPixels under Commit; docs/dashboard.md).
 */
class AsyncReadback {
  readonly #gl: WebGL2RenderingContext;
  readonly #out: CanvasRenderingContext2D;
  #pbo: WebGLBuffer | null = null;
  #fence: WebGLSync | null = null;
  #w = 0;
  #h = 0;
  #pixels = new Uint8Array(0);
  #image: ImageData | null = null;

  constructor(gl: WebGL2RenderingContext, visible: HTMLCanvasElement) {
    this.#gl = gl;
    const out = visible.getContext("2d", { alpha: false });
    if (!out) throw new Error("no 2D canvas context");
    this.#out = out;
  }

  get pending(): boolean {
    return this.#fence !== null;
  }

  /** Queue the readback of the frame just rendered (default framebuffer, w x h). */
  start(w: number, h: number): void {
    const gl = this.#gl;
    if (w !== this.#w || h !== this.#h) {
      this.#w = w;
      this.#h = h;
      this.#pixels = new Uint8Array(w * h * 4);
      this.#image = new ImageData(w, h);
    }
    // A fresh pack buffer per frame, deleted once read (as three's readRenderTargetPixelsAsync
    // does): chromium keeps a shadow copy of a READ-usage buffer written before a fence, and
    // writing the same buffer again, even after reading it back, discards that copy with a console
    // warning per frame ("READ-usage buffer was written, then fenced, but written again before
    // being read back").
    this.#pbo = gl.createBuffer();
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, this.#pbo);
    gl.bufferData(gl.PIXEL_PACK_BUFFER, w * h * 4, gl.STREAM_READ);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, 0);
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
    this.#fence = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    gl.flush();
  }

  /** If the frame's pixels have arrived, show them (true); never waits. */
  poll(): boolean {
    const gl = this.#gl;
    const fence = this.#fence;
    if (!fence) return false;
    const s = gl.clientWaitSync(fence, 0, 0);
    if (s !== gl.ALREADY_SIGNALED && s !== gl.CONDITION_SATISFIED) {
      if (s === gl.WAIT_FAILED) {
        gl.deleteSync(fence);
        this.#fence = null;
        gl.deleteBuffer(this.#pbo);
        this.#pbo = null;
      }
      return false;
    }
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, this.#pbo);
    gl.getBufferSubData(gl.PIXEL_PACK_BUFFER, 0, this.#pixels);
    gl.bindBuffer(gl.PIXEL_PACK_BUFFER, null);
    gl.deleteSync(fence);
    this.#fence = null;
    gl.deleteBuffer(this.#pbo);
    this.#pbo = null;
    const w = this.#w;
    const h = this.#h;
    const image = this.#image!;
    const canvas = this.#out.canvas;
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    // GL rows run bottom-up, the 2D canvas's top-down.
    const row = w * 4;
    for (let y = 0; y < h; y++) image.data.set(this.#pixels.subarray((h - 1 - y) * row, (h - y) * row), y * row);
    this.#out.putImageData(image, 0, 0);
    return true;
  }
}

/** Each registry body's model and accent colour (a body without one does not compile). */
const MODELS: { readonly [K in BodyKind]: () => BodyModel } = { nao: naoModel, p7: p7Model, tny360: tnyModel };
const ACCENT: { readonly [K in BodyKind]: number } = { nao: 0x1f5fa8, p7: 0x3a4350, tny360: 0x1f5fa8 };

export class BodyView {
  /** The canvas on the page (WebGL's own, or the 2D canvas software frames are copied into). */
  readonly canvas: HTMLCanvasElement;
  /** True when WebGL is software-rendered (frames read back asynchronously, no MSAA, capped rate). */
  readonly software: boolean;
  readonly #renderer: WebGLRenderer;
  readonly #readback: AsyncReadback | null;
  readonly #scene = new Scene();
  readonly #camera: PerspectiveCamera;
  readonly #controls: OrbitControls;
  readonly #model: BodyModel;
  readonly #ghostModel: BodyModel;
  readonly #figure: Figure;
  readonly #ghost: Figure;
  readonly #minFrameMs: number;
  /** The pose last drawn (angles, tilt, ghost), to skip frames that would look the same. */
  readonly #drawnQ: Float64Array = new Float64Array(64).fill(Number.NaN);
  readonly #drawnTilt = [Number.NaN, Number.NaN, Number.NaN];
  #drawnGhost: Float64Array | null = null;
  /** A physics body's world (null: on the grid as before), the ground under it, the contact discs. */
  #world: ViewWorld | null = null;
  #worldChanged = false;
  readonly #ground: Mesh;
  readonly #contactDiscs: Mesh[] = [];
  #dirty = false;
  #pending = false;
  #lastFrameMs = Number.NEGATIVE_INFINITY;
  /** Frames rendered (tests and the page's data-frames attribute count frames shown). */
  frames = 0;
  /** State updates that changed nothing visible and drew nothing. */
  skipped = 0;

  constructor(
    readonly host: HTMLElement,
    readonly body: BodyKind,
  ) {
    this.software = /swiftshader|llvmpipe|softpipe|software/i.test(glRenderer());
    if (this.software) {
      // Offscreen (never composited, so never read back synchronously); shown through the 2D canvas.
      const gl = document.createElement("canvas");
      this.#renderer = new WebGLRenderer({ canvas: gl, antialias: false });
      this.#renderer.setPixelRatio(1);
      this.canvas = document.createElement("canvas");
      this.#readback = new AsyncReadback(this.#renderer.getContext() as WebGL2RenderingContext, this.canvas);
      this.#minFrameMs = 1000 / SOFTWARE_MAX_HZ;
    } else {
      this.#renderer = new WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
      this.#renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
      this.canvas = this.#renderer.domElement;
      this.#readback = null;
      this.#minFrameMs = 0;
    }
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", `3D view of the ${body} from its joint positions`);
    host.dataset.software = String(this.software);
    host.append(this.canvas);
    this.#scene.background = new Color(0xf4f6f9);
    this.#scene.add(new HemisphereLight(0xffffff, 0xb8c2cc, 1.6));
    this.#scene.add(new AmbientLight(0xffffff, 0.3));
    const sun = new DirectionalLight(0xffffff, 1.6);
    sun.position.set(1.5, 1, 3);
    this.#scene.add(sun);
    const grid = new GridHelper(2, 20, 0x9aa7b4, 0xd5dbe1);
    grid.rotation.x = Math.PI / 2; // three's grid lies in x–z; the robot's ground is x–y
    this.#scene.add(grid);
    // A physics body's floor (z = 0, 6 m square), just under the grid; and a disc per touching link.
    this.#ground = new Mesh(new PlaneGeometry(6, 6), new MeshStandardMaterial({ color: 0x9fbf9a, roughness: 0.9, metalness: 0 }));
    this.#ground.position.z = -0.001;
    this.#ground.visible = false;
    this.#scene.add(this.#ground);
    const discMaterial = new MeshStandardMaterial({ color: 0xd0342c, roughness: 0.5, metalness: 0, transparent: true, opacity: 0.85 });
    for (let i = 0; i < 16; i++) {
      const disc = new Mesh(BONE_GEOMETRY, discMaterial);
      disc.rotation.x = Math.PI / 2; // the cylinder's axis (y) up (z)
      disc.scale.set(0.028, 0.004, 0.028);
      disc.visible = false;
      this.#contactDiscs.push(disc);
      this.#scene.add(disc);
    }

    const factory = MODELS[body];
    this.#model = factory();
    this.#ghostModel = factory();
    const solid = new MeshStandardMaterial({ color: 0xe9edf2, roughness: 0.55, metalness: 0.05 });
    const accent = new MeshStandardMaterial({ color: ACCENT[body], roughness: 0.45, metalness: 0.1 });
    this.#figure = new Figure(solid, accent);
    this.#model.build(this.#figure);
    const ghostMat = new MeshStandardMaterial({ color: 0xf59e0b, transparent: true, opacity: 0.35, depthWrite: false });
    this.#ghost = new Figure(ghostMat, ghostMat);
    this.#ghostModel.build(this.#ghost);
    this.#ghost.group.visible = false;
    this.#scene.add(this.#figure.group, this.#ghost.group);

    this.#camera = new PerspectiveCamera(40, 1, 0.01, 20);
    this.#camera.up.set(0, 0, 1);
    const { targetZ, distance } = this.#model.view;
    this.#camera.position.set(distance * 0.8, distance * 0.55, targetZ + distance * 0.3);
    this.#controls = new OrbitControls(this.#camera, this.canvas);
    this.#controls.target.set(0, 0, targetZ);
    this.#controls.enableDamping = false;
    this.#controls.update();
    // A camera move is the user's hand: drawn at the next frame, not rate-capped.
    this.#controls.addEventListener("change", () => this.request(true));
    new ResizeObserver(() => this.#fit()).observe(host);
    this.#fit();
  }

  /**
   * Show joint angles `q` (API order) and, when given, the commanded pose as a ghost. Draws only
   * when something moved by more than MOVED_RAD since the last frame drawn.
   */
  update(q: ArrayLike<number>, tilt: readonly number[] | null, ghost: ArrayLike<number> | null): void {
    // The ghost only where the command differs from the measured pose: on top of it, it would just tint the body.
    let apart = false;
    if (ghost) for (let i = 0; i < ghost.length && i < q.length; i++) if (Math.abs(ghost[i]! - q[i]!) > GHOST_APART_RAD) apart = true;
    const shownGhost = apart ? ghost : null;
    const world = this.#world;
    if (!this.#moved(q, tilt, shownGhost) && !this.#worldChanged) {
      this.skipped++;
      return;
    }
    this.#worldChanged = false;
    this.#model.solve(q, tilt, world);
    this.#figure.pose(this.#model.points, this.#model.rotations);
    this.#ghost.group.visible = apart;
    if (ghost && apart) {
      this.#ghostModel.solve(ghost, tilt, world);
      this.#ghost.pose(this.#ghostModel.points, this.#ghostModel.rotations);
    }
    this.#placeContacts();
    this.request(false);
  }

  /**
   * A physics body's world from its state's `sim` (null without one): the robot is drawn at the
   * base pose over the ground, the view follows it, each touching link gets a disc, a fall is
   * shown (`data-fallen` on the view's host). Drawn with the next `update`.
   */
  setWorld(w: ViewWorld | null): void {
    const before = this.#world;
    const moved =
      (w === null) !== (before === null) ||
      (w !== null &&
        before !== null &&
        (w.fallen !== before.fallen ||
          w.contacts.length !== before.contacts.length ||
          w.base_position_m.some((v, i) => Math.abs(v - before.base_position_m[i]!) > 1e-4) ||
          w.base_orientation_xyzw.some((v, i) => Math.abs(v - before.base_orientation_xyzw[i]!) > 1e-4)));
    this.#world = w;
    if (!moved) return;
    this.#worldChanged = true;
    this.#ground.visible = w !== null;
    this.host.dataset.world = String(w !== null);
    this.host.dataset.fallen = String(w?.fallen === true);
    this.host.dataset.contacts = String(w?.contacts.length ?? 0);
    // Follow the robot over the floor: move the orbit's target (and the camera with it) to the base.
    const target = this.#controls.target;
    const dx = (w ? w.base_position_m[0]! : 0) - target.x;
    const dy = (w ? w.base_position_m[1]! : 0) - target.y;
    if (Math.abs(dx) > 0.05 || Math.abs(dy) > 0.05) {
      target.x += dx;
      target.y += dy;
      this.#camera.position.x += dx;
      this.#camera.position.y += dy;
      this.#controls.update();
    }
  }

  /** The contact discs on the floor under each touching link (after the model was solved). */
  #placeContacts(): void {
    const w = this.#world;
    const cp = this.#model.contactPoints;
    const p = this.#model.points;
    let used = 0;
    if (w && cp) {
      for (const c of w.contacts) {
        const pair = cp[c.link];
        if (!pair || !(c.force_n > 0) || used >= this.#contactDiscs.length) continue;
        const [a, b] = pair;
        const disc = this.#contactDiscs[used++]!;
        disc.position.set((p[3 * a]! + p[3 * b]!) / 2, (p[3 * a + 1]! + p[3 * b + 1]!) / 2, 0.002);
        disc.visible = true;
      }
    }
    for (let i = used; i < this.#contactDiscs.length; i++) this.#contactDiscs[i]!.visible = false;
  }

  /** Whether (q, tilt, ghost) differs visibly from what was drawn last; remembers it if so. */
  #moved(q: ArrayLike<number>, tilt: readonly number[] | null, ghost: ArrayLike<number> | null): boolean {
    let moved = false;
    const n = Math.min(q.length, this.#drawnQ.length);
    for (let i = 0; i < n && !moved; i++) if (!(Math.abs(q[i]! - this.#drawnQ[i]!) <= MOVED_RAD)) moved = true;
    for (let i = 0; i < 3 && !moved; i++) if (!(Math.abs((tilt?.[i] ?? 0) - this.#drawnTilt[i]!) <= MOVED_RAD)) moved = true;
    const g = this.#drawnGhost;
    if ((ghost === null) !== (g === null)) moved = true;
    else if (ghost && g) for (let i = 0; i < ghost.length && i < g.length && !moved; i++) if (!(Math.abs(ghost[i]! - g[i]!) <= MOVED_RAD)) moved = true;
    if (!moved) return false;
    for (let i = 0; i < n; i++) this.#drawnQ[i] = q[i]!;
    for (let i = 0; i < 3; i++) this.#drawnTilt[i] = tilt?.[i] ?? 0;
    if (ghost) {
      if (!g || g.length !== ghost.length) this.#drawnGhost = new Float64Array(ghost.length);
      const d = this.#drawnGhost!;
      for (let i = 0; i < ghost.length; i++) d[i] = ghost[i]!;
    } else this.#drawnGhost = null;
    return true;
  }

  /**
   * Ask for one frame (coalesced to an animation frame; with software WebGL at most
   * SOFTWARE_MAX_HZ a second for state changes, and never while the last frame is still on its way).
   */
  request(now = false): void {
    this.#dirty = true;
    if (now) this.#lastFrameMs = Number.NEGATIVE_INFINITY;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#pending) return;
    this.#pending = true;
    requestAnimationFrame((t) => this.#frame(t));
  }

  #frame(t: number): void {
    this.#pending = false;
    const rb = this.#readback;
    if (rb?.poll()) {
      this.frames++;
      this.host.dataset.frames = String(this.frames);
    }
    if (this.#dirty && !rb?.pending && t - this.#lastFrameMs >= this.#minFrameMs) {
      this.#dirty = false;
      this.#lastFrameMs = t;
      this.#renderer.render(this.#scene, this.#camera);
      if (rb) {
        const c = this.#renderer.domElement;
        rb.start(c.width, c.height);
      } else {
        this.frames++;
        this.host.dataset.frames = String(this.frames);
      }
    }
    // Keep looking while a frame is on its way or one is waiting for its turn.
    if (rb?.pending || this.#dirty) this.#schedule();
  }

  #fit(): void {
    const w = Math.max(100, this.host.clientWidth);
    const h = Math.max(100, this.host.clientHeight);
    this.#renderer.setSize(w, h, false);
    this.canvas.style.width = "100%";
    this.canvas.style.height = "100%";
    this.#camera.aspect = w / h;
    this.#camera.updateProjectionMatrix();
    this.request(true);
  }
}
