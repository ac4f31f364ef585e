/**
 * A small seeded random source for the simulator (mulberry32 plus Box–Muller), so a run is
 * reproducible from its seed. Not for anything security-related. Allocation-free after construction.
 */
export class SeededRandom {
  #state: number;
  #spare = 0;
  #hasSpare = false;

  constructor(seed: number) {
    // Any number is a valid seed; fold it to 32 bits.
    this.#state = (Math.trunc(Number.isFinite(seed) ? seed : 0) ^ 0x9e3779b9) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Normal with mean 0 and standard deviation `sigma`. */
  gaussian(sigma: number): number {
    if (this.#hasSpare) {
      this.#hasSpare = false;
      return this.#spare * sigma;
    }
    let u = this.next();
    while (u <= Number.MIN_VALUE) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare = r * Math.sin(2 * Math.PI * v);
    this.#hasSpare = true;
    return r * Math.cos(2 * Math.PI * v) * sigma;
  }
}
