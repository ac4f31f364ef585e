/**
 * The core's watchdog on its host (src/rt/host-watch.ts), without threads: the control words are a
 * plain Int32Array the test beats into, time is the test's, and so is the main thread's run-queue
 * wait (a fake wait clock; the real one is read once at the end). Named cases, then a property
 * against a model: it trips exactly when the silence since the last beat, counted only over gaps
 * a running core could have, passes the bound — once per silence.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CTL } from "../../src/rt/core-shm.js";
import { HostWatch, hostBeatEveryMs, hostUnresponsiveReason, mainThreadWaitClock, PAUSE_GAP_MS, STARVED_LIMIT_BOUNDS } from "../../src/rt/host-watch.js";

function words(timeoutMs: number): Int32Array {
  const ctl = new Int32Array(CTL.words);
  ctl[CTL.hostTimeoutMs] = timeoutMs;
  return ctl;
}

/** Run cycles of `stepMs` from `t` for `ms`; the times it tripped. */
function run(w: HostWatch, t: { now: number }, ms: number, stepMs = 12): number[] {
  const trips: number[] = [];
  for (const end = t.now + ms; t.now < end; ) {
    t.now += stepMs;
    if (w.check(t.now)) trips.push(t.now);
  }
  return trips;
}

describe("HostWatch", () => {
  it("never trips while the host beats, however long", () => {
    const ctl = words(1000);
    const w = new HostWatch(ctl);
    const t = { now: 0 };
    for (let i = 0; i < 1000; i++) {
      if (i % 8 === 0) ctl[CTL.hostBeat]!++; // every ~100 ms at 12 ms cycles
      t.now += 12;
      expect(w.check(t.now)).toBe(false);
    }
  });

  it("trips once when the beat stands still past the bound, not before; a beat re-arms it", () => {
    const ctl = words(1000);
    const w = new HostWatch(ctl);
    const t = { now: 0 };
    w.check(t.now);
    expect(run(w, t, 996)).toEqual([]); // 83 cycles of 12 ms: 996 ms, not past 1000
    const trips = run(w, t, 3000);
    expect(trips).toEqual([1008]); // the first cycle past the bound, and only that one
    expect(w.silentMs).toBeGreaterThan(1000);
    ctl[CTL.hostBeat]!++;
    t.now += 12;
    expect(w.check(t.now)).toBe(false);
    expect(w.silentMs).toBe(0);
    expect(run(w, t, 1200)).toHaveLength(1); // silent again: trips again
  });

  it("does not count a gap its own thread did not run through (SIGSTOP, a stalled core)", () => {
    const ctl = words(1000);
    const w = new HostWatch(ctl);
    w.check(0);
    expect(w.check(5000)).toBe(false); // the whole process stopped for 5 s
    expect(w.silentMs).toBe(0);
    expect(w.check(5000 + PAUSE_GAP_MS)).toBe(false); // exactly the gap: counted
    expect(w.silentMs).toBe(PAUSE_GAP_MS);
    expect(w.check(5000 + 2 * PAUSE_GAP_MS + 1)).toBe(false); // one more than the gap: not
    expect(w.silentMs).toBe(PAUSE_GAP_MS);
  });

  it("with a bound of 0 it watches nothing; the bound is read at every check", () => {
    const ctl = words(0);
    const w = new HostWatch(ctl);
    const t = { now: 0 };
    expect(run(w, t, 5000)).toEqual([]);
    ctl[CTL.hostTimeoutMs] = 200; // the host serves: the serving bound from now on
    expect(run(w, t, 12)).toHaveLength(1); // already silent for 5 s of running time
  });

  it("trips exactly when the modelled silence passes the bound, once per silence (property)", () => {
    const step = fc.oneof(
      fc.record({ beat: fc.constant(true), dtMs: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ beat: fc.constant(false), dtMs: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 2000 })) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 2000 }), fc.array(step, { maxLength: 400 }), (bound, steps) => {
        const ctl = words(bound);
        const w = new HostWatch(ctl);
        let now = 0;
        w.check(now);
        let silent = 0;
        let tripped = false;
        for (const s of steps) {
          if (s.beat) ctl[CTL.hostBeat]!++;
          now += s.dtMs;
          const got = w.check(now);
          let want = false;
          if (s.beat) {
            silent = 0;
            tripped = false;
          } else {
            if (s.dtMs > 0 && s.dtMs <= PAUSE_GAP_MS) silent += s.dtMs;
            if (!tripped && silent > bound) want = tripped = true;
          }
          if (got !== want) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it("does not read a main thread starved of CPU as wedged, up to STARVED_LIMIT_BOUNDS bounds", () => {
    const ctl = words(1000);
    let waitedMs = 0;
    const reads: number[] = [];
    const w = new HostWatch(ctl, () => {
      reads.push(t.now);
      return waitedMs;
    });
    const t = { now: 0 };
    w.check(t.now);
    // Starved: the main thread waits for a CPU the whole time (the run queue's wait grows with the wall).
    const trips: number[] = [];
    let reason = "";
    for (let i = 0; i < 600; i++) {
      t.now += 12;
      waitedMs += 12;
      if (w.check(t.now)) {
        trips.push(t.now);
        reason = hostUnresponsiveReason(w.silentMs, w.starvedMs, 1000);
      }
    }
    expect(trips).toEqual([STARVED_LIMIT_BOUNDS * 1000 + 12 - ((STARVED_LIMIT_BOUNDS * 1000) % 12)]); // 5004: the first cycle past five bounds
    expect(reason).toMatch(/^host unresponsive: the main thread has not beaten for 5004 ms \(bound 1000 ms, 47\d\d ms of it waiting for a CPU\)/);
    // Read from a quarter of the bound on, then at most every 50 ms of silence: not every cycle.
    expect(reads[0]).toBe(252);
    expect(reads.length).toBeLessThan(5004 / 50 + 2);
  });

  it("counts the silence the main thread did not spend waiting for a CPU: busy, it trips at the bound", () => {
    const ctl = words(1000);
    let waitedMs = 0;
    const w = new HostWatch(ctl, () => waitedMs);
    const t = { now: 0 };
    w.check(t.now);
    // Half starved: half of each cycle in the run queue, counted from a quarter of the bound on
    // (252 ms): its own silence, s − (s − 252) / 2, passes 1000 ms at s = 1748.
    const trips: number[] = [];
    for (let i = 0; i < 400; i++) {
      t.now += 12;
      waitedMs += 6;
      if (w.check(t.now)) trips.push(t.now);
    }
    expect(trips).toHaveLength(1);
    expect(trips[0]).toBeGreaterThan(1748);
    expect(trips[0]).toBeLessThanOrEqual(1748 + 12);
    // The host beats again, then is busy (no wait at all): the bound, exactly as without a wait clock.
    ctl[CTL.hostBeat]!++;
    t.now += 12;
    expect(w.check(t.now)).toBe(false);
    const t0 = t.now;
    expect(run(w, t, 1100).map((x) => x - t0)).toEqual([1008]);
  });

  it("reads this process's main thread's run-queue wait on Linux (schedstat), allocation-free", () => {
    const clock = mainThreadWaitClock();
    try {
      const a = clock.waited();
      if (process.platform !== "linux") return expect(Number.isNaN(a)).toBe(true);
      expect(Number.isFinite(a)).toBe(true);
      expect(a).toBeGreaterThanOrEqual(0);
      for (let i = 0; i < 1000; i++) clock.waited();
      expect(clock.waited()).toBeGreaterThanOrEqual(a);
    } finally {
      clock.close();
    }
  });

  it("beats six times per bound, at most every 200 ms (a beat's silence stays under a quarter of the bound); the reason names the silence and the bound", () => {
    expect(hostBeatEveryMs(1000)).toBe(166);
    expect(hostBeatEveryMs(60_000)).toBe(200);
    expect(hostBeatEveryMs(200)).toBe(33);
    expect(hostBeatEveryMs(100)).toBe(16);
    for (const bound of [100, 200, 1000, 5000, 60_000]) expect(hostBeatEveryMs(bound)).toBeLessThan(bound / 4);
    expect(hostUnresponsiveReason(1012.4, 0, 1000)).toBe("host unresponsive: the main thread has not beaten for 1012 ms (bound 1000 ms); reset once it answers again");
  });
});
