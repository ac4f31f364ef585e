/**
 * The P7's and the TNY-360's recording records (src/shm/state-record.ts, src/record/body-state-record.ts):
 * a state written by the tap reads back field for field from the ring (through the body's state
 * layout), with its cycle; the P7's command record has a fixed byte layout (golden vector); a full
 * ring refuses and counts, never throws. (That the write side allocates nothing: tap-alloc.test.ts.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LinkStatus } from "../../src/bodies/link.js";
import { P7State } from "../../src/bodies/p7/state.js";
import { Tny360State } from "../../src/bodies/tny360/state.js";
import { P7_COMMAND_RECORD, p7StateDecoder, readP7Command, tny360StateDecoder } from "../../src/record/body-state-record.js";
import { RING_CHANNEL } from "../../src/record/channels.js";
import { RecordTap } from "../../src/record/tap.js";
import { SimClock } from "../../src/runtime/clock.js";
import { P7_TAKEN_KIND } from "../../src/runtime/p7-robot.js";
import { P7_BINDING, P7_STATE_BYTES, type P7Mirror } from "../../src/shm/p7-state.js";
import { ByteRing } from "../../src/shm/ring.js";
import { STATE_RECORD_HEADER_BYTES, StateRecordReader } from "../../src/shm/state-record.js";
import { p7StateFields, p7StateOf } from "../support/p7-state-arb.js";

function drainOne(ring: ByteRing): { channel: number; timeMs: number; bytes: Uint8Array } {
  const got: Array<{ channel: number; timeMs: number; bytes: Uint8Array }> = [];
  ring.drain((channel, _f, timeMs, offset, length) => got.push({ channel, timeMs, bytes: ring.bytes.slice(offset, offset + length) }));
  expect(got).toHaveLength(1);
  return got[0]!;
}

describe("P7 state record", () => {
  it("every field of P7State, the link and the cycle come back from the ring unchanged (NaN, -0 included)", () => {
    const clock = new SimClock(1_796_000_000_000);
    const tap = new RecordTap(ByteRing.create(1 << 16), clock);
    const reader = new StateRecordReader(P7_BINDING, P7_STATE_BYTES);
    fc.assert(
      fc.property(fc.record({ cycle: fc.integer({ min: 0, max: 2 ** 40 }), fields: p7StateFields }), ({ cycle, fields }) => {
        const src: P7Mirror = p7StateOf(fields);
        const s = src.state;
        expect(tap.p7State(cycle, src)).toBe(true);
        const rec = drainOne(tap.ring);
        expect(rec.channel).toBe(RING_CHANNEL.p7State);
        expect(rec.bytes.length).toBe(STATE_RECORD_HEADER_BYTES + P7_STATE_BYTES);
        const into: P7Mirror = { state: new P7State(), link: "starting" as LinkStatus };
        expect(reader.read(rec.bytes, 0, rec.bytes.length, into)).toBe(cycle);
        expect(into.link).toBe(src.link);
        for (const k of ["seq", "timestampMs", "epochMs", "jointValid", "motorValid", "imuValid"] as const) expect(Object.is(into.state[k], s[k]), k).toBe(true);
        for (const k of ["angles", "velocities", "efforts", "temperatures", "errorIds", "angularVelocity", "linearAcceleration"] as const) {
          expect(
            Array.from(into.state[k]).every((v, i) => Object.is(v, s[k][i])),
            k,
          ).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("decodes to the robot API's state message for that cycle; a record of another size is skipped", () => {
    const tap = new RecordTap(ByteRing.create(1 << 16), new SimClock(1_796_000_000_000));
    const src: P7Mirror = { state: new P7State(), link: "ok" };
    Object.assign(src.state, { seq: 41, timestampMs: 164, epochMs: 1_796_000_000_164, jointValid: true, motorValid: true, imuValid: true });
    src.state.angles.set([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    src.state.errorIds.set([0, 0, 3, 0, 0, 0, 0]);
    src.state.linearAcceleration.set([0, 0, 9.81]);
    tap.p7State(57, src);
    const rec = drainOne(tap.ring);
    const decode = p7StateDecoder();
    const d = decode(rec.bytes, 0, rec.bytes.length)!;
    expect(d.cycle).toBe(57);
    expect(d.message).toMatchObject({ type: "state", body: "p7", seq: 41, timestamp_ms: 164, epoch_ms: 1_796_000_000_164, link: "ok", cycle: 57, valid: true });
    expect(d.message.joint_positions).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    expect(d.message.error_ids).toEqual([0, 0, 3, 0, 0, 0, 0]);
    expect(d.message.imu).toEqual({ angular_velocity: [0, 0, 0], linear_acceleration: [0, 0, 9.81] });
    expect(decode(rec.bytes, 0, rec.bytes.length - 8)).toBeNull();
  });

  it("a full ring refuses the record and counts it; the next one fits once the consumer drained", () => {
    const ring = ByteRing.create(2048);
    const tap = new RecordTap(ring, new SimClock(0));
    const src: P7Mirror = { state: new P7State(), link: "ok" };
    let written = 0;
    for (let i = 0; i < 20; i++) if (tap.p7State(i, src)) written++;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(20);
    expect(ring.dropped).toBe(20 - written);
    ring.drain(() => {});
    expect(tap.p7State(99, src)).toBe(true);
  });
});

describe("TNY-360 state record", () => {
  it("decodes to the API's state message of that cycle, with the source and the targets the body drives to", () => {
    const tap = new RecordTap(ByteRing.create(1 << 16), new SimClock(1_796_000_000_000));
    const s = new Tny360State("sim");
    s.seq = 9;
    s.valid = true;
    s.link = "ok";
    s.joints.targetRad.set([0.5], 3);
    s.body.targetVelocity.set([0.05, 0, 0.1]);
    s.body.gait = 1;
    tap.tny360State(12, { state: s });
    const rec = drainOne(tap.ring);
    expect(rec.channel).toBe(RING_CHANNEL.tny360State);
    const d = tny360StateDecoder("sim")(rec.bytes, 0, rec.bytes.length)!;
    expect(d.message).toMatchObject({ type: "state", body: "tny360", seq: 9, cycle: 12, valid: true, link: "ok", source: "sim" });
    expect((d.message.joint_targets as number[])[3]).toBe(0.5);
    expect(d.message.locomotion).toMatchObject({ target_velocity: { x: 0.05, y: 0, yaw: 0.1 }, gait: "Walk" });
  });
});

describe("P7 command record", () => {
  it("has its documented byte layout (golden vector) and reads back as the command", () => {
    const clock = new SimClock(1000);
    const tap = new RecordTap(ByteRing.create(1 << 12), clock);
    const targets = [0.5, -0.25, 0, 1, -1, 0.125, 2];
    const speeds = [1, 1, 1, 1, 1, 1, 0.5];
    expect(tap.p7Command(300, P7_TAKEN_KIND.moveJoints, targets, speeds, -1)).toBe(true);
    const rec = drainOne(tap.ring);
    expect(rec.channel).toBe(RING_CHANNEL.p7Command);
    expect(rec.timeMs).toBe(clock.epochMs());
    const expected = new Uint8Array(P7_COMMAND_RECORD.bytes);
    const v = new DataView(expected.buffer);
    v.setUint8(0, 1); // kind: move
    v.setInt16(2, -1, true);
    v.setFloat64(8, 300, true);
    for (let i = 0; i < 7; i++) {
      v.setFloat64(16 + 8 * i, targets[i]!, true);
      v.setFloat64(72 + 8 * i, speeds[i]!, true);
    }
    expect(Buffer.from(rec.bytes).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
    expect(rec.bytes.length).toBe(128);
    const view = new DataView(rec.bytes.buffer, rec.bytes.byteOffset, rec.bytes.length);
    expect(readP7Command(view, 0, rec.bytes.length)).toEqual({ command: "move_joints", cycle: 300, positions: targets, speed_rad_s: speeds });

    tap.p7Command(301, P7_TAKEN_KIND.clearError, targets, speeds, 4);
    tap.p7Command(302, P7_TAKEN_KIND.clearError, targets, speeds, -1);
    const out: unknown[] = [];
    tap.ring.drain((_c, _f, _t, offset, length) => out.push(readP7Command(tap.ring.view, offset, length)));
    expect(out).toEqual([
      { command: "clear_error", cycle: 301, joint: 4 },
      { command: "clear_error", cycle: 302, joint: null },
    ]);
    expect(readP7Command(view, 0, 120)).toBeNull();
  });
});
