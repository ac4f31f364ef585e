/**
 * Min/max decimation of the plots' history to a chart's width (pure, tested in Node):
 * rows [from, to) cut into `buckets` spans, two points per span, at the span's first and last
 * row time; each signal's minimum and maximum in the span, in the order they happened (null when
 * the span has no value). Every peak stays visible, and the points a chart draws depend on its
 * width, not on the history kept. The output arrays are reused (resized only when `buckets` changes).
 */
export function decimateMinMax(time: Float64Array, columns: readonly Float64Array[], from: number, to: number, buckets: number, out: { x: Float64Array; series: Array<Array<number | null>> }): void {
  const n = to - from;
  const m = 2 * buckets;
  if (out.x.length !== m) out.x = new Float64Array(m);
  const x = out.x;
  for (let b = 0; b < buckets; b++) {
    const a = from + Math.floor((b * n) / buckets);
    const e = from + Math.floor(((b + 1) * n) / buckets);
    x[2 * b] = time[a]!;
    x[2 * b + 1] = time[Math.max(a, e - 1)]!;
  }
  for (let k = 0; k < columns.length; k++) {
    const src = columns[k]!;
    const dst = out.series[k] ?? [];
    out.series[k] = dst;
    dst.length = m;
    for (let b = 0; b < buckets; b++) {
      const a = from + Math.floor((b * n) / buckets);
      const e = from + Math.floor(((b + 1) * n) / buckets);
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      let loAt = -1;
      let hiAt = -1;
      for (let i = a; i < e; i++) {
        const v = src[i]!;
        // NaN (no value) compares false both ways and is skipped.
        if (v < lo) {
          lo = v;
          loAt = i;
        }
        if (v > hi) {
          hi = v;
          hiAt = i;
        }
      }
      if (loAt < 0) {
        dst[2 * b] = null;
        dst[2 * b + 1] = null;
      } else if (loAt <= hiAt) {
        dst[2 * b] = lo;
        dst[2 * b + 1] = hi;
      } else {
        dst[2 * b] = hi;
        dst[2 * b + 1] = lo;
      }
    }
  }
}
