/**
 * Google DeepMind's MuJoCo WebAssembly build (`@mujoco/mujoco`, Apache-2.0), loaded once per
 * thread on first use (about 10 MB of WASM: only a physics simulator pays for it).
 *
 * Its arrays (`data.qpos`, `model.actuator_gainprm`, …) are views into the module's memory, and
 * every property read makes a new view: `liveView` keeps one and makes it again only when the
 * memory has grown (growing detaches the old buffer), so a step reads and writes in place.
 */
import type { MainModule, MjData, MjModel } from "@mujoco/mujoco";

export type Mujoco = MainModule;
export type { MjData, MjModel };

let loading: Promise<Mujoco> | null = null;

/** The MuJoCo module of this thread (loaded on the first call). */
export function loadMujoco(): Promise<Mujoco> {
  loading ??= import("@mujoco/mujoco").then((m) => m.default());
  return loading;
}

/** Per MuJoCo module (one per thread): each body's model, compiled once and never modified. */
const COMPILED = new WeakMap<Mujoco, Map<string, MjModel>>();

/**
 * A fresh copy of the body's compiled model. Compiling an MJCF takes ~35 ms of CPU (the NAO's);
 * copying the thread's compiled one takes well under a millisecond, and each body may change its
 * copy (actuator gains) without touching another's.
 */
export function compiledModelCopy(mj: Mujoco, body: string, mjcf: () => string): MjModel {
  const byBody = COMPILED.get(mj) ?? new Map<string, MjModel>();
  COMPILED.set(mj, byBody);
  const compiled = byBody.get(body) ?? mj.MjModel.from_xml_string(mjcf());
  byBody.set(body, compiled);
  return new mj.MjModel(compiled);
}

/** A Float64Array view into MuJoCo's memory that survives the memory growing. */
export class LiveView {
  #view: Float64Array;
  readonly #make: () => Float64Array;
  constructor(make: () => Float64Array) {
    this.#make = make;
    this.#view = make();
  }
  /** The view (remade if the memory it pointed into was detached). */
  get v(): Float64Array {
    if (this.#view.buffer.byteLength === 0) this.#view = this.#make();
    return this.#view;
  }
}

/**
 * The live views a body driven by MuJoCo position servos reads and writes each step: joint state,
 * the servos' set points, gains, biases, torque limits and torques, and the sensors.
 */
export class ServoViews {
  readonly qpos: LiveView;
  readonly qvel: LiveView;
  readonly ctrl: LiveView;
  readonly sensor: LiveView;
  readonly gain: LiveView;
  readonly bias: LiveView;
  readonly forceRange: LiveView;
  readonly actForce: LiveView;
  constructor(m: MjModel, d: MjData) {
    this.qpos = new LiveView(() => d.qpos as Float64Array);
    this.qvel = new LiveView(() => d.qvel as Float64Array);
    this.ctrl = new LiveView(() => d.ctrl as Float64Array);
    this.sensor = new LiveView(() => d.sensordata as Float64Array);
    this.gain = new LiveView(() => m.actuator_gainprm as Float64Array);
    this.bias = new LiveView(() => m.actuator_biasprm as Float64Array);
    this.forceRange = new LiveView(() => m.actuator_forcerange as Float64Array);
    this.actForce = new LiveView(() => d.actuator_force as Float64Array);
  }
}

/**
 * Each contact sensor's net force into `out`, N (0 where it found no contact): `out.length` sensors
 * from sensordata slot `start`, `stride` apart, each [found, fx, fy, fz] (MJCF `<contact data="found
 * force" reduce="netforce">`). Perform side: allocation-free.
 */
export function readContactForces(sensor: Float64Array, start: number, stride: number, out: Float64Array): void {
  for (let c = 0; c < out.length; c++) {
    const at = start + stride * c;
    const fx = sensor[at + 1]!,
      fy = sensor[at + 2]!,
      fz = sensor[at + 3]!;
    out[c] = sensor[at]! > 0 ? Math.sqrt(fx * fx + fy * fy + fz * fz) : 0;
  }
}
