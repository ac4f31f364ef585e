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
 * Bytes allocated per call in steady state, from V8's heap statistics with GC forced around the
 * run (needs --expose-gc; the bench runner is started with it). Returns NaN without it.
 */
export function bytesPerCall(fn: () => void, calls = 100_000): number {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) return Number.NaN;
  for (let i = 0; i < 5000; i++) fn();
  g();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < calls; i++) fn();
  const after = process.memoryUsage().heapUsed;
  return Math.max(0, (after - before) / calls);
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
