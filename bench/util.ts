import { getHeapSpaceStatistics } from "node:v8";
import { quantileOfSorted } from "../src/runtime/timing.js";

/** The median of `xs` (the element at floor(n/2) once sorted, as every percentile here), without reordering `xs`. */
export function median(xs: readonly number[]): number {
  return quantileOfSorted(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

/** The `p` quantile of `xs` (the element at floor(p·n) once sorted), without reordering `xs`. */
export function percentile(xs: readonly number[], p: number): number {
  return quantileOfSorted(
    [...xs].sort((a, b) => a - b),
    p,
  );
}

/** A simulated body's cycle cost (the physics bench's per-body sections), µs. */
export interface CycleCost {
  p50: number;
  p99: number;
  cpuP50: number;
  cpuP99: number;
  /** Simulated over wall time of the measured cycles run back to back. */
  rtf: number;
}

/**
 * Time `cycles` calls of `step`, each after an untimed `before(i)` (it moves the clock and feeds
 * the body): wall and CPU time (getrusage) per call, and `periodMs` of simulated time per call
 * over the wall time of the whole run.
 */
export function cycleCost(cycles: number, periodMs: number, before: (i: number) => void, step: () => void): CycleCost {
  const us: number[] = [];
  const cpuUs: number[] = [];
  const wall0 = performance.now();
  for (let i = 0; i < cycles; i++) {
    before(i);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    step();
    us.push((performance.now() - t0) * 1000);
    const c = process.cpuUsage(c0);
    cpuUs.push(c.user + c.system);
  }
  const rtf = (cycles * periodMs) / (performance.now() - wall0);
  return { p50: percentile(us, 0.5), p99: percentile(us, 0.99), cpuP50: percentile(cpuUs, 0.5), cpuP99: percentile(cpuUs, 0.99), rtf };
}

/** The per-body section's lines: both bodies' costs, their ratio, the physics budget of the `periodMs` cycle. */
export function reportCycleCost(kin: CycleCost, phy: CycleCost, periodMs: number): void {
  for (const [name, r] of [
    ["kinematic", kin],
    ["physics", phy],
  ] as const) {
    console.log(`   ${name.padEnd(10)} wall p50 ${fmt(r.p50, 1)}  p99 ${fmt(r.p99, 1)}   CPU p50 ${fmt(r.cpuP50, 1)}  p99 ${fmt(r.cpuP99, 1)}   back to back ${fmt(r.rtf, 1)}x real time`);
  }
  console.log(`   physics/kinematic at p50: ${fmt(phy.p50 / kin.p50, 1)}x wall, ${fmt(phy.cpuP50 / Math.max(1, kin.cpuP50), 1)}x CPU`);
  console.log(`   physics budget used at p99: wall ${fmt((100 * phy.p99) / (periodMs * 1000), 1)} %, CPU ${fmt((100 * phy.cpuP99) / (periodMs * 1000), 1)} % of the ${periodMs} ms cycle`);
}

/** Small helpers shared by the benchmarks: timing loops and allocation measurement. */

/** Run `fn` for about `ms` milliseconds after `warmup` calls; returns ns per call. */
export function timeIt(fn: () => void, ms = 500, warmup = 2000): number {
  for (let i = 0; i < warmup; i++) fn();
  let n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(ms) * 1_000_000n;
  let now = t0;
  while (now < end) {
    for (let i = 0; i < 256; i++) fn();
    n += 256;
    now = process.hrtime.bigint();
  }
  return Number(now - t0) / n;
}

/**
 * Bytes allocated per call in steady state: growth of V8's young generation over batches of calls
 * between forced GCs. Each batch is small enough that no scavenge runs inside it (the runner gives
 * V8 a 128 MB semi-space), so a batch's growth is what it allocated. The smallest batch is kept:
 * the optimizing compiler's own occasional allocations land in other spaces or in one batch only.
 * Needs --expose-gc (the bench runner passes it); returns NaN without it.
 */
export function bytesPerCall(fn: () => void, calls = 100_000, batch = 10_000): number {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) return Number.NaN;
  const young = () => {
    for (const s of getHeapSpaceStatistics()) if (s.space_name === "new_space") return s.space_used_size;
    return 0;
  };
  for (let i = 0; i < 20_000; i++) fn();
  let best = Number.POSITIVE_INFINITY;
  for (let done = 0; done < calls; done += batch) {
    g();
    const before = young();
    for (let i = 0; i < batch; i++) fn();
    best = Math.min(best, young() - before);
  }
  return Math.max(0, best / batch);
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

/**
 * The real-time budget's verdict, physics against the kinematic NAO serving beside it in the same
 * window: neither kind of late cycle more frequent. "Own work" (the CPU time charged to the core's
 * thread would have kept it busy past the deadline + bound) was meant to be 0 for physics, but
 * this VM charges the kinematic NAO, 0.25 ms of work a cycle, with such cycles too (1 in each of
 * two loaded 60 s windows: the kernel's CPU time includes what the VM does to the thread), so both
 * kinds are compared as rates. The same stalls hit both at random, and equal rates give unequal
 * counts; given n = both counts, physics' count is Binomial(n, ½) when the rates are equal, and
 * "more" means that high with probability under 5 % (one-sided, exact). Small counts make it a
 * weak test: the raw counts are printed beside it.
 */
export function lateVerdict(physics: LateCounts, kinematic: LateCounts, body = "NAO"): string {
  const own = physics.late_cycles_own_work;
  const woken = physics.late_cycles - own;
  const kinOwn = kinematic.late_cycles_own_work;
  const kinWoken = kinematic.late_cycles - kinOwn;
  const pOwn = atLeastByChance(own, own + kinOwn);
  const pWoken = atLeastByChance(woken, woken + kinWoken);
  const met = pOwn >= 0.05 && pWoken >= 0.05;
  return `physics late cycles against the kinematic ${body}'s: own work ${own} vs ${kinOwn} (p = ${fmt(pOwn, 2)}), machine ${woken} vs ${kinWoken} (p = ${fmt(pWoken, 2)}; p: equal rates give this many or more): ${met ? "MET" : "NOT MET"} (target: neither more frequent)`;
}

/** P(X ≥ k) for X ~ Binomial(n, ½): exact, by summing the tail (n is a count of late cycles, small). */
export function atLeastByChance(k: number, n: number): number {
  if (k <= 0) return 1;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  let below = 0;
  for (let i = 0; i < k; i++) {
    below += term;
    term = (term * (n - i)) / (i + 1);
  }
  return Math.max(0, 1 - below);
}

export interface LateCounts {
  readonly late_cycles: number;
  readonly late_cycles_own_work: number;
}
