/**
 * Names of a simulated NAO's world that every side shares (the CLI's `--sim`, the API's
 * `POST /v1/sim/reset`, the core, the host): data only, so servers and the host can name them
 * without importing the simulator (docs/architecture.md's layout table).
 */
import { SIM_KINDS, type SimKind } from "../sim-world.js";
import { NAO_FRAME_INDEX, type NaoFrame } from "./kinematics.js";

/** Which mechanics a simulated NAO has (`serve --sim`): every body's choice (../sim-world.ts). */
export const NAO_SIM_KINDS = SIM_KINDS;
export type NaoSimKind = SimKind;
/** Poses a simulated world can be reset to (`POST /v1/sim/reset`). */
export const NAO_SIM_POSES = ["stand", "crouch", "lying"] as const;
export type NaoSimPose = (typeof NAO_SIM_POSES)[number];

/**
 * Where the viewers draw a physics contact (NAO_CONTACT_LINKS, mjcf.ts) on the kinematics' frames
 * (indices into NAO_FRAMES): the midpoint of two frame origins, a limb between its joints, a foot
 * at its sole, the torso and head at their own origin.
 */
export const NAO_CONTACT_FRAMES: Readonly<Record<string, readonly [number, number]>> = (() => {
  const at = (a: NaoFrame, b: NaoFrame = a): readonly [number, number] => [NAO_FRAME_INDEX[a], NAO_FRAME_INDEX[b]];
  const out: Record<string, readonly [number, number]> = { Torso: at("Torso"), Head: at("Head") };
  for (const p of ["L", "R"] as const) {
    out[`${p}Biceps`] = at(`${p}Shoulder`, `${p}Elbow`);
    out[`${p}ForeArm`] = at(`${p}Elbow`, `${p}Wrist`);
    out[`${p}Hand`] = at(`${p}Wrist`, `${p}Hand`);
    out[`${p}Thigh`] = at(`${p}Hip`, `${p}Knee`);
    out[`${p}Tibia`] = at(`${p}Knee`, `${p}Ankle`);
    out[`${p}Foot`] = at(`${p}Sole`);
  }
  return Object.freeze(out);
})();
