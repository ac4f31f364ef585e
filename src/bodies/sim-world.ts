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

/** Where a physics body is (a simulator's model): what `writeSimWorld` copies into a state. */
export interface SimWorldPose {
  /** Simulated time since the model was built or last reset, s. */
  readonly timeS: number;
  /** The base's origin in the world, m. */
  readonly basePositionM: ArrayLike<number>;
  /** The base's orientation in the world, quaternion x, y, z, w. */
  readonly baseOrientationXyzw: ArrayLike<number>;
  readonly fallen: boolean;
}

/**
 * Mark a state's `simWorld` present and copy the model's time, base pose and fall into it (perform
 * side, allocation-free; the real-time factor and the contacts are the caller's).
 */
export function writeSimWorld(w: Float64Array, m: SimWorldPose): void {
  w[SIM_WORLD.present] = 1;
  w[SIM_WORLD.timeS] = m.timeS;
  w[SIM_WORLD.x] = m.basePositionM[0]!;
  w[SIM_WORLD.y] = m.basePositionM[1]!;
  w[SIM_WORLD.z] = m.basePositionM[2]!;
  for (let k = 0; k < 4; k++) w[SIM_WORLD.qx + k] = m.baseOrientationXyzw[k]!;
  w[SIM_WORLD.fallen] = m.fallen ? 1 : 0;
}
