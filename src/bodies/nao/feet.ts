/**
 * Foot weight and centre of pressure from the 8 FSRs, "the way HAL does" as far as public sources
 * tell (lola.md §4.4): total = Σ wᵢ, COP = Σ wᵢ·pᵢ / Σ wᵢ, in each ankle frame, using Aldebaran's
 * FSR positions. Negative readings count as 0 (a sensor cannot pull). An unloaded foot
 * (total below 1 g) has COP (0, 0). No allocation.
 */

/** FSR positions in the ankle frame, metres: x forward, y left. Order: FL, FR, RL, RR per foot. */
export const FSR_POSITIONS_M = {
  left: [
    [0.07025, 0.0299],
    [0.07025, -0.0231],
    [-0.03025, 0.0299],
    [-0.02965, -0.0191],
  ],
  right: [
    [0.07025, 0.0231],
    [0.07025, -0.0299],
    [-0.03025, 0.0191],
    [-0.02965, -0.0299],
  ],
} as const;

const UNLOADED_KG = 0.001;

/**
 * Fill `weightKg` [left, right] and `copM` [lx, ly, rx, ry] from `fsrKg` (8 values, LoLA's FSR order).
 */
export function computeFeet(fsrKg: ArrayLike<number>, weightKg: Float32Array, copM: Float32Array): void {
  foot(fsrKg, 0, FSR_POSITIONS_M.left, weightKg, 0, copM, 0);
  foot(fsrKg, 4, FSR_POSITIONS_M.right, weightKg, 1, copM, 2);
}

function foot(fsr: ArrayLike<number>, base: number, pos: readonly (readonly [number, number])[], w: Float32Array, wi: number, cop: Float32Array, ci: number): void {
  let total = 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < 4; i++) {
    const kg = Math.max(0, fsr[base + i]!);
    total += kg;
    sx += kg * pos[i]![0];
    sy += kg * pos[i]![1];
  }
  w[wi] = total;
  if (total < UNLOADED_KG) {
    cop[ci] = 0;
    cop[ci + 1] = 0;
  } else {
    cop[ci] = sx / total;
    cop[ci + 1] = sy / total;
  }
}
