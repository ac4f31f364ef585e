/**
 * Live plots (uPlot): one SeriesStore row per stream message, charts redrawn at most 10 times a
 * second and only while on screen. The x axis follows the newest sample over the chosen window
 * (10 s … 120 s); Pause freezes it (new samples are still recorded), dragging across a chart
 * zooms every chart to that span and pauses, Live resumes. Clicking a legend entry hides or shows
 * that signal; the joint picker chooses which joints the joint charts show. Export CSV writes the
 * signals shown, over the rows in the visible window.
 */
import uPlot from "uplot";
import { decimateMinMax } from "./decimate.js";
import type { SeriesStore } from "./store.js";
import { make, setText } from "./util.js";

export interface SeriesSpec {
  /** Store column. */
  readonly key: string;
  readonly label: string;
  readonly color: string;
  readonly dash?: readonly number[];
  /** Scale (axis) this series uses; defaults to the chart's first. */
  readonly scale?: string;
}

export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  /** Axis label per scale, first = left axis, second (optional) = right axis. */
  readonly axes: ReadonlyArray<{ readonly scale: string; readonly label: string }>;
  readonly series: readonly SeriesSpec[];
}

export const PALETTE = ["#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#be185d"];
export const WINDOWS_S = [10, 30, 60, 120] as const;
const REDRAW_EVERY_MS = 100;
/** performance.measure name of one redraw of the charts. */
export const REDRAW_MEASURE = "bodylink:plots-redraw";
const CHART_HEIGHT_PX = 150;
/** Decimated charts get one min/max pair per this many pixels of width. */
const PX_PER_BUCKET = 3;

interface Chart {
  spec: ChartSpec;
  plot: uPlot;
  box: HTMLElement;
  visible: boolean;
  /** What uPlot draws: views of the history, or (where a signal has gaps) arrays with null for NaN. */
  data: Array<Float64Array | Array<number | null>>;
  /** Reused arrays for min/max decimation. */
  decimated: { x: Float64Array; series: Array<Array<number | null>> };
}

/** y range with a 5 % margin; a flat signal gets a small band around its value instead of uPlot's 0..100. */
function yRange(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const span = max - min;
  if (span < 1e-9) {
    const d = Math.max(Math.abs(min) * 0.1, 0.05);
    return [min - d, max + d];
  }
  return [min - span * 0.05, max + span * 0.05];
}

/** Axis labels: local wall-clock time, minutes and seconds. */
function clock(epochS: number): string {
  const d = new Date(epochS * 1000);
  return `${String(d.getMinutes()).padStart(2, "0")}:${String(d.getSeconds()).padStart(2, "0")}`;
}

export class Plots {
  readonly #store: SeriesStore;
  readonly #root: HTMLElement;
  readonly #charts = new Map<string, Chart>();
  readonly #observer: IntersectionObserver;
  readonly #resize: ResizeObserver;
  #windowS = 60;
  #paused = false;
  /** The frozen or zoomed x range while paused, epoch s. */
  #view: { min: number; max: number } | null = null;
  #lastDraw = 0;
  #ownScale = false;
  #measures = 0;
  readonly #stateText: HTMLElement;
  /** Charts drawn (tests read it through the DOM: data-draws on the root). */
  draws = 0;

  constructor(root: HTMLElement, store: SeriesStore, stateText: HTMLElement) {
    this.#root = root;
    this.#store = store;
    this.#stateText = stateText;
    this.#observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const c = [...this.#charts.values()].find((x) => x.box === e.target);
        if (c) c.visible = e.isIntersecting;
      }
    });
    this.#resize = new ResizeObserver(() => this.#fit());
    this.#resize.observe(root);
    this.#showState();
  }

  get paused(): boolean {
    return this.#paused;
  }
  get windowS(): number {
    return this.#windowS;
  }

  /** Add or replace chart `spec.id` (replacing keeps its place). */
  set(spec: ChartSpec): void {
    const old = this.#charts.get(spec.id);
    const box = old?.box ?? make("div", "chart");
    if (!old) {
      box.dataset.chart = spec.id;
      this.#root.append(box);
      this.#observer.observe(box);
    }
    old?.plot.destroy();
    box.replaceChildren();
    const scales: uPlot.Scales = { x: { time: true, auto: false } };
    for (const a of spec.axes) scales[a.scale] = { auto: true, range: yRange };
    const axes: uPlot.Axis[] = [
      { stroke: "#4a4a4a", grid: { stroke: "#ececec" }, ticks: { stroke: "#d0d0d0" }, values: (_u, splits) => splits.map(clock) },
      ...spec.axes.map(
        (a, i): uPlot.Axis => ({
          scale: a.scale,
          label: a.label,
          labelSize: 16,
          size: 52,
          side: i === 0 ? 3 : 1,
          stroke: "#4a4a4a",
          grid: { show: i === 0, stroke: "#ececec" },
          ticks: { stroke: "#d0d0d0" },
        }),
      ),
    ];
    const series: uPlot.Series[] = [
      {},
      ...spec.series.map(
        (s): uPlot.Series => ({ label: s.label, stroke: s.color, width: 1.5, scale: s.scale ?? spec.axes[0]!.scale, ...(s.dash ? { dash: [...s.dash] } : {}), points: { show: false } }),
      ),
    ];
    const plot = new uPlot(
      {
        title: spec.title,
        width: Math.max(200, this.#root.clientWidth - 4),
        height: CHART_HEIGHT_PX,
        scales,
        axes,
        series,
        legend: { live: false },
        cursor: { sync: { key: "bodylink" }, drag: { x: true, y: false } },
        hooks: { setScale: [(u, key) => this.#onScale(u, key)] },
      },
      [[], ...spec.series.map(() => [])],
      box,
    );
    const chart: Chart = { spec, plot, box, visible: old?.visible ?? true, data: [[], ...spec.series.map(() => [])], decimated: { x: new Float64Array(0), series: [] } };
    this.#charts.set(spec.id, chart);
    this.#draw(chart, this.#range());
  }

  remove(id: string): void {
    const c = this.#charts.get(id);
    if (!c) return;
    c.plot.destroy();
    this.#observer.unobserve(c.box);
    c.box.remove();
    this.#charts.delete(id);
  }

  setWindow(s: number): void {
    this.#windowS = s;
    if (!this.#paused) this.redraw(true);
  }

  pause(): void {
    if (this.#paused) return;
    const t1 = this.#newest();
    this.#paused = true;
    this.#view = { min: t1 - this.#windowS, max: t1 };
    this.#showState();
  }

  live(): void {
    this.#paused = false;
    this.#view = null;
    this.#showState();
    this.redraw(true);
  }

  /** Whether tick(now) would redraw (live and REDRAW_EVERY_MS since the last redraw). */
  due(now: number): boolean {
    return !this.#paused && now - this.#lastDraw >= REDRAW_EVERY_MS;
  }

  /** Call every animation frame; draws at most every REDRAW_EVERY_MS, only charts on screen. */
  tick(now: number): void {
    // Rows recorded, paused or not (tests and people can see that samples keep coming).
    this.#root.dataset.rows = String(this.#store.added);
    if (!this.due(now)) return;
    this.#lastDraw = now;
    this.redraw(false);
  }

  redraw(all: boolean): void {
    const t0 = performance.now();
    const r = this.#range();
    for (const c of this.#charts.values()) if (all || c.visible) this.#draw(c, r);
    // User Timing, for the frame-budget bench (bench/dashboard.bench.ts); bounded.
    performance.measure(REDRAW_MEASURE, { start: t0, end: performance.now() });
    if (++this.#measures >= 1200) {
      performance.clearMeasures(REDRAW_MEASURE);
      this.#measures = 0;
    }
    this.#root.dataset.draws = String(this.draws);
    this.#root.dataset.rows = String(this.#store.added);
  }

  /** The x range shown, epoch s. */
  visibleRange(): { min: number; max: number } {
    return this.#range();
  }

  /** CSV of the shown signals over the visible window. */
  csv(): { text: string; rows: number; columns: readonly string[] } {
    const { min, max } = this.#range();
    const [from, to] = this.#store.range(min, max);
    const columns: string[] = [];
    for (const c of this.#charts.values()) {
      c.spec.series.forEach((s, i) => {
        if (c.plot.series[i + 1]?.show !== false && !columns.includes(s.key)) columns.push(s.key);
      });
    }
    return { text: this.#store.csv(columns, from, to), rows: to - from, columns };
  }

  #newest(): number {
    const s = this.#store;
    return s.length > 0 ? s.time[s.endRow - 1]! : Date.now() / 1000;
  }

  #range(): { min: number; max: number } {
    if (this.#view) return this.#view;
    const t1 = this.#newest();
    return { min: t1 - this.#windowS, max: t1 };
  }

  #draw(c: Chart, r: { min: number; max: number }): void {
    const s = this.#store;
    // A little before the window so the line enters from the left edge.
    const [from, to] = s.range(r.min - 1, r.max);
    const cols = [s.time, ...c.spec.series.map((x) => s.column(x.key))];
    // More rows than the chart has pixels for: draw each column's min and max per few pixels instead.
    const buckets = Math.max(16, Math.floor(c.plot.width / PX_PER_BUCKET));
    if (to - from > 2 * buckets) this.#decimate(c, cols, from, to, buckets);
    else this.#copy(c, cols, from, to);
    this.#ownScale = true;
    try {
      c.plot.batch(() => {
        c.plot.setData(c.data as uPlot.AlignedData, true);
        c.plot.setScale("x", r);
      });
    } finally {
      this.#ownScale = false;
    }
    this.draws++;
  }

  /** The rows themselves: views of the history where a column has no gaps, else null for NaN. */
  #copy(c: Chart, cols: readonly Float64Array[], from: number, to: number): void {
    const n = to - from;
    for (let k = 0; k < cols.length; k++) {
      const src = cols[k]!;
      let gaps = false;
      for (let i = from; i < to; i++) {
        if (Number.isNaN(src[i]!)) {
          gaps = true;
          break;
        }
      }
      if (!gaps) {
        // No gaps: hand uPlot a view of the history itself (no copy, nothing allocated per point).
        c.data[k] = src.subarray(from, to);
        continue;
      }
      const dst = (Array.isArray(c.data[k]) ? c.data[k] : []) as Array<number | null>;
      dst.length = n;
      for (let i = 0; i < n; i++) {
        const v = src[from + i]!;
        dst[i] = Number.isNaN(v) ? null : v;
      }
      c.data[k] = dst;
    }
  }

  #decimate(c: Chart, cols: readonly Float64Array[], from: number, to: number, buckets: number): void {
    decimateMinMax(cols[0]!, cols.slice(1), from, to, buckets, c.decimated);
    c.data[0] = c.decimated.x;
    for (let k = 1; k < cols.length; k++) c.data[k] = c.decimated.series[k - 1]!;
  }

  /** A drag-zoom on one chart: pause and show that span on every chart. */
  #onScale(u: uPlot, key: string): void {
    if (this.#ownScale || key !== "x") return;
    const min = u.scales.x!.min;
    const max = u.scales.x!.max;
    if (min === undefined || max === undefined || min === null || max === null) return;
    this.#paused = true;
    this.#view = { min, max };
    this.#showState();
    this.redraw(true);
  }

  #fit(): void {
    const w = Math.max(200, this.#root.clientWidth - 4);
    for (const c of this.#charts.values()) if (Math.abs(c.plot.width - w) > 1) c.plot.setSize({ width: w, height: CHART_HEIGHT_PX });
  }

  #showState(): void {
    this.#root.dataset.paused = String(this.#paused);
    setText(this.#stateText, this.#paused ? "paused: new samples are kept, the view is frozen (Live resumes)" : `live, last ${this.#windowS} s`);
  }
}
