/**
 * The P7's and the TNY-360's recording taps allocate nothing per cycle (what a worker core runs
 * after every cycle while recording: src/rt/p7-worker.ts, tny360-worker.ts). A file of its own:
 * the JIT's type feedback is this file's only (another test's calls with plain arrays or another
 * clock make the same code polymorphic, and a polymorphic typed-array load boxes its number).
 */
import { describe, expect, it } from "vitest";
import { P7State } from "../../src/bodies/p7/state.js";
import { Tny360State } from "../../src/bodies/tny360/state.js";
import { RecordTap } from "../../src/record/tap.js";
import { MonotonicClock } from "../../src/runtime/clock.js";
import { P7_TAKEN_KIND } from "../../src/runtime/p7-robot.js";
import type { P7Mirror } from "../../src/shm/p7-state.js";
import { ByteRing } from "../../src/shm/ring.js";
import { leastHeapAllocated } from "../support/allocated.js";

describe("the recording's perform side allocates nothing in steady state", () => {
  /** Bytes allocated per call of `f`: the least of five rounds of 20,000 (leastHeapAllocated). */
  function perCall(f: (i: number) => void): number {
    for (let i = 0; i < 20_000; i++) f(i); // warm up (JIT)
    return (
      leastHeapAllocated(() => {
        for (let i = 0; i < 20_000; i++) f(i);
      }) / 20_000
    );
  }
  it("a worker's cycle: the state record (timed by the state's own stamp, no clock read) and the late-cycle check; a P7 command", () => {
    const ring = ByteRing.create(1 << 20);
    const tap = new RecordTap(ring, new MonotonicClock());
    const noop = () => {};
    const p7: P7Mirror = { state: new P7State(), link: "ok" };
    const tny = { state: new Tny360State("sim") };
    // stamps set once: a double stored into a field per iteration would be the test's allocation, not the tap's
    p7.state.epochMs = 1.8e12 + 0.25;
    tny.state.epochMs = 1.8e12 + 0.5;
    const targets = new Float64Array(7);
    // An allocation per call would be at least 16 bytes.
    const p7Cycle = perCall((i) => {
      p7.state.seq++;
      tap.p7State(i, p7);
      tap.lateCycles(i, 0);
      if (ring.usedBytes > ring.capacity / 2) ring.drain(noop);
    });
    const tnyCycle = perCall((i) => {
      tny.state.seq++;
      tap.tny360State(i, tny);
      tap.lateCycles(i, 0);
      if (ring.usedBytes > ring.capacity / 2) ring.drain(noop);
    });
    const command = perCall((i) => {
      tap.p7Command(i, P7_TAKEN_KIND.servoJoints, targets, targets, -1);
      if (ring.usedBytes > ring.capacity / 2) ring.drain(noop);
    });
    expect({ p7Cycle: p7Cycle < 8, tnyCycle: tnyCycle < 8, command: command < 8 }).toEqual({ p7Cycle: true, tnyCycle: true, command: true });
    expect(ring.dropped).toBe(0);
  });
});
