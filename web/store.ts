/**
 * The plots' history: one time column (epoch seconds) and any number of named value columns, all
 * sampled together (one row per stream message). Columns are Float64Arrays with room for twice
 * the kept history; when the end is reached the newest half is copied to the front, so a window
 * of rows is always one contiguous `subarray` (no copy per redraw) and adding a row allocates
 * nothing.
 */
export class SeriesStore {
  readonly capacity: number;
  readonly time: Float64Array;
  readonly #columns = new Map<string, Float64Array>();
  #start = 0;
  #end = 0;
  /** Rows ever added (for tests and for "new points arrived" checks). */
  added = 0;

  /** Keep at least `keepRows` rows. */
  constructor(keepRows: number) {
    this.capacity = keepRows * 2;
    this.time = new Float64Array(this.capacity);
  }

  /** The column `name`, created (NaN-filled) on first use. */
  column(name: string): Float64Array {
    let c = this.#columns.get(name);
    if (!c) {
      c = new Float64Array(this.capacity).fill(Number.NaN);
      this.#columns.set(name, c);
    }
    return c;
  }

  get names(): string[] {
    return [...this.#columns.keys()];
  }

  get length(): number {
    return this.#end - this.#start;
  }

  /** Start a row at `timeS`; returns its index, to write each column's value at. */
  push(timeS: number): number {
    const keep = this.capacity / 2;
    if (this.#end === this.capacity) {
      // Slide the newest `keep` rows to the front (once every `keep` rows).
      const from = this.capacity - keep;
      this.time.copyWithin(0, from);
      for (const c of this.#columns.values()) c.copyWithin(0, from);
      this.#start = Math.max(0, this.#start - from);
      this.#end = keep;
    }
    const i = this.#end++;
    if (this.#end - this.#start > keep) this.#start = this.#end - keep;
    this.time[i] = timeS;
    for (const c of this.#columns.values()) c[i] = Number.NaN;
    this.added++;
    return i;
  }

  /** Row range [from, to) of the kept rows whose time is within [t0, t1]. */
  range(t0: number, t1: number): [number, number] {
    // Times only grow: binary searches for the first row at or after t0 and the first after t1.
    const a = this.#lowerBound(t0, (v, t) => v < t);
    const b = Math.max(
      a,
      this.#lowerBound(t1, (v, t) => v <= t),
    );
    return [a, b];
  }

  /** The first kept row whose time fails `before(time, t)`. */
  #lowerBound(t: number, before: (v: number, t: number) => boolean): number {
    let a = this.#start;
    let b = this.#end;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (before(this.time[m]!, t)) a = m + 1;
      else b = m;
    }
    return a;
  }

  get firstRow(): number {
    return this.#start;
  }
  get endRow(): number {
    return this.#end;
  }

  /** CSV of `names` for rows [from, to): epoch_ms, iso time, then one column per name. */
  csv(names: readonly string[], from: number, to: number): string {
    const cols = names.map((n) => this.#columns.get(n));
    const lines = [["epoch_ms", "time_iso", ...names.map(csvField)].join(",")];
    for (let i = from; i < to; i++) {
      const ms = Math.round(this.time[i]! * 1000);
      const row = [String(ms), new Date(ms).toISOString()];
      for (const c of cols) {
        const v = c ? c[i]! : Number.NaN;
        row.push(Number.isFinite(v) ? String(+v.toPrecision(7)) : "");
      }
      lines.push(row.join(","));
    }
    return `${lines.join("\n")}\n`;
  }
}

function csvField(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
