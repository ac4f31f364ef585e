/**
 * What every simulated body's world shares (the CLI's `--sim`, the state's `sim`, the API, the
 * recordings): data only, browser-safe, so servers and hosts name them without importing a simulator.
 */

/** Which mechanics a simulated body has (`serve --sim`): MuJoCo physics or the kinematic model. */
export const SIM_KINDS = ["physics", "kinematic"] as const;
export type SimKind = (typeof SIM_KINDS)[number];

/**
 * Slots of a state's `simWorld` (Float64Array(SIM_WORLD_SLOTS); all 0 on a robot or a kinematic
 * simulator): present (1 with a physics body), simulated time s, the base's position m (x, y, z;
 * the floor at z = 0), its orientation (x, y, z, w), fallen (0/1), simulated seconds per real
 * second over the last second (runtime/sim-time.ts).
 */
export const SIM_WORLD = { present: 0, timeS: 1, x: 2, y: 3, z: 4, qx: 5, qy: 6, qz: 7, qw: 8, fallen: 9, realTimeFactor: 10 } as const;
export const SIM_WORLD_SLOTS = 11;
