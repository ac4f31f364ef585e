/** A generated MJCF compiled by MuJoCo itself, for the model tests: the module, the model, its data, and names by id. */
import { loadMujoco, type MjData, type MjModel, type Mujoco } from "../../src/sim/physics/mujoco.js";

export interface LoadedMjcf {
  mj: Mujoco;
  m: MjModel;
  d: MjData;
  /** The name of object `i` of MuJoCo type `type` (mjtObj). */
  name(type: number, i: number): string;
}

export async function loadMjcf(xml: string): Promise<LoadedMjcf> {
  const mj = await loadMujoco();
  const m = mj.MjModel.from_xml_string(xml);
  return { mj, m, d: new mj.MjData(m), name: (type, i) => mj.mj_id2name(m, type, i) };
}
