/**
 * A small seeded random source for the simulator (mulberry32 plus Box–Muller), so a run is
 * reproducible from its seed. Not for anything security-related. Allocation-free after construction.
 *
 * NOTE: the state lives in typed arrays: a uint32 above 2^30 or a double kept in an object field
 * is boxed as a new heap number on every write in optimised code (measured ~16 B per call).
 */
export class SeededRandom {
  readonly #state = new Uint32Array(1);
  readonly #spare = new Float64Array(1);
  #hasSpare = false;

  constructor(seed: number) {
    // Any number is a valid seed; fold it to 32 bits.
    this.#state[0] = (Math.trunc(Number.isFinite(seed) ? seed : 0) ^ 0x9e3779b9) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    const st = this.#state;
    st[0] = st[0]! + 0x6d2b79f5; // wraps modulo 2^32
    let t = st[0]!;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /**
   * Add normal noise with standard deviation `sigma` to `out[from..to)` in place. Preferred in
   * hot paths: a double returned from a call that is not inlined is boxed.
   */
  addGaussian(out: Float64Array, from: number, to: number, sigma: number): void {
    for (let i = from; i < to; i++) out[i] = out[i]! + this.gaussian(sigma);
  }

  /** Normal with mean 0 and standard deviation `sigma`. */
  gaussian(sigma: number): number {
    if (this.#hasSpare) {
      this.#hasSpare = false;
      return this.#spare[0]! * sigma;
    }
    let u = this.next();
    while (u <= Number.MIN_VALUE) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare[0] = r * Math.sin(2 * Math.PI * v);
    this.#hasSpare = true;
    return r * Math.cos(2 * Math.PI * v) * sigma;
  }
}
