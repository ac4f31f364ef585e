/**
 * The NAO, P7 and TNY-360 state channels (src/shm/nao-state.ts, p7-state.ts, tny360-state.ts over their layout tables
 * in src/bodies/<body>/layout.ts): a state published by the core reads back equal, field for field,
 * into a fresh state on the host side — so a field the table forgets fails here — and a reader
 * never takes a half-written state.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LINK_STATUS, type LinkStatus } from "../../src/bodies/link.js";
import { NaoState, snapshotNaoState } from "../../src/bodies/nao/state.js";
import { P7State } from "../../src/bodies/p7/state.js";
import { SAFETY_CODES } from "../../src/bodies/safety.js";
import { SMOOTH_PHASES } from "../../src/bodies/tny360/layout.js";
import { Tny360State } from "../../src/bodies/tny360/state.js";
import { CTL, STATE_START } from "../../src/rt/core-shm.js";
import { NAO_STATE_BYTES, NaoStateChannel } from "../../src/shm/nao-state.js";
import { P7_STATE_BYTES, p7StateChannel } from "../../src/shm/p7-state.js";
import { TNY360_STATE_BYTES, tny360StateChannel } from "../../src/shm/tny360-state.js";
import { p7StateFields, p7StateOf } from "../support/p7-state-arb.js";
import { leastHeapAllocated } from "../support/allocated.js";

const f64 = fc.double({ noNaN: false });
const f32 = fc.float({ noNaN: false });
const u8 = fc.integer({ min: 0, max: 255 });
const bit = fc.integer({ min: 0, max: 1 });
const link = fc.constantFrom(...LINK_STATUS);

function buffers(stateBytes: number) {
  const buffer = new SharedArrayBuffer(STATE_START + stateBytes);
  return { buffer, ctl: new Int32Array(buffer, 0, CTL.words) };
}

/** Object.is per element, so NaN equals NaN and -0 is not 0 (the copy must keep both). */
function same(a: unknown, b: unknown): boolean {
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    const x = a as unknown as ArrayLike<number>;
    const y = b as unknown as ArrayLike<number>;
    return x.length === y.length && Array.from(x).every((v, i) => Object.is(v, y[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return Object.is(a, b);
}

describe("NAO state channel", () => {
  const arrays = ["accelerometer", "gyroscope", "angles", "battery", "fsr", "sonar", "touch", "position", "current", "temperature", "stiffness", "footWeightKg", "centerOfPressureM"] as const;
  const values = (n: number) => fc.array(f32, { minLength: n, maxLength: n });
  it("every field of NaoState, the link, the safety code and its text cross unchanged; the text only when it changed", () => {
    const fresh = new NaoState();
    fc.assert(
      fc.property(
        fc.record({
          seq: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          scalars: fc.array(f64, { minLength: fresh.scalars.length, maxLength: fresh.scalars.length }),
          arrays: fc.tuple(...arrays.map((k) => values(fresh[k].length))),
          status: fc.array(u8, { minLength: 25, maxLength: 25 }),
          initialized: fc.array(bit, { minLength: 25, maxLength: 25 }),
          counters: fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { minLength: 3, maxLength: 3 }),
          boardStatus: fc.integer({ min: -1, max: 0xffff }),
          valid: fc.boolean(),
          link,
          safety: fc.constantFrom(...SAFETY_CODES),
          reasons: fc.array(fc.option(fc.string({ unit: "grapheme", maxLength: 60 })), { minLength: 1, maxLength: 3 }),
        }),
        (r) => {
          const s = new NaoState();
          s.seq = r.seq;
          s.scalars.set(r.scalars);
          arrays.forEach((k, i) => {
            s[k].set(r.arrays[i]!);
          });
          s.status.set(r.status);
          s.jointInitialized.set(r.initialized);
          [s.unacknowledgedFrames, s.readTimeouts, s.badFrames] = r.counters;
          s.boardStatus = r.boardStatus;
          s.valid = r.valid;
          s.link = r.link;
          s.safety = r.safety;
          const { buffer, ctl } = buffers(NAO_STATE_BYTES);
          const core = new NaoStateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
          const host = new NaoStateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
          const into = new NaoState();
          for (const reason of r.reasons) {
            s.safetyReason = reason;
            core.publish(s);
            expect(host.readInto(into)).toBe(true);
            expect(same(snapshotNaoState(into), snapshotNaoState(s))).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("P7 state channel", () => {
  it("every field of P7State and the link cross unchanged", () => {
    fc.assert(
      fc.property(p7StateFields, (r) => {
        const src = p7StateOf(r);
        const { buffer, ctl } = buffers(P7_STATE_BYTES);
        p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).publish(src);
        const into = { state: new P7State(), link: "starting" as LinkStatus };
        expect(p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).readInto(into)).toBe(true);
        expect(same(into, src)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("a reader never takes a state the core is writing (odd sequence): it reports no read", () => {
    const { buffer, ctl } = buffers(P7_STATE_BYTES);
    const core = p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
    core.lock.begin();
    const into = { state: new P7State(), link: "starting" as LinkStatus };
    expect(p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).readInto(into)).toBe(false);
    core.lock.end();
    expect(p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).readInto(into)).toBe(true);
  });
});

describe("TNY-360 state channel", () => {
  const arr = <T>(arb: fc.Arbitrary<T>, n: number) => fc.array(arb, { minLength: n, maxLength: n });
  it("every field of Tny360State crosses unchanged", () => {
    fc.assert(
      fc.property(
        fc.record({
          scalars: arr(f64, 19),
          joints: arr(arr(f32, 14), 5),
          enabled: arr(u8, 14),
          imu: arr(arr(f32, 3), 4),
          grounded: arr(u8, 4),
          body: arr(arr(f32, 3), 3),
          flags: fc.tuple(fc.boolean(), link, fc.constantFrom(...SMOOTH_PHASES), bit, bit),
        }),
        (r) => {
          const s = new Tny360State("sim");
          const c = r.scalars;
          [s.seq, s.timestampMs, s.epochMs, s.body.heightM] = c;
          [s.odometry.xM, s.odometry.yM, s.odometry.yawRad, s.odometry.vxMS, s.odometry.vyMS, s.odometry.yawRateRadS] = c.slice(4, 10);
          [s.power.voltageV, s.power.currentA, s.power.powerW, s.system.chipTemperatureC] = c.slice(10, 14);
          [s.errors.count, s.errors.lastEventId, s.errors.lastErrorId, s.body.gait, s.body.enabledMask] = c.slice(14, 19);
          const j = s.joints;
          [j.positionRad, j.targetRad, j.velocityRadS, j.effortNm, j.temperatureC].forEach((a, i) => {
            a.set(r.joints[i]!);
          });
          j.enabled.set(r.enabled);
          [s.imu.orientationRad, s.imu.angularVelocityRadS, s.imu.linearAccelerationMS2, s.imu.down].forEach((a, i) => {
            a.set(r.imu[i]!);
          });
          s.paws.grounded.set(r.grounded);
          [s.body.targetVelocity, s.body.posturePositionM, s.body.postureRotationRad].forEach((a, i) => {
            a.set(r.body[i]!);
          });
          s.valid = r.flags[0];
          s.link = r.flags[1];
          s.body.smooth = r.flags[2];
          s.system.controlLoopEnabled = r.flags[3] === 1;
          s.system.decisionLoopEnabled = r.flags[4] === 1;
          const { buffer, ctl } = buffers(TNY360_STATE_BYTES);
          tny360StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).publish({ state: s });
          const into = { state: new Tny360State("sim") };
          expect(tny360StateChannel(buffer, STATE_START, ctl, CTL.stateSeq).readInto(into)).toBe(true);
          expect(same(into.state, s)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("state channels allocate nothing in steady state", () => {
  /**
   * 20,000 publishes and reads: an allocation per call would be ≥ 20,000 × 16 B = 320 kB in every
   * round. The least of five rounds (leastHeapAllocated).
   */
  function grows(publishAndRead: () => void): number {
    for (let i = 0; i < 20_000; i++) publishAndRead(); // warm up (JIT)
    return leastHeapAllocated(() => {
      for (let i = 0; i < 20_000; i++) publishAndRead();
    });
  }
  it("P7: publish (the core, every cycle) and readInto (the host)", () => {
    const { buffer, ctl } = buffers(P7_STATE_BYTES);
    const core = p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
    const host = p7StateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
    const src = { state: new P7State(), link: "ok" as LinkStatus };
    const into = { state: new P7State(), link: "starting" as LinkStatus };
    expect(
      grows(() => {
        src.state.seq++;
        core.publish(src);
        host.readInto(into);
      }),
    ).toBeLessThan(200_000);
    expect(into.state.seq).toBe(src.state.seq);
  });
  it("TNY-360: publish and readInto", () => {
    const { buffer, ctl } = buffers(TNY360_STATE_BYTES);
    const core = tny360StateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
    const host = tny360StateChannel(buffer, STATE_START, ctl, CTL.stateSeq);
    const src = { state: new Tny360State("sim") };
    const into = { state: new Tny360State("sim") };
    expect(
      grows(() => {
        src.state.seq++;
        core.publish(src);
        host.readInto(into);
      }),
    ).toBeLessThan(200_000);
    expect(into.state.seq).toBe(src.state.seq);
  });
});
