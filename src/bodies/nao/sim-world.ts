/**
 * Names of a simulated NAO's world that every side shares (the CLI's `--sim`, the API's
 * `POST /v1/sim/reset`, the core, the host): data only, so servers and the host can name them
 * without importing the simulator (docs/architecture.md's layout table).
 */

/** Which mechanics a simulated NAO has (`serve --sim`). */
export const NAO_SIM_KINDS = ["physics", "kinematic"] as const;
export type NaoSimKind = (typeof NAO_SIM_KINDS)[number];
/** Poses a simulated world can be reset to (`POST /v1/sim/reset`). */
export const NAO_SIM_POSES = ["stand", "crouch", "lying"] as const;
export type NaoSimPose = (typeof NAO_SIM_POSES)[number];
