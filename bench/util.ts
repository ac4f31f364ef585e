import { getHeapSpaceStatistics } from "node:v8";
import { quantileOfSorted } from "../src/runtime/timing.js";

/** The median of `xs` (the element at floor(n/2) once sorted, as every percentile here), without reordering `xs`. */
export function median(xs: readonly number[]): number {
  return quantileOfSorted([...xs].sort((a, b) => a - b), 0.5);
}

/** The `p` quantile of `xs` (the element at floor(p·n) once sorted), without reordering `xs`. */
export function percentile(xs: readonly number[], p: number): number {
  return quantileOfSorted([...xs].sort((a, b) => a - b), p);
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
