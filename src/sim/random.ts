/**
 * Deterministic PRNG shared by the simulators (mulberry32) with Gaussian helpers. Not for
 * anything security-related.
 * State lives in typed arrays: a uint32 above 2^30 stored in an object field is boxed by V8, which
 * would allocate on every draw. No allocation per call.
 */
export class Rng {
  readonly #s = new Uint32Array(1);
  /** Second Box–Muller value, NaN when used up. */
  readonly #spare = new Float64Array([Number.NaN]);

  constructor(seed: number) {
    this.#s[0] = seed >>> 0 || 0x9e3779b9;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.#s[0] = this.#s[0]! + 0x6d2b79f5;
    const s = this.#s[0]!;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
  int(min: number, maxInclusive: number): number {
    return Math.floor(this.range(min, maxInclusive + 1));
  }
  /** Normal with mean 0 and standard deviation `sd` (Box–Muller; each pair of uniforms gives two values). */
  gauss(sd: number): number {
    const spare = this.#spare[0]!;
    if (!Number.isNaN(spare)) {
      this.#spare[0] = Number.NaN;
      return sd * spare;
    }
    const r = Math.sqrt(-2 * Math.log(Math.max(1e-12, this.next())));
    const a = 2 * Math.PI * this.next();
    this.#spare[0] = r * Math.sin(a);
    return sd * r * Math.cos(a);
  }

  /**
   * Fill `out[0, n)` with standard normal values. NOTE: hot paths use this rather than `gauss`: a
   * double returned from a call V8 does not inline is boxed (allocated); a typed array is not.
   */
  fillGauss(out: Float64Array, n: number): void {
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(Math.max(1e-12, this.next())));
      const a = 2 * Math.PI * this.next();
      out[i] = r * Math.cos(a);
      if (i + 1 < n) out[i + 1] = r * Math.sin(a);
    }
  }

  /**
   * Add normal noise with standard deviation `sigma` to `out[from, to)` in place (hot paths: no
   * double crosses a call boundary).
   */
  addGaussian(out: Float64Array, from: number, to: number, sigma: number): void {
    for (let i = from; i < to; i += 2) {
      const r = Math.sqrt(-2 * Math.log(Math.max(1e-12, this.next())));
      const a = 2 * Math.PI * this.next();
      out[i] = out[i]! + sigma * r * Math.cos(a);
      if (i + 1 < to) out[i + 1] = out[i + 1]! + sigma * r * Math.sin(a);
    }
  }
}
