import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { Authority } from "../src/runtime/authority.js";
import { MonotonicClock, SimClock } from "../src/runtime/clock.js";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { youngGenerationCollector } from "../src/runtime/gc.js";
import { CycleLoop } from "../src/runtime/loop.js";
import { ThreadStats, threadCpuMs, threadSchedStat } from "../src/runtime/thread-stats.js";
import { CycleTiming } from "../src/runtime/timing.js";

describe("CycleTiming", () => {
  it("returns the recorded periods oldest first, and only the newest `capacity` once the ring wraps", () => {
    const t = new CycleTiming(12, 4);
    for (const p of [11, 12, 13]) t.record(p, 0.1, 0, false);
    expect([...t.periods()]).toEqual([11, 12, 13]);
    for (const p of [14, 15, 16]) t.record(p, 0.1, 0, false);
    expect([...t.periods()]).toEqual([13, 14, 15, 16]);
    expect(t.summary().periodMs.max).toBe(16);
    t.reset();
    expect(t.periods().length).toBe(0);
  });
  it("summarises only the newest `windowCycles` cycles when asked, across the ring's wrap, and never more than it holds", () => {
    const t = new CycleTiming(12, 8);
    // lateness i/10 ms for cycle i (i = 1..11: the ring wraps), one early start (negative: counted as 0)
    t.record(12, 0.1, -0.5, false);
    for (let i = 1; i <= 11; i++) t.record(12 + i, 0.01 * i, i / 10, i > 9);
    const last3 = t.summary(3);
    expect(last3.windowCycles).toBe(3);
    expect(last3.latenessMs).toEqual({ p50: 1, p99: 1.1, max: 1.1 });
    expect(last3.periodMs).toEqual({ p50: 22, p99: 23, max: 23 });
    expect(last3.execMs.max).toBeCloseTo(0.11, 12);
    expect(last3.jitterP99Ms).toBe(11);
    const all = t.summary();
    expect(all.windowCycles).toBe(8); // the ring's capacity
    expect(all.latenessMs.p50).toBe(0.8); // cycles 4..11: floor(0.5·8) = index 4 → 0.8
    expect(all.lateCycles).toBe(2);
    expect(all.cycles).toBe(12);
    expect(t.summary(100).windowCycles).toBe(8);
    expect(t.summary(0).windowCycles).toBe(0);
    const fresh = new CycleTiming(12, 8);
    fresh.record(12, 0.1, -0.5, false);
    expect(fresh.summary().latenessMs).toEqual({ p50: 0, p99: 0, max: 0 }); // early is not late
  });
});

describe("ThreadStats", () => {
  it("counts the collections V8 starts by itself on this thread, not the forced ones, and reports this thread's CPU time", async () => {
    const stats = ThreadStats.shared();
    const collect = youngGenerationCollector();
    if (!collect) throw new Error("V8 refused a gc function");
    // An independent observer: what V8 reported meanwhile, split by its "forced" flag (vitest
    // allocates too, so V8 may collect on its own during the test: those must be counted).
    const seen = { forced: 0, own: 0 };
    const raw = new PerformanceObserver((l) => {
      for (const e of l.getEntries()) {
        if (((e as PerformanceEntry & { detail?: { flags?: number } }).detail?.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) seen.forced++;
        else seen.own++;
      }
    });
    raw.observe({ entryTypes: ["gc"] });
    await new Promise((r) => setTimeout(r, 20)); // entries from before are delivered to neither
    const before = stats.snapshot();
    const seen0 = { ...seen };
    for (let i = 0; i < 5; i++) collect(); // forced: the loop's scheduled kind
    let keep: object[] = [];
    for (let i = 0; i < 2_000_000; i++) keep.push({ i }); // fills the young generation several times over
    keep = [];
    await new Promise((r) => setTimeout(r, 50)); // observer entries are delivered asynchronously
    const after = stats.snapshot();
    raw.disconnect();
    expect(seen.forced - seen0.forced).toBeGreaterThanOrEqual(5);
    expect(seen.own - seen0.own).toBeGreaterThan(0);
    expect(after.gcCollections - before.gcCollections).toBe(seen.own - seen0.own);
    expect(after.gcMaxMs).toBeGreaterThan(0);
    expect(keep.length).toBe(0);
    if (process.platform === "linux") {
      expect(after.cpuMs).toBeGreaterThan(before.cpuMs!); // the allocation loop above ran on this thread
      expect(threadCpuMs()).not.toBeNull();
      // a blocking sleep gives the CPU away: the thread is scheduled in again at least once per sleep
      const s0 = threadSchedStat().wakeups!;
      const cell = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 5; i++) Atomics.wait(cell, 0, 0, 2);
      expect(threadSchedStat().wakeups! - s0).toBeGreaterThanOrEqual(5);
      expect(after.wakeups).toBeGreaterThanOrEqual(before.wakeups!);
    }
  });
});

describe("CycleLoop", () => {
  it("counts the deadlines a stall made it skip: cycles + missed = every deadline passed", async () => {
    const clock = new SimClock();
    let n = 0;
    // cycle 4 stalls the thread for 100 ms (the clock moves while it runs)
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => void (++n === 4 && clock.set(t + 100)) }, clock);
    loop.start();
    await clock.advance(600);
    await loop.stop();
    const s = loop.timing.summary();
    // cycle 5 starts 88 ms after its deadline: counted late, and the 7 deadlines that passed
    // meanwhile (each 12 ms up to 84 ms after it) are missed; from there on it paces from now
    expect(s.lateCycles).toBe(1);
    expect(s.missedCycles).toBe(7);
    const deadlines = Math.floor(600 / 12) + 1;
    expect(s.cycles + s.missedCycles).toBeGreaterThanOrEqual(deadlines - 1); // the skip shifts the phase by under a period
    expect(s.cycles + s.missedCycles).toBeLessThanOrEqual(deadlines);
  });
  it("tells a cycle its own work made late from one the machine woke late", async () => {
    const clock = new SimClock();
    let n = 0;
    // cycle 4 (t = 36) runs 20 ms: cycle 5, due at 48, starts at 56, 8 ms late (bound 6) with the thread busy until then
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => void (++n === 4 && clock.set(t + 20)) }, clock);
    loop.start();
    await clock.advance(100);
    expect(loop.timing.summary()).toMatchObject({ lateCycles: 1, lateCyclesOwnWork: 1 });
    // asleep since its cycle at 96, the thread is woken at 120 for its deadline at 108: the machine's
    clock.set(120);
    await clock.advance(100);
    await loop.stop();
    expect(loop.timing.summary()).toMatchObject({ lateCycles: 2, lateCyclesOwnWork: 1 });
    loop.timing.reset();
    expect(loop.timing.summary().lateCyclesOwnWork).toBe(0);
  });
  it("on the wall clock, by the thread's CPU time: a cycle that computes past the next deadline is its own work; one that is stopped as long is the machine's", async () => {
    const block = new Int32Array(new SharedArrayBuffer(4));
    /** Cycle 3 stalls; what the loop made of cycle 4 (its counters read in cycles 4 and 5, around cycle 4's record). */
    const cycle4After = async (stall: () => void) => {
      let n = 0;
      const at: Array<{ late: number; own: number }> = [];
      const loop = new CycleLoop(
        {
          periodMs: 12,
          cycle: () => {
            if (++n === 3) stall();
            if (n === 4 || n === 5) at.push({ late: loop.timing.lateCycles, own: loop.timing.lateCyclesOwnWork });
          },
        },
        new MonotonicClock(),
        { lateByCpuTime: true },
      );
      loop.start();
      while (n < 5) await new Promise((r) => setTimeout(r, 5));
      await loop.stop();
      return { late: at[1]!.late - at[0]!.late, own: at[1]!.own - at[0]!.own };
    };
    // 40 ms of this thread's CPU (measured, so a loaded machine only stretches it): cycle 4 cannot start in time
    const computed = await cycle4After(() => {
      const t0 = threadSchedStat().cpuMs!;
      while (threadSchedStat().cpuMs! - t0 < 40) {}
    });
    expect(computed).toEqual({ late: 1, own: 1 });
    // 40 ms asleep inside the cycle, as a thread the kernel does not run: late, and not its own work
    expect(await cycle4After(() => Atomics.wait(block, 0, 0, 40))).toEqual({ late: 1, own: 0 });
  });
  it("a late cycle it can still catch up is run, not missed", async () => {
    const clock = new SimClock();
    let n = 0;
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => void (++n === 4 && clock.set(t + 20)) }, clock); // 20 ms: under two periods
    loop.start();
    await clock.advance(600);
    await loop.stop();
    const s = loop.timing.summary();
    expect(s.missedCycles).toBe(0);
    expect(s.cycles).toBe(Math.floor(600 / 12) + 1);
  });
  it("paces cycles on absolute deadlines in simulated time, without drift", async () => {
    const clock = new SimClock();
    const starts: number[] = [];
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => starts.push(t) }, clock);
    loop.start();
    await clock.advance(12 * 10);
    await loop.stop();
    expect(starts).toEqual(Array.from({ length: 11 }, (_, i) => i * 12));
    expect(loop.timing.summary().jitterP99Ms).toBe(0);
  });
  it("with a pacer, cycles start at the device's events and fall back to the clock when it has none", async () => {
    const clock = new SimClock();
    const starts: number[] = [];
    const deadlines: number[] = [];
    let wake: (() => void) | null = null;
    // A device that has something when the test says so; otherwise the loop's own deadline.
    const pacer = {
      wait(deadlineMs: number) {
        deadlines.push(deadlineMs);
        return new Promise<void>((resolve) => {
          wake = resolve;
          void clock.sleepUntil(deadlineMs).then(resolve);
        });
      },
    };
    const late: number[] = [];
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => starts.push(t), onLate: (ms) => late.push(ms) }, clock, { pacer });
    loop.start();
    await clock.advance(0); // the first wait
    await clock.advance(5);
    wake!(); // the device's message at t=5 starts a cycle at once
    await clock.advance(0);
    await clock.advance(7);
    wake!(); // and one at t=12
    await clock.advance(0);
    await clock.advance(40); // silence: the clock takes over, one period after the last cycle
    await loop.stop();
    expect(starts).toEqual([0, 5, 12, 24, 36, 48]); // the first at start, as without a pacer
    // Each deadline is one period after the cycle before it actually started: the device's pace.
    expect(deadlines.slice(0, 6)).toEqual([0, 12, 17, 24, 36, 48]);
    expect(late).toEqual([]);
  });
  it("with a push pacer, a device event runs its cycle inside the event's own call, and the clock takes over when it goes silent", async () => {
    const clock = new SimClock();
    const starts: number[] = [];
    let runNow: (() => void) | null = null;
    const waits: number[] = [];
    // A device that pushes (calls runNow from its callback) and, like the upstream LoLA driver,
    // lets its wait resolve only on its own fallback: two periods after its last event.
    let lastEventMs = Number.NEGATIVE_INFINITY;
    const pacer = {
      attach: (r: (() => void) | null) => {
        runNow = r;
      },
      async wait(deadlineMs: number) {
        waits.push(deadlineMs);
        let at = deadlineMs + 12;
        for (;;) {
          await clock.sleepUntil(at);
          if (clock.nowMs() >= lastEventMs + 24) return;
          at = lastEventMs + 24; // an event came meanwhile: the fallback counts from it
        }
      },
    };
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => starts.push(t) }, clock, { pacer });
    loop.start();
    await clock.advance(0);
    expect(runNow).not.toBeNull();
    for (const t of [3, 15, 27]) {
      await clock.advance(t - clock.nowMs());
      const before = loop.seq;
      lastEventMs = t;
      runNow!(); // the device's message: the cycle has run when the call returns
      expect(loop.seq).toBe(before + 1);
    }
    await clock.advance(60); // silence: the fallback runs cycles, paced one period after the last
    const pushed = starts.filter((t) => t <= 27);
    await loop.stop();
    expect(runNow).toBeNull(); // detached on stop
    expect(pushed).toEqual([3, 15, 27]);
    // One wait (and one promise) covered all three pushed cycles and the silence after them; the
    // fallback ran the next cycle at 27 + 24, then one every 24 ms of silence.
    expect(starts.slice(3)).toEqual([51, 75]);
    expect(waits.slice(0, 2)).toEqual([0, 63]);
    expect(loop.timing.lateCycles).toBe(2); // the fallback's cycles start a period after their deadline: late, as they are
  });
  it("a running loop keeps nothing per cycle: its live heap does not grow over 20,000 cycles (bytes)", async () => {
    // A full collection before each reading: what is left is what the loop keeps. Racing each wait
    // against one long-lived stop promise kept a reaction per cycle (~350 B) until stop: ~7 MB here.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as (o: { type: "major"; execution: "sync" }) => void;
    const live = (): number => {
      gc({ type: "major", execution: "sync" });
      return process.memoryUsage().heapUsed;
    };
    const clock = new SimClock();
    let n = 0;
    const loop = new CycleLoop({ periodMs: 12, cycle: () => n++ }, clock);
    loop.start();
    await clock.advance(12 * 2000); // warm-up
    const before = live();
    await clock.advance(12 * 20_000);
    const after = live();
    await loop.stop();
    expect(n).toBeGreaterThan(21_000);
    expect(after - before).toBeLessThan(300_000);
  });
  it("stops while asleep on a SimClock without time passing", async () => {
    const clock = new SimClock();
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, clock);
    loop.start();
    await clock.advance(1);
    await loop.stop();
    expect(loop.running).toBe(false);
  });
  it("reports late cycles to the body and does not burst to catch up", () => {
    const clock = new SimClock();
    const late: number[] = [];
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {}, onLate: (ms) => late.push(ms) }, clock, { lateBoundMs: 6 });
    loop.step();
    expect(late).toEqual([]);
    expect(loop.timing.cycles).toBe(1);
  });
  it("runs on the wall clock and never gets ahead of its 12 ms deadlines", async () => {
    const clock = new MonotonicClock();
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, clock);
    const t0 = clock.nowMs();
    loop.start();
    await new Promise((r) => setTimeout(r, 310));
    await loop.stop();
    const n = loop.timing.cycles;
    // Absolute deadlines: at most 310/12 + 1 cycles, however the machine is loaded (the upper
    // bound is the property); the lower bound only says it ran. Timing is bench/nao's business.
    expect(n).toBeGreaterThanOrEqual(5);
    expect(n).toBeLessThanOrEqual(28);
    expect(clock.nowMs() - t0).toBeGreaterThan(300);
  });
});

describe("MonotonicClock options", () => {
  it("refuses an unknown wake mode and a spin outside 0–2 ms", () => {
    expect(() => new MonotonicClock({ wake: "poll" as "spin" })).toThrow(/wake must be one of spin, wait, block; got poll/);
    expect(() => new MonotonicClock({ wake: "wait", spinMs: -1 })).toThrow(/spinMs must be "auto" or between 0 and 2/);
    expect(() => new MonotonicClock({ wake: "wait", spinMs: Number.NaN })).toThrow(/spinMs/);
  });
});

describe("MonotonicClock blocking in Atomics.wait (wait, block)", () => {
  for (const wake of ["wait", "block"] as const) {
    for (const spinMs of [0, 0.05, "auto"] as const) {
      it(`${wake}, final spin ${spinMs} ms: resolves every sleep at or after its deadline, never before`, async () => {
        const clock = new MonotonicClock({ wake, spinMs });
        for (const d of [0.2, 1, 1.4, 3, 13, -5]) {
          const deadline = clock.nowMs() + d;
          await clock.sleepUntil(deadline);
          expect(clock.nowMs()).toBeGreaterThanOrEqual(deadline);
        }
      });
    }
    it(`${wake}: drives a CycleLoop on absolute deadlines (never ahead of them)`, async () => {
      const clock = new MonotonicClock({ wake });
      const starts: number[] = [];
      const loop = new CycleLoop({ periodMs: 12, cycle: (t) => starts.push(t) }, clock);
      const t0 = clock.nowMs();
      loop.start();
      await new Promise((r) => setTimeout(r, 130));
      await loop.stop();
      expect(starts.length).toBeGreaterThanOrEqual(2);
      // cycle k starts at or after t0 + 12k (the first at once): the property, whatever the load
      for (const [k, t] of starts.entries()) expect(t).toBeGreaterThanOrEqual(t0 + 12 * k - 1e-9);
      expect(loop.timing.summary().latenessMs.p50).toBeGreaterThanOrEqual(0);
    });
  }
  it("block: a task queued before the sleep runs before it resolves (the thread turns its event loop first)", async () => {
    const clock = new MonotonicClock({ wake: "block" });
    const order: string[] = [];
    setImmediate(() => order.push("queued task"));
    await clock.sleepUntil(clock.nowMs() + 5);
    order.push("woke");
    expect(order).toEqual(["queued task", "woke"]);
  });
});

describe("CycleLoop: scheduled young-generation collection", () => {
  it("collects every youngGcEveryMs of the clock, after a cycle, and records each duration", async () => {
    const clock = new SimClock();
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, clock, { youngGcEveryMs: 24, youngGcMinBytes: 0 });
    expect(loop.schedulesGc).toBe(true);
    loop.start();
    // One before the first deadline (not recorded: a fresh heap's first collections are the slow
    // ones), then after the cycles at 24, 48, 72, 96 and 120 (cycles at 0, 12, …, 120).
    await clock.advance(12 * 10);
    await loop.stop();
    expect(loop.timing.summary().gc.collections).toBe(5);
  });
  it("skips a collection when less than a quarter period is left before the next deadline", async () => {
    const clock = new SimClock();
    // Each cycle "takes" 10 of its 12 ms: 2 ms of slack is under a quarter period (3 ms).
    const loop = new CycleLoop({ periodMs: 12, cycle: (t) => clock.set(t + 10) }, clock, { youngGcEveryMs: 12, youngGcMinBytes: 0 });
    loop.start();
    await clock.advance(12 * 5);
    await loop.stop();
    expect(loop.timing.cycles).toBeGreaterThan(3);
    expect(loop.timing.summary().gc.collections).toBe(0); // only the unrecorded one before the first deadline
  });
  it("one slow collection makes it cautious for a while, not for good", async () => {
    const clock = new SimClock();
    let calls = 0;
    // The first collection in the loop takes 20 ms (more than the whole slack), the rest 0.5 ms.
    const collector = () => clock.set(clock.nowMs() + (++calls === 2 ? 20 : 0.5));
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, clock, { youngGcEveryMs: 24, youngGcCollector: collector, youngGcMinBytes: 0 });
    loop.start();
    await clock.advance(1000);
    await loop.stop();
    // Without the decay it would have stopped at 2 (the one before the first cycle, then the slow one).
    expect(calls).toBeGreaterThan(10);
    expect(loop.timing.summary().gc.collections).toBe(calls - 1); // all but the one before the first cycle
  });
  it("leaves collection to V8 unless asked (the CLI asks); on the wall clock each collection takes real time", async () => {
    expect(new CycleLoop({ periodMs: 12, cycle: () => {} }, new SimClock()).schedulesGc).toBe(false);
    expect(new CycleLoop({ periodMs: 12, cycle: () => {} }, new MonotonicClock()).schedulesGc).toBe(false);
    const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, new MonotonicClock(), { youngGcEveryMs: 50, youngGcMinBytes: 0 });
    expect(loop.schedulesGc).toBe(true);
    loop.start();
    await new Promise((r) => setTimeout(r, 250));
    await loop.stop();
    const gc = loop.timing.summary().gc;
    expect(gc.collections).toBeGreaterThanOrEqual(2);
    expect(gc.ms.max).toBeGreaterThan(0);
  });
  it("skips a scheduled collection while the young generation is nearly empty, and collects once it has filled", async () => {
    const clock = new SimClock();
    let used = 0;
    let calls = 0;
    const collector = () => {
      calls++;
      used = 0; // a scavenge empties it
    };
    // 10 KB allocated per cycle, a 16 MB young generation: 256 KiB take 26 cycles (312 ms).
    const loop = new CycleLoop(
      {
        periodMs: 12,
        cycle: () => {
          used += 10_240;
        },
      },
      clock,
      {
        youngGcEveryMs: 100,
        youngGcCollector: collector,
        youngGcUsage: () => ({ usedBytes: used, capacityBytes: 16 << 20 }),
      },
    );
    loop.start();
    await clock.advance(12 * 300); // 300 cycles: ~36 checks, 300 × 10 KB / 256 KiB ≈ 11.7 fills
    await loop.stop();
    const collections = loop.timing.summary().gc.collections;
    expect(calls).toBe(collections + 1); // + the one before the first deadline, always taken
    expect(collections).toBeGreaterThanOrEqual(9);
    expect(collections).toBeLessThanOrEqual(12);
    expect(loop.gcSkipped).toBeGreaterThan(collections); // most checks found it nearly empty
  });
  it("spaces its readings of the young generation by the rate it fills, and still finds a burst within five intervals", async () => {
    const clock = new SimClock();
    let used = 0;
    let perCycle = 1024; // ~1 KB a cycle, as the NAO's core: 256 KiB take ~3 s
    let readings = 0;
    let collections = 0;
    let mostUsed = 0;
    const loop = new CycleLoop(
      {
        periodMs: 12,
        cycle: () => {
          used += perCycle;
          mostUsed = Math.max(mostUsed, used);
        },
      },
      clock,
      {
        youngGcEveryMs: 100,
        youngGcCollector: () => {
          collections++;
          used = 0;
        },
        youngGcUsage: () => {
          readings++;
          return { usedBytes: used, capacityBytes: 16 << 20 };
        },
      },
    );
    loop.start();
    await clock.advance(12 * 1000); // 12 s: reading every interval would have read it ~120 times
    expect(collections - 1).toBeGreaterThanOrEqual(3); // (the one before the first deadline is not read)
    expect(readings).toBeLessThan(40);
    expect(mostUsed).toBeLessThan(300 * 1024); // still collected near 256 KiB, not long after
    // A burst: 50 KB a cycle from now on. It is found at the latest five intervals (500 ms, ~42 cycles) later.
    perCycle = 50 * 1024;
    mostUsed = 0;
    await clock.advance(12 * 200);
    await loop.stop();
    expect(mostUsed).toBeLessThanOrEqual(256 * 1024 + 42 * 50 * 1024);
    expect(mostUsed).toBeGreaterThan(256 * 1024);
  });
  it("nothing allocated, nothing collected; a small young generation counts a quarter of its capacity as full enough", async () => {
    const run = async (usage: { usedBytes: number; capacityBytes: number }): Promise<number> => {
      const clock = new SimClock();
      let calls = 0;
      const loop = new CycleLoop({ periodMs: 12, cycle: () => {} }, clock, { youngGcEveryMs: 24, youngGcCollector: () => void calls++, youngGcUsage: () => usage });
      loop.start();
      await clock.advance(12 * 20);
      await loop.stop();
      return calls - 1; // the one before the first deadline is always taken
    };
    expect(await run({ usedBytes: 0, capacityBytes: 16 << 20 })).toBe(0);
    expect(await run({ usedBytes: 200 * 1024, capacityBytes: 16 << 20 })).toBe(0); // under 256 KiB
    expect(await run({ usedBytes: 300 * 1024, capacityBytes: 16 << 20 })).toBeGreaterThan(5);
    expect(await run({ usedBytes: 40 * 1024, capacityBytes: 128 * 1024 })).toBeGreaterThan(5); // over a quarter of 128 KiB
    expect(() => new CycleLoop({ periodMs: 12, cycle: () => {} }, new SimClock(), { youngGcEveryMs: 24, youngGcMinBytes: -1 })).toThrow(/youngGcMinBytes/);
  });
  it("refuses a negative or non-finite interval", () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new CycleLoop({ periodMs: 12, cycle: () => {} }, new SimClock(), { youngGcEveryMs: bad })).toThrow(RangeError);
    }
  });
  it("the collector is V8's own: calling it produces a minor GC entry", async () => {
    const collect = youngGenerationCollector();
    expect(collect).toBeTypeOf("function");
    const kinds: number[] = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) kinds.push((e as PerformanceEntry & { detail: { kind: number } }).detail.kind);
    });
    obs.observe({ entryTypes: ["gc"] });
    collect!();
    await new Promise((r) => setTimeout(r, 50)); // entries are delivered asynchronously
    obs.disconnect();
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MINOR);
  });
});

describe("Authority", () => {
  it("first holder wins until release; the refusal names the holder and the time", () => {
    const clock = new SimClock();
    const a = new Authority(clock);
    const first = a.acquire("alice", "api", 1000);
    expect(first.ok).toBe(true);
    const second = a.acquire("bob", "lola", 1000);
    expect(second.ok).toBe(false);
    if (!second.ok) expect(second.reason).toMatch(/held by alice \(api\) until \d{4}-\d\d-\d\dT/);
    if (first.ok) first.lease.release();
    expect(a.acquire("bob", "lola", 1000).ok).toBe(true);
  });
  it("a lease that is not renewed expires by itself; renewal extends it", () => {
    const clock = new SimClock();
    const a = new Authority(clock);
    const events: string[] = [];
    a.on("released", (i, why) => events.push(`${i.owner} ${why}`));
    const r = a.acquire("alice", "api", 100);
    if (!r.ok) throw new Error();
    clock.set(90);
    expect(r.lease.renew(100)).toBe(true);
    clock.set(180);
    expect(a.isHeld(r.lease.id)).toBe(true);
    clock.set(191);
    expect(a.isHeld(r.lease.id)).toBe(false);
    expect(events).toEqual(["alice expired"]);
    expect(r.lease.renew()).toBe(false);
  });
  it("renew and isHeld at a time the caller read (one clock read per request) judge and move the deadline by that time", () => {
    const epoch0 = Date.UTC(2026, 11, 4);
    const clock = new SimClock(0, epoch0);
    const a = new Authority(clock);
    const r = a.acquire("tny:client", "tny", 100);
    if (!r.ok) throw new Error();
    clock.set(95); // the request arrived at 90 and is served now
    expect(a.isHeld(r.lease.id, 90)).toBe(true);
    expect(a.renew(r.lease.id, 100, 90)).toBe(true);
    // from 90, not from the clock's 95; the epoch deadline follows by the clock's offset at acquire
    expect(a.holder()).toMatchObject({ expiresAtMs: 190, expiresAtEpochMs: epoch0 + 190 });
    expect(a.isHeld(r.lease.id, 189)).toBe(true);
    expect(a.isHeld(r.lease.id, 190)).toBe(false); // past its deadline at that time: expired
    expect(a.renew(r.lease.id, 100, 191)).toBe(false);
    expect(a.holder()).toBeNull();
  });
  it("works with `using`", () => {
    const a = new Authority(new SimClock());
    {
      const r = a.acquire("scoped", "cli", 1000);
      if (!r.ok) throw new Error();
      using lease = r.lease;
      expect(a.holder()?.owner).toBe(lease.info?.owner);
    }
    expect(a.holder()).toBeNull();
  });
});

describe("CycleLoop when code throws", () => {
  it("a throwing cycle or listener is counted, the body is told, and the loop and other listeners go on", () => {
    const clock = new SimClock();
    const told: unknown[] = [];
    let n = 0;
    const loop = new CycleLoop(
      {
        periodMs: 12,
        cycle: () => {
          if (++n === 2) throw new Error("bug in cycle");
        },
        onCycleError: (e) => told.push(e),
      },
      clock,
    );
    const seen: number[] = [];
    loop.onCycle(() => {
      throw new Error("bug in a listener");
    });
    loop.onCycle((seq) => seen.push(seq));
    const log = console.error;
    console.error = () => {};
    try {
      for (let i = 0; i < 3; i++) loop.step();
    } finally {
      console.error = log;
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(told.map((e) => (e as Error).message)).toEqual(["bug in cycle"]);
    expect(loop.errors).toBe(4);
  });
});
