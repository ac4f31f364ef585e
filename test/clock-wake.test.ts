/**
 * The blocking wake-up's parts (src/runtime/clock.ts): the learned lead (a streaming quantile,
 * fed deterministic sequences), the allocation-light final spin, and the interrupt that ends a
 * futex wait early so a message is served at once. Orders and counts only: timing is
 * `npm run bench -- wake`'s business.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { MonotonicClock, spinUntil, WakeLead, wakeInterrupt } from "../src/runtime/clock.js";
import { leastHeapAllocated } from "./support/allocated.js";

describe("WakeLead: the learned lead of a blocking wake-up", () => {
  it("settles on a constant overshoot, within one step", () => {
    const lead = new WakeLead();
    for (let i = 0; i < 3000; i++) lead.record(0.1);
    expect(lead.ms).toBeGreaterThanOrEqual(0.1 - lead.stepMs);
    expect(lead.ms).toBeLessThanOrEqual(0.1 + lead.stepMs);
  });
  it("settles on the 90th percentile of the overshoots it is fed", () => {
    const lead = new WakeLead(0);
    // overshoots spread evenly over [0, 0.2) ms in a scrambled order: the 90th percentile is 0.18
    for (let i = 0; i < 20_000; i++) lead.record(((i * 37) % 100) * 0.002);
    expect(lead.ms).toBeGreaterThan(0.165);
    expect(lead.ms).toBeLessThan(0.195);
    const q = new WakeLead(0, 1, 0.5);
    for (let i = 0; i < 20_000; i++) q.record(((i * 37) % 100) * 0.002);
    expect(q.ms).toBeGreaterThan(0.09); // the median, asked for
    expect(q.ms).toBeLessThan(0.11);
  });
  it("follows a machine that gets busier within tens of wake-ups", () => {
    const lead = new WakeLead(0.02);
    for (let i = 0; i < 40; i++) lead.record(0.2);
    expect(lead.ms).toBeGreaterThan(0.15);
  });
  it("stays within 0..maxMs and ignores what is not a number", () => {
    const lead = new WakeLead(0.2, 0.5);
    for (let i = 0; i < 1000; i++) lead.record(50);
    expect(lead.ms).toBe(0.5);
    lead.record(Number.NaN);
    lead.record(Number.POSITIVE_INFINITY);
    expect(lead.ms).toBe(0.5);
    for (let i = 0; i < 10_000; i++) lead.record(-1);
    expect(lead.ms).toBe(0);
  });
  it("refuses a start outside 0..maxMs, a quantile outside (0, 1), a step that is not positive", () => {
    expect(() => new WakeLead(2, 1)).toThrow(/initialMs must be between 0 and maxMs/);
    expect(() => new WakeLead(0.1, 1, 1)).toThrow(/quantile/);
    expect(() => new WakeLead(0.1, 1, 0.9, 0)).toThrow(/stepMs/);
  });
});

describe("spinUntil: the final spin", () => {
  it("never returns before its deadline", () => {
    for (const d of [0, 0.01, 0.05, 0.2, 1, -1]) {
      const deadline = performance.now() + d;
      spinUntil(deadline);
      expect(performance.now()).toBeGreaterThanOrEqual(deadline);
    }
  });
  it("reads the clock a few times per spin, not thousands (each read is a boxed double)", () => {
    // 500 spins of 0.1 ms: reading the clock in a loop allocates ~16 B per read, ~25 kB per
    // spin, ≥ 10 MB per round; a few reads per spin stay far below 1 MB.
    // The least of five rounds (leastHeapAllocated).
    for (let i = 0; i < 200; i++) spinUntil(performance.now() + 0.05); // warm up, calibrate
    const least = leastHeapAllocated(() => {
      for (let i = 0; i < 500; i++) spinUntil(performance.now() + 0.1);
    });
    expect(least).toBeLessThan(1_000_000);
  });
});

describe("MonotonicClock options", () => {
  it('takes spinMs "auto" (a learned lead) or a fixed 0..2 ms', () => {
    expect(new MonotonicClock({ wake: "block" }).lead).toBeInstanceOf(WakeLead);
    expect(new MonotonicClock({ wake: "block", spinMs: "auto" }).lead).toBeInstanceOf(WakeLead);
    expect(new MonotonicClock({ wake: "block", spinMs: 0.2 }).lead).toBe(0.2);
    expect(() => new MonotonicClock({ wake: "block", spinMs: 3 })).toThrow(/spinMs must be "auto" or between 0 and 2, got 3/);
  });
  it("refuses an interrupt word that is not an Int32Array over shared memory", () => {
    expect(() => new MonotonicClock({ wake: "block", interrupt: { words: new Int32Array(4), index: 0 } })).toThrow(/interrupt must name an Int32Array word over a SharedArrayBuffer/);
    const words = new Int32Array(new SharedArrayBuffer(8));
    expect(() => new MonotonicClock({ wake: "block", interrupt: { words, index: 2 } })).toThrow(/interrupt/);
    expect(new MonotonicClock({ wake: "block", interrupt: { words, index: 1 } }).wakeCounts).toEqual({ interrupted: 0, timedOut: 0, gaps: 0, yielded: 0 });
  });
  it("wait: yieldWhen is asked once per gap; true serves the event loop to the deadline instead of blocking it", async () => {
    for (const answer of [true, false]) {
      const clock = new MonotonicClock({ wake: "wait", spinMs: 0.05 });
      let asked = 0;
      clock.yieldWhen = () => {
        asked++;
        return answer;
      };
      // turns of the event loop while the sleeps are pending: many when it is served to the end, few when it blocks
      let turns = 0;
      let sleeping = true;
      const turn = (): void => {
        turns++;
        if (sleeping) setImmediate(turn);
      };
      setImmediate(turn);
      for (let i = 0; i < 10; i++) {
        const deadline = clock.nowMs() + 4;
        await clock.sleepUntil(deadline);
        expect(clock.nowMs()).toBeGreaterThanOrEqual(deadline);
      }
      sleeping = false;
      // once per gap whose timer fired in time (a timer more than ~1.5 ms late finds the gap over: not asked)
      expect(asked).toBeGreaterThan(0);
      expect(asked).toBeLessThanOrEqual(10);
      // true: no futex wait at all; false: the gaps asked blocked (those whose timer left more than the lead)
      if (answer) {
        expect(clock.wakeCounts.timedOut).toBe(0);
        expect(turns).toBeGreaterThan(asked * 10);
      } else expect(clock.wakeCounts.timedOut).toBeGreaterThan(0);
    }
  });
  it("block: a lead-free wait still resolves at or after each deadline", async () => {
    const clock = new MonotonicClock({ wake: "block", spinMs: 0, interrupt: { words: new Int32Array(new SharedArrayBuffer(4)), index: 0 } });
    for (const d of [0.5, 3, 13, -2]) {
      const deadline = clock.nowMs() + d;
      await clock.sleepUntil(deadline);
      expect(clock.nowMs()).toBeGreaterThanOrEqual(deadline);
    }
    expect(clock.wakeCounts.interrupted).toBe(0); // nobody touched the word
  });
  it("block: sleepers at once (the loop's and another's) each resolve at or after their own deadline", async () => {
    const clock = new MonotonicClock({ wake: "block" });
    const t0 = clock.nowMs();
    const woke: Array<[number, number]> = [];
    await Promise.all([8, 3, 5].map((d) => clock.sleepUntil(t0 + d).then(() => woke.push([d, clock.nowMs()]))));
    for (const [d, at] of woke) expect(at).toBeGreaterThanOrEqual(t0 + d);
    // and the one-sleeper path is free again afterwards
    const d = clock.nowMs() + 2;
    await clock.sleepUntil(d);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(d);
  });
});

/**
 * A worker thread sleeps 2.5 s in "block" mode on an interrupt word; the main thread posts it a
 * message, with or without waking it. What the worker saw when it served the message: whether
 * its sleep was still pending and how many waits the interrupt had ended by then.
 */
async function serveWhileSleeping(wake: boolean, turnAfterWait = true): Promise<{ pending: boolean; interrupted: number; after: { interrupted: number; timedOut: number } }> {
  const words = new Int32Array(new SharedArrayBuffer(4));
  const clockUrl = new URL("../src/runtime/clock.ts", import.meta.url).href;
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then(async (tsx) => {
      tsx.register();
      const { MonotonicClock } = await import(${JSON.stringify(clockUrl)});
      const clock = new MonotonicClock({ wake: "block", interrupt: { words: workerData.words, index: 0 }, turnAfterWait: workerData.turnAfterWait });
      let pending = true;
      parentPort.on("message", () => parentPort.postMessage({ type: "served", pending, interrupted: clock.wakeCounts.interrupted }));
      const slept = clock.sleepUntil(clock.nowMs() + 2500);
      parentPort.postMessage({ type: "sleeping" });
      await slept;
      pending = false;
      await new Promise((r) => setImmediate(r)); // a turn: a message not served yet is served now
      parentPort.postMessage({ type: "done", counts: clock.wakeCounts });
      parentPort.close();
    });
  `;
  const w = new Worker(source, { eval: true, workerData: { words, turnAfterWait } });
  try {
    let served: { pending: boolean; interrupted: number } | null = null;
    const done = await new Promise<{ interrupted: number; timedOut: number }>((resolve, reject) => {
      w.on("message", (m: { type: string; pending: boolean; interrupted: number; counts: { interrupted: number; timedOut: number } }) => {
        if (m.type === "sleeping") {
          // a moment later, so the worker is asleep in its futex (not still in the turn before it)
          setTimeout(() => {
            w.postMessage("ping");
            if (wake) wakeInterrupt(words, 0);
          }, 300);
        } else if (m.type === "served") served = m;
        else if (m.type === "done") resolve(m.counts);
      });
      w.once("error", reject);
    });
    expect(served).not.toBeNull();
    return { ...served!, after: done };
  } finally {
    await w.terminate();
  }
}

// Concurrently: each test is a worker asleep for 2.5 s with its own interrupt word (one after the
// other they waited 4 x 2.7 s, the file's whole time, on nothing).
describe.concurrent("MonotonicClock block: the interrupt word", () => {
  it("a message posted and woken through the word is served while the sleep is still pending", async () => {
    const r = await serveWhileSleeping(true);
    expect(r.pending).toBe(true);
    expect(r.interrupted).toBeGreaterThanOrEqual(1); // the futex wait was ended for it
    expect(r.after.timedOut).toBeGreaterThanOrEqual(1); // then it slept again until the deadline
  }, 20_000);
  it("without the word's wake-up the same message waits for the turn before the deadline", async () => {
    const r = await serveWhileSleeping(false);
    expect(r.pending).toBe(true); // served in the turn between the wait and the deadline
    expect(r.interrupted).toBe(0);
    expect(r.after.interrupted).toBe(0);
  }, 20_000);
  it("turnAfterWait false: no turn between the wait and the deadline, the message is served right after it", async () => {
    const r = await serveWhileSleeping(false, false);
    expect(r.pending).toBe(false); // the sleep had resolved: one turn per wait, the one before it
    expect(r.interrupted).toBe(0);
    expect(r.after.timedOut).toBe(1);
  }, 20_000);
  it("turnAfterWait false: the word's wake-up still serves a message at once", async () => {
    const r = await serveWhileSleeping(true, false);
    expect(r.pending).toBe(true);
    expect(r.interrupted).toBeGreaterThanOrEqual(1);
  }, 20_000);
});
