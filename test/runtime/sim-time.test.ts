/**
 * The simulated time meter (src/runtime/sim-time.ts) and the lockstep clock's step
 * (src/runtime/lockstep.ts): the real-time factor is simulated over real seconds in the last
 * window, 0 once time stood still for a window, restarted by a reset; a step resolves once its
 * cycles have run, not before, also when asked while other granted cycles are still running.
 */
import { describe, expect, it } from "vitest";
import { LockstepClock } from "../../src/runtime/lockstep.js";
import { SimTimeMeter } from "../../src/runtime/sim-time.js";

describe("SimTimeMeter", () => {
  it("reports simulated over real time over the last window", () => {
    let now = 0;
    const m = new SimTimeMeter({ windowMs: 1000, realNowMs: () => now });
    expect(m.realTimeFactor()).toBe(0);
    // 2 s of real time at 12 ms cycles, simulated time running 3× as fast.
    for (let t = 0; t <= 2000; t += 12) {
      now = t;
      m.sample((3 * t) / 1000);
    }
    expect(m.realTimeFactor()).toBeCloseTo(3, 6);
    expect(m.timeS).toBeCloseTo(5.976, 9);
    expect(m.health({ realTime: true }, "physics")).toEqual({ clock: "real-time", model: "physics", timeS: m.timeS, realTimeFactor: m.realTimeFactor() });
    expect(m.health({ realTime: false }, "kinematic").clock).toBe("lockstep");
  });

  it("falls as time stands still, to 0 after a window without a cycle", () => {
    let now = 0;
    const m = new SimTimeMeter({ windowMs: 1000, realNowMs: () => now });
    for (let t = 0; t <= 1000; t += 10) {
      now = t;
      m.sample(t / 1000);
    }
    expect(m.realTimeFactor()).toBeCloseTo(1, 6);
    now = 1500; // no cycle for 500 ms: half the window advanced nothing
    expect(m.realTimeFactor()).toBeCloseTo(0.5 / 1, 1);
    now = 2100;
    expect(m.realTimeFactor()).toBe(0);
  });

  it("restarts its window when the simulator is reset (time back to 0)", () => {
    let now = 0;
    const m = new SimTimeMeter({ windowMs: 1000, realNowMs: () => now });
    for (let t = 0; t <= 1000; t += 10) {
      now = t;
      m.sample(t / 1000);
    }
    now = 1010;
    m.sample(0);
    expect(m.timeS).toBe(0);
    now = 1020;
    m.sample(0.01);
    expect(m.realTimeFactor()).toBeCloseTo(1, 6);
  });

  it("holds more samples than its ring: the oldest in the ring bounds the window", () => {
    let now = 0;
    const m = new SimTimeMeter({ windowMs: 1000, realNowMs: () => now });
    for (let i = 0; i < 5000; i++) {
      now = i * 0.1; // 10,000 cycles a second of real time, 12 ms each: 120× real time
      m.sample(i * 0.012);
    }
    expect(m.realTimeFactor()).toBeCloseTo(120, 0);
  });
});

describe("LockstepClock.step", () => {
  it("resolves once the cycles have run, at the time they reached", async () => {
    const c = new LockstepClock(5);
    let cycles = 0;
    let stop = false;
    const loop = (async () => {
      for (let k = 1; !stop; k++) {
        await c.sleepUntil(k * 5);
        cycles++;
      }
    })();
    expect(await c.step(3)).toBe(15);
    expect(cycles).toBe(3);
    // Two steps asked together: the second counts the first's cycles before its own.
    const [a, b] = await Promise.all([c.step(2), c.step(4)]);
    expect([a, b]).toEqual([25, 45]);
    expect(cycles).toBe(9);
    // A step asked while grants are being run (LoLA answers) waits for those too.
    c.grant();
    c.grant();
    expect(await c.step(1)).toBe(60);
    expect(cycles).toBe(12);
    stop = true;
    c.grant();
    await loop;
  });
});
