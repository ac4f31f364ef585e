/**
 * What the thread that runs a cycle costs and suffers, measured on that thread: its own CPU time
 * (the kernel's per-thread accounting, /proc/thread-self/schedstat, nanoseconds), how often it was
 * scheduled in (its wake-ups: the count that decides a sleeping core's CPU, docs/architecture.md
 * "Wake-up"), and the garbage
 * collections V8 started on its own there (a `gc` PerformanceObserver; in a worker it sees that
 * isolate only). Collections the loop scheduled (gc.ts) carry V8's "forced" flag and are not
 * counted: what is left are the ones that stop the thread at a moment nobody chose.
 *
 * One instance per thread (an isolate's observer sees that isolate), started by the first loop.
 * Prepare side: `snapshot()` reads a file; the observer allocates only when V8 collects.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { PerformanceObserver, constants } from "node:perf_hooks";
import { spunMs } from "./clock.js";

export interface ThreadStatsSnapshot {
  /** CPU time of this thread since it started, ms; null where the OS does not report it per thread. */
  readonly cpuMs: number | null;
  /**
   * How often the kernel scheduled this thread in since it started (schedstat's timeslices): its
   * wake-ups, for a thread that sleeps between cycles; null where the OS does not report it.
   */
  readonly wakeups: number | null;
  /** How long this thread has spun before deadlines (the blocking wake-up's final spin, clock.ts spinUntil), ms. */
  readonly spunMs: number;
  /** Collections V8 started itself on this thread since `ThreadStats.shared()` was first called. */
  readonly gcCollections: number;
  /** The longest of those pauses, ms (0 when none). */
  readonly gcMaxMs: number;
  /** Those collections by V8's kind ("minor": the young generation filled; "major", "incremental": the old one grew), for benches. */
  readonly gcByKind: Readonly<Record<string, number>>;
}

const GC_KIND: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak",
};

/** CPU time of the calling thread, ms, or null (not Linux, or no schedstat). */
export function threadCpuMs(): number | null {
  return threadSchedStat().cpuMs;
}

/** The calling thread's CPU time (ms) and timeslices (how often it was scheduled in), or nulls. */
export function threadSchedStat(): { cpuMs: number | null; wakeups: number | null } {
  try {
    // "<ns on cpu> <ns waiting> <timeslices>": the first field is exact, not clock ticks.
    const f = readFileSync("/proc/thread-self/schedstat", "latin1").split(" ", 3);
    const ns = Number(f[0]);
    const slices = Number(f[2]);
    return { cpuMs: Number.isFinite(ns) ? ns / 1e6 : null, wakeups: Number.isInteger(slices) ? slices : null };
  } catch {
    return { cpuMs: null, wakeups: null };
  }
}

export class ThreadStats {
  static #shared: ThreadStats | null = null;

  /** This thread's instance (module state is per isolate, so per thread). */
  static shared(): ThreadStats {
    ThreadStats.#shared ??= new ThreadStats();
    return ThreadStats.#shared;
  }

  #gcCollections = 0;
  #gcMaxMs = 0;
  readonly #gcByKind: Record<string, number> = {};

  private constructor() {
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const flags = (e as PerformanceEntry & { detail?: { flags?: number } }).detail?.flags ?? 0;
        if (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) continue; // scheduled by the loop (or a test's gc())
        this.#gcCollections++;
        if (e.duration > this.#gcMaxMs) this.#gcMaxMs = e.duration;
        const kind = GC_KIND[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? "other";
        this.#gcByKind[kind] = (this.#gcByKind[kind] ?? 0) + 1;
      }
    });
    observer.observe({ entryTypes: ["gc"] });
    // An observer keeps nothing alive by itself (it has no handle); nothing to unref.
  }

  snapshot(): ThreadStatsSnapshot {
    return { ...threadSchedStat(), spunMs: spunMs(), gcCollections: this.#gcCollections, gcMaxMs: this.#gcMaxMs, gcByKind: { ...this.#gcByKind } };
  }
}

/**
 * The calling thread's CPU time, read every cycle without allocating: /proc/thread-self/schedstat
 * opened once (the path names the thread that opens it), read in place into a fixed buffer (a
 * pread, ~2 µs), its first field parsed from the bytes. The loop uses it to tell a late cycle its
 * own work made late from one the machine did (runtime/loop.ts).
 */
export class ThreadCpuClock {
  readonly #fd: number;
  readonly #buf = Buffer.alloc(64);

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** For the calling thread; null where the OS keeps no per-thread schedstat. */
  static open(): ThreadCpuClock | null {
    try {
      return new ThreadCpuClock(openSync("/proc/thread-self/schedstat", "r"));
    } catch {
      return null;
    }
  }

  /** Writes the opening thread's CPU time, ms, into `out[at]` (NaN when the read fails). A slot, not a return: a returned double is boxed. */
  read(out: Float64Array, at: number): void {
    const buf = this.#buf;
    let n = 0;
    try {
      n = readSync(this.#fd, buf, 0, buf.length, 0);
    } catch {
      out[at] = Number.NaN;
      return;
    }
    let ns = 0;
    let i = 0;
    for (; i < n; i++) {
      const c = buf[i]!;
      if (c < 48 || c > 57) break;
      ns = ns * 10 + (c - 48);
    }
    out[at] = i > 0 ? ns / 1e6 : Number.NaN;
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // already closed
    }
  }
}
