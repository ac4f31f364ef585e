/**
 * The dashboard's plot history (web/store.ts) and the support polygon's hull (web/feet.ts): pure
 * code, tested in Node. The history must keep the newest rows, in order, as one contiguous slice,
 * across the slide that happens every `keep` rows; CSV must be exactly what the window holds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decimateMinMax } from "../../web/decimate.js";
import { convexHull, insideConvex } from "../../web/feet.js";
import { SeriesStore } from "../../web/store.js";

describe("SeriesStore", () => {
  it("keeps the newest rows in order, contiguous, across many slides", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 400 }), (keep, n) => {
        const s = new SeriesStore(keep);
        const a = s.column("a");
        for (let i = 0; i < n; i++) a[s.push(i)] = i * 10;
        expect(s.length).toBe(Math.min(n, keep));
        const rows = Array.from({ length: s.length }, (_, k) => s.firstRow + k);
        expect(rows.map((r) => s.time[r])).toEqual(Array.from({ length: s.length }, (_, k) => n - s.length + k));
        expect(rows.map((r) => s.column("a")[r])).toEqual(rows.map((r) => s.time[r]! * 10));
        expect(s.added).toBe(n);
      }),
    );
  });

  it("range() selects by time; a column created late is NaN before its first value", () => {
    const s = new SeriesStore(100);
    for (let i = 0; i < 30; i++) s.column("a")[s.push(1000 + i * 0.05)] = i;
    const r = s.push(1001.5);
    s.column("late")[r] = 7;
    const [from, to] = s.range(1000.5, 1001.0);
    expect(Array.from(s.time.subarray(from, to)).map((t) => +t.toFixed(2))).toEqual([1000.5, 1000.55, 1000.6, 1000.65, 1000.7, 1000.75, 1000.8, 1000.85, 1000.9, 1000.95, 1001]);
    expect(Number.isNaN(s.column("late")[from]!)).toBe(true);
    expect(s.column("late")[r]).toBe(7);
  });

  it("range() is the rows within [t0, t1], as a linear scan finds them (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 0, maxLength: 80 }), fc.integer({ min: -5, max: 250 }), fc.integer({ min: 0, max: 60 }), (steps, t0, span) => {
        const s = new SeriesStore(40);
        let t = 0;
        for (const d of steps) {
          t += d;
          s.push(t);
        }
        const want: number[] = [];
        for (let r = s.firstRow; r < s.endRow; r++) if (s.time[r]! >= t0 && s.time[r]! <= t0 + span) want.push(r);
        const [from, to] = s.range(t0, t0 + span);
        expect(Array.from({ length: to - from }, (_, k) => from + k)).toEqual(want);
      }),
    );
  });

  it("csv(): header, epoch ms, ISO time, empty fields for missing values", () => {
    const s = new SeriesStore(10);
    s.column("acc.x")[s.push(1_700_000_000)] = 1.5;
    s.column("b,c")[s.push(1_700_000_000.05)] = -2;
    expect(s.csv(["acc.x", "b,c"], s.firstRow, s.endRow)).toBe('epoch_ms,time_iso,acc.x,"b,c"\n1700000000000,2023-11-14T22:13:20.000Z,1.5,\n1700000000050,2023-11-14T22:13:20.050Z,,-2\n');
  });
});

describe("decimateMinMax (plots at the chart's width)", () => {
  const column = (xs: ReadonlyArray<number>) => Float64Array.from(xs);
  it("two points per span: its min and max in time order, at its first and last row time; null for a span without values", () => {
    const time = column([0, 1, 2, 3, 4, 5, 6, 7]);
    const a = column([5, 1, 9, 2, Number.NaN, Number.NaN, 3, 3]);
    const out = { x: new Float64Array(0), series: [] as Array<Array<number | null>> };
    decimateMinMax(time, [a], 0, 8, 4, out);
    expect(Array.from(out.x)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(out.series[0]).toEqual([5, 1, 9, 2, null, null, 3, 3]);
    // Reused: the same arrays on the next call.
    const [x, s0] = [out.x, out.series[0]];
    decimateMinMax(time, [a], 2, 8, 2, out);
    expect(out.x).not.toBe(x); // a different bucket count needs a new x
    expect(out.series[0]).toBe(s0);
    expect(out.series[0]).toEqual([9, 2, 3, 3]);
  });

  it("keeps every span's extremes, x never decreasing (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(Number.NaN)), { minLength: 2, maxLength: 400 }),
        fc.integer({ min: 1, max: 60 }),
        (values, buckets) => {
          const n = values.length;
          const time = Float64Array.from(values.map((_, i) => 1000 + i * 0.05));
          const v = Float64Array.from(values);
          const out = { x: new Float64Array(0), series: [] as Array<Array<number | null>> };
          decimateMinMax(time, [v], 0, n, buckets, out);
          expect(out.x.length).toBe(2 * buckets);
          for (let b = 0; b < buckets; b++) {
            const a = Math.floor((b * n) / buckets);
            const e = Math.floor(((b + 1) * n) / buckets);
            const span = values.slice(a, e).filter((x) => !Number.isNaN(x));
            const got = out.series[0]!.slice(2 * b, 2 * b + 2);
            if (span.length === 0) expect(got).toEqual([null, null]);
            else expect([...got].sort((p, q) => p! - q!)).toEqual([Math.min(...span), Math.max(...span)]);
          }
          for (let i = 1; i < out.x.length; i++) expect(out.x[i]!).toBeGreaterThanOrEqual(out.x[i - 1]!);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("convexHull (support polygon)", () => {
  it("a square's corners, without the points inside or on an edge", () => {
    const hull = convexHull([
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
      [5, 5],
      [5, 0],
    ]);
    expect(hull).toHaveLength(4);
    expect(new Set(hull.map((p) => p.join(",")))).toEqual(new Set(["0,0", "10,0", "10,10", "0,10"]));
  });
  it("insideConvex: inside, on an edge, outside; agrees with the hull of the polygon plus the point (property)", () => {
    const square = convexHull([
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ]);
    expect(insideConvex(square, [5, 5])).toBe(true);
    expect(insideConvex(square, [10, 5])).toBe(true);
    expect(insideConvex(square, [11, 5])).toBe(false);
    expect(insideConvex(square, [-0.1, -0.1])).toBe(false);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 })), { minLength: 3, maxLength: 20 }),
        fc.tuple(fc.integer({ min: -60, max: 60 }), fc.integer({ min: -60, max: 60 })),
        (pts, p) => {
          const h = convexHull(pts);
          if (h.length < 3) return;
          // p is inside iff adding it does not grow the hull's area.
          const area = (poly: ReadonlyArray<readonly [number, number]>) =>
            Math.abs(poly.reduce((s, a, i) => s + a[0] * poly[(i + 1) % poly.length]![1] - poly[(i + 1) % poly.length]![0] * a[1], 0)) / 2;
          expect(insideConvex(h, p)).toBe(area(convexHull([...pts, p])) <= area(h) + 1e-9);
        },
      ),
    );
  });

  it("every input point is inside or on the hull (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: -100, max: 100 })), { minLength: 3, maxLength: 30 }), (pts) => {
        const h = convexHull(pts);
        if (h.length < 3) return;
        for (const p of pts) {
          for (let i = 0; i < h.length; i++) {
            const a = h[i]!;
            const b = h[(i + 1) % h.length]!;
            expect((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])).toBeGreaterThanOrEqual(0);
          }
        }
      }),
    );
  });
});
