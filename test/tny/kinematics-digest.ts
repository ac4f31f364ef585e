/**
 * A seeded workload for the shared gait planner, body IK and leg IK, and a digest of every output
 * bit they produce on it. `kinematics-pinned.test.ts` compares the digest with one recorded from
 * the shared code before it took its numbers in typed-array slots, so any change of result shows,
 * down to the last bit (−0 vs 0 and NaN payloads included).
 *
 * The code under test is reached through `KinematicsUnderTest`, so the same workload could be run
 * on the code as it was (old signatures) to record the digest. The generator is a few lines here
 * (not fast-check, whose sampling may change between versions), so the workload never moves.
 */

export interface PlannerUnderTest {
  gait: number;
  readonly feet: Float64Array;
  readonly stance: Uint8Array;
  readonly phase: number;
  readonly active: boolean;
  /** Advance by dtS with (vx, vy) m/s and wz rad/s, planner frame. */
  step(dtS: number, vx: number, vy: number, wz: number): void;
  reset(): void;
}

export interface KinematicsUnderTest {
  newPlanner(): PlannerUnderTest;
  /** Body IK: refused-leg count; angles and statuses written in place. */
  bodyIK(posture: Float64Array, feet: Float64Array, outAngles: Float64Array, status: Uint8Array): number;
  /** Leg IK of the leg-frame `target` (x, y, z) into `out[at..at+2]`: the IkStatus. */
  legIK(target: Float64Array, out: Float64Array, at: number, checkLimits: boolean): number;
}

export interface KinematicsDigest {
  /** 53-bit digest of every output, as 14 hex digits. */
  readonly digest: string;
  readonly plannerSteps: number;
  /** Planner steps after which some leg was in swing. */
  readonly swingSteps: number;
  /** Legs per IkStatus code over every body-IK and leg-IK call. */
  readonly statusCounts: number[];
}

/** mulberry32: uniform [0, 1) from a 32-bit seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** cyrb53-style hash over 32-bit words: every f64 goes in as its two halves. */
class Hasher {
  #h1 = 0xdeadbeef;
  #h2 = 0x41c6ce57;
  readonly #f = new Float64Array(1);
  readonly #u = new Uint32Array(this.#f.buffer);

  word(w: number): void {
    this.#h1 = Math.imul(this.#h1 ^ w, 2654435761);
    this.#h2 = Math.imul(this.#h2 ^ w, 1597334677);
  }

  f64(v: number): void {
    this.#f[0] = v;
    this.word(this.#u[0]!);
    this.word(this.#u[1]!);
  }

  all(a: ArrayLike<number>): void {
    for (let i = 0; i < a.length; i++) this.f64(a[i]!);
  }

  hex(): string {
    let h1 = this.#h1,
      h2 = this.#h2;
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
  }
}

/** Default feet in the planner frame (tny360.md §10.1), written out so the workload stands alone. */
const FEET: readonly number[] = [0.09, 0.1, 0, -0.09, 0.1, 0, -0.09, -0.1, 0, 0.09, -0.1, 0];
const SPECIAL: readonly number[] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0, 1e-300, 0.034, -0.034, 0.2, -0.2];

export function kinematicsDigest(k: KinematicsUnderTest): KinematicsDigest {
  const r = rng(0x7e57_360);
  const h = new Hasher();
  const uni = (min: number, max: number) => min + (max - min) * r();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const maybe = (p: number, v: () => number, otherwise: number) => (r() < p ? otherwise : v());
  const statusCounts = [0, 0, 0, 0, 0, 0];
  let plannerSteps = 0;
  let swingSteps = 0;

  // planner: command sequences with every gait (7 = unknown: Walk's offsets), steps of 5 ms or
  // anything up to 50 ms, some components zero; then a zero command until it stops; then reset
  for (let seq = 0; seq < 60; seq++) {
    const p = k.newPlanner();
    const commands = 1 + Math.floor(r() * 8);
    const out = (): void => {
      h.all(p.feet);
      h.all(p.stance);
      h.f64(p.phase);
      h.word(p.active ? 1 : 0);
      plannerSteps++;
      if (p.stance.some((s) => s === 0)) swingSteps++;
    };
    for (let c = 0; c < commands; c++) {
      p.gait = pick([0, 1, 2, 7]);
      const dtS = maybe(0.5, () => uni(0, 0.05), 0.005);
      const vx = maybe(0.25, () => uni(-1, 1), 0);
      const vy = maybe(0.25, () => uni(-1, 1), 0);
      const wz = maybe(0.25, () => uni(-4, 4), 0);
      const steps = 1 + Math.floor(r() * 150);
      for (let s = 0; s < steps; s++) {
        p.step(dtS, vx, vy, wz);
        out();
      }
    }
    for (let s = 0; s < 200; s++) {
      p.step(0.005, 0, 0, 0);
      out();
    }
    p.reset();
    out();
  }

  // body IK: near the default stance, or anywhere (specials included), any previous angles
  const posture = new Float64Array(6);
  const feet = new Float64Array(12);
  const angles = new Float64Array(12);
  const status = new Uint8Array(4);
  for (let n = 0; n < 4000; n++) {
    posture[0] = uni(-0.1, 0.1);
    posture[1] = uni(-0.1, 0.1);
    posture[2] = r() < 0.05 ? pick(SPECIAL) : uni(0.02, 0.25);
    for (let i = 3; i < 6; i++) posture[i] = uni(-0.8, 0.8);
    const near = r() < 0.5;
    for (let i = 0; i < 12; i++) feet[i] = near ? FEET[i]! + uni(-0.06, 0.06) : r() < 0.05 ? pick(SPECIAL) : uni(-0.25, 0.25);
    for (let i = 0; i < 12; i++) angles[i] = uni(-3, 3);
    h.word(k.bodyIK(posture, feet, angles, status));
    h.all(status);
    h.all(angles);
    for (let leg = 0; leg < 4; leg++) statusCounts[status[leg]!]!++;
  }

  // leg IK, with and without the joint limits, at an offset: the edges (at the hip, on the hip
  // offset's cylinder, at full reach), then targets mostly under the hip, specials included
  const target = new Float64Array(3);
  const legOut = new Float64Array(5);
  const edges: ReadonlyArray<readonly [number, number, number]> = [
    [0, -0.034, 0],
    [0, 0, -0.034],
    [-0, -0.034, -0],
    [1e-300, 0.034, 0],
    [0, -0.034, -0.2],
    [0.2, -0.034, 0],
    [-0.2, -0.034, 0],
    [0, -0.034, 0.2],
    [0, 0.2, 0],
  ];
  const lows: readonly number[] = [-0.2, -0.15, -0.22];
  const highs: readonly number[] = [0.2, 0.1, 0.05];
  for (let n = 0; n < 6000 + edges.length * 2; n++) {
    const edge = edges[n >> 1];
    for (let i = 0; i < 3; i++) target[i] = edge ? edge[i]! : r() < 0.1 ? pick(SPECIAL) : uni(lows[i]!, highs[i]!);
    legOut.fill(7);
    const st = k.legIK(target, legOut, 1, edge ? (n & 1) === 0 : r() < 0.8);
    h.word(st);
    h.all(legOut);
    statusCounts[st]!++;
  }

  return { digest: h.hex(), plannerSteps, swingSteps, statusCounts };
}
