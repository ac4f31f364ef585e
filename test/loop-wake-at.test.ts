/**
 * CycleLoop's callback path (Clock.wakeAt): on a MonotonicClock "block" — the NAO's and P7's
 * worker cores — each cycle runs in the clock's own callback and arms the next, with no promise
 * per cycle. Counts and order only, never timing values: a stop that did not end the pending
 * wake-up would wait out a 60 s period and time the test out.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it, onTestFinished } from "vitest";
import { MonotonicClock } from "../src/runtime/clock.js";
import { CycleLoop } from "../src/runtime/loop.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function countingClock(wake: "block" | "spin"): { clock: MonotonicClock; sleeps: () => number } {
  const clock = new MonotonicClock({ wake, spinMs: 0.2 });
  let n = 0;
  const sleepUntil = clock.sleepUntil.bind(clock);
  clock.sleepUntil = (d: number) => {
    n++;
    return sleepUntil(d);
  };
  return { clock, sleeps: () => n };
}

describe("CycleLoop on a clock's wakeAt", () => {
  it('"block" offers wakeAt; the other modes do not (their loops keep the promise path)', () => {
    expect(typeof new MonotonicClock({ wake: "block" }).wakeAt).toBe("function");
    for (const wake of ["spin", "wait"] as const) expect(new MonotonicClock({ wake }).wakeAt).toBeUndefined();
  });

  it("wakeNow() never cuts short a sleepUntil promise that holds the clock's wake-up slot", async () => {
    const clock = new MonotonicClock({ wake: "block", spinMs: 0 });
    const deadline = performance.now() + 30;
    const slept = clock.sleepUntil(deadline);
    clock.wakeNow();
    await slept;
    expect(performance.now()).toBeGreaterThanOrEqual(deadline);
  });

  it("runs every cycle from wakeAt, never through sleepUntil, each at or after its deadline", async () => {
    const { clock, sleeps } = countingClock("block");
    const starts: number[] = [];
    const loop = new CycleLoop({ periodMs: 4, cycle: (now) => starts.push(now) }, clock);
    const before = performance.now(); // the first deadline is no earlier than this
    loop.start();
    await sleep(200);
    await loop.stop();
    expect(sleeps()).toBe(0);
    expect(starts.length).toBeGreaterThan(5);
    if (loop.timing.missedCycles === 0) {
      // no stall skipped a deadline: cycle i's deadline is the first one plus i periods
      for (let i = 0; i < starts.length; i++) expect(starts[i]!).toBeGreaterThanOrEqual(before + i * 4);
    }
    expect(loop.timing.cycles).toBe(starts.length);
  });

  it("the promise path stays for the other modes", async () => {
    const { clock, sleeps } = countingClock("spin");
    let n = 0;
    const loop = new CycleLoop({ periodMs: 4, cycle: () => n++ }, clock);
    loop.start();
    await sleep(60);
    await loop.stop();
    expect(n).toBeGreaterThan(2);
    expect(sleeps()).toBeGreaterThanOrEqual(n - 1);
  });

  it("stop() ends the pending wake-up at once (a 60 s period), no cycle runs after it, and the loop starts again", async () => {
    // As in a worker core: another thread bumps the wake word (the host does after each message),
    // which ends the futex wait so this thread serves its event loop; stop() is called there.
    const words = new Int32Array(new SharedArrayBuffer(4));
    const bumper = new Worker("const { words } = require('node:worker_threads').workerData; setInterval(() => { Atomics.add(words, 0, 1); Atomics.notify(words, 0, 1); }, 10);", {
      eval: true,
      workerData: { words },
    });
    onTestFinished(async () => {
      await bumper.terminate();
    });
    const clock = new MonotonicClock({ wake: "block", interrupt: { words, index: 0 } });
    let n = 0;
    const loop = new CycleLoop({ periodMs: 60_000, cycle: () => n++ }, clock);
    loop.start();
    while (n < 1) await sleep(5); // the first cycle runs at once; the next is due in 60 s
    await loop.stop();
    expect(loop.running).toBe(false);
    await sleep(20);
    expect(n).toBe(1);
    loop.start();
    while (n < 2) await sleep(5);
    await loop.stop();
    await sleep(20);
    expect(n).toBe(2);
  });

  it("stop() from a cycle listener ends the chain after that cycle", async () => {
    const clock = new MonotonicClock({ wake: "block" });
    let n = 0;
    const loop = new CycleLoop({ periodMs: 2, cycle: () => n++ }, clock);
    let stopped: Promise<void> | null = null;
    loop.onCycle((seq) => {
      if (seq === 5) stopped = loop.stop();
    });
    loop.start();
    while (!stopped) await sleep(2);
    await stopped;
    await sleep(20);
    expect(n).toBe(5);
  });

  it("start() right after an unawaited stop() goes on with the one pending wake-up, not a second chain", async () => {
    const { clock, sleeps } = countingClock("block");
    let n = 0;
    const loop = new CycleLoop({ periodMs: 5, cycle: () => n++ }, clock);
    loop.start();
    await sleep(30);
    const first = loop.stop();
    loop.start();
    const before = n;
    await expect.poll(() => n, { timeout: 10_000 }).toBeGreaterThan(before); // it goes on
    await loop.stop();
    await first; // the first stop resolves with the chain it ended
    // a second chain would have found the clock's one wake-up slot taken and slept through sleepUntil
    expect(sleeps()).toBe(0);
  });
});
