/**
 * The command mailboxes (src/shm/mailbox.ts over each body's command layout table): golden byte
 * layouts (a field moved or resized breaks the host/core contract, so it fails here), a golden
 * byte vector of one P7 slot, and the round trip host → core: the reader takes exactly the newest
 * completed write, byte for byte, once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NAO_COMMAND_LAYOUT } from "../../src/bodies/nao/layout.js";
import { P7_COMMAND_KIND, P7_COMMAND_LAYOUT } from "../../src/bodies/p7/layout.js";
import { copyTny360Commands, Tny360Commands } from "../../src/bodies/tny360/commands.js";
import { TNY360_ALL_JOINTS, TNY360_COMMAND_FLAG, TNY360_COMMAND_KEY, TNY360_COMMAND_LAYOUT } from "../../src/bodies/tny360/layout.js";
import { NAO_MAILBOX_BYTES } from "../../src/host/nao-host.js";
import { P7_MAILBOX_BYTES } from "../../src/host/p7-host.js";
import { TNY360_MAILBOX_BYTES } from "../../src/host/tny360-host.js";
import { layoutOffsets, type ShmViews } from "../../src/shm/layout.js";
import { Mailbox, mailboxBytes } from "../../src/shm/mailbox.js";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

describe("command layouts (golden)", () => {
  it("NAO: LoLA's keys in LoLA's order, f32 values, header first; 568 bytes a slot, 1152 the mailbox", () => {
    expect(layoutOffsets(NAO_COMMAND_LAYOUT)).toEqual({ offsets: [0, 8, 108, 208, 220, 260, 300, 396, 492, 504, 516, 564], end: 568 });
    expect(NAO_MAILBOX_BYTES).toBe(16 + 2 * 568);
  });

  it("P7: header (kind, generation), 7 targets and 7 speeds as f64; 120 bytes a slot, 256 the mailbox", () => {
    expect(layoutOffsets(P7_COMMAND_LAYOUT)).toEqual({ offsets: [0, 8, 64], end: 120 });
    expect(P7_MAILBOX_BYTES).toBe(256);
    expect(P7_COMMAND_KIND).toEqual({ moveJoints: 1, servoJoints: 2 });
  });

  it("P7: one moveJoints slot, byte for byte (little-endian)", () => {
    const buffer = new SharedArrayBuffer(P7_MAILBOX_BYTES);
    const box = new Mailbox(P7_COMMAND_LAYOUT, buffer, 0);
    box.write((s) => {
      s.header[0] = P7_COMMAND_KIND.moveJoints;
      s.header[1] = 0x01020304;
      s.targetsRad.set([0.5, -1, 0, 0, 0, 0, 2]);
      s.speedRadS.fill(0.25);
    });
    const bytes = new Uint8Array(buffer);
    // words: 1 write completed, none taken, slot 0's seqlock at 2 (one complete write), slot 1's at 0
    expect(hex(bytes.subarray(0, 16))).toBe("01000000" + "00000000" + "02000000" + "00000000");
    const slot = bytes.subarray(16, 16 + 120);
    expect(hex(slot.subarray(0, 8))).toBe("01000000" + "04030201");
    expect(hex(slot.subarray(8, 24))).toBe("000000000000e03f" + "000000000000f0bf");
    expect(hex(slot.subarray(56, 64))).toBe("0000000000000040");
    expect(hex(slot.subarray(64, 72))).toBe("000000000000d03f");
    expect(hex(slot.subarray(112, 120))).toBe("000000000000d03f");
  });
});

describe("TNY-360 command layout (golden)", () => {
  it("header (keys, generation, joint bits, flags), float32 velocity/posture/joints as on the wire; 120 bytes a slot, 256 the mailbox", () => {
    expect(layoutOffsets(TNY360_COMMAND_LAYOUT)).toEqual({ offsets: [0, 16, 28, 52, 56, 60], end: 120 });
    expect(TNY360_MAILBOX_BYTES).toBe(256);
    expect(TNY360_COMMAND_KEY).toEqual({ enabledMask: 1, gait: 2, posture: 4, velocity: 8, joints: 16 });
    expect(TNY360_ALL_JOINTS).toBe(0x3fff);
  });

  it("Tny360Commands has every field of the layout, with its element type and count", () => {
    const c = new Tny360Commands() as unknown as Record<string, ArrayLike<number> & { BYTES_PER_ELEMENT: number; constructor: { name: string } }>;
    const ctor = { u32: "Uint32Array", f32: "Float32Array" } as const;
    for (const f of TNY360_COMMAND_LAYOUT) {
      expect(c[f.name]?.constructor.name, f.name).toBe(ctor[f.type]);
      expect(c[f.name]?.length, f.name).toBe(f.count);
    }
    expect(Object.keys(c).sort()).toEqual(TNY360_COMMAND_LAYOUT.map((f) => f.name).sort());
  });

  it("one merge (velocity that clears the overrides, then joint 12), byte for byte", () => {
    const buffer = new SharedArrayBuffer(TNY360_MAILBOX_BYTES);
    const box = new Mailbox(TNY360_COMMAND_LAYOUT, buffer, 0);
    const c = new Tny360Commands();
    c.header.set([TNY360_COMMAND_KEY.velocity | TNY360_COMMAND_KEY.joints, 9, 1 << 12, TNY360_COMMAND_FLAG.velocityClearsOverrides]);
    c.velocity.set([0.25, 0, -1]);
    c.jointRad[12] = 0.5;
    box.write((slot) => copyTny360Commands(c, slot));
    const slot = new Uint8Array(buffer, 16, 120);
    expect(hex(slot.subarray(0, 16))).toBe("18000000" + "09000000" + "00100000" + "01000000");
    expect(hex(slot.subarray(16, 28))).toBe("0000803e" + "00000000" + "000080bf");
    expect(hex(slot.subarray(60 + 4 * 12, 60 + 4 * 13))).toBe("0000003f");
    // and back into the core's record, field for field
    const back = new Tny360Commands();
    expect(box.take((s) => copyTny360Commands(s, back))).toBe(1);
    expect(back).toEqual(c);
  });
});

describe("mailbox round trip", () => {
  const FIELDS = P7_COMMAND_LAYOUT;
  type Slot = ShmViews<typeof FIELDS>;
  const cmd = fc.record({
    kind: fc.constantFrom(P7_COMMAND_KIND.moveJoints, P7_COMMAND_KIND.servoJoints),
    generation: fc.integer({ min: 0, max: 0xffffffff }),
    targets: fc.array(fc.double(), { minLength: 7, maxLength: 7 }),
    speeds: fc.array(fc.double(), { minLength: 7, maxLength: 7 }),
  });

  it("the core takes the newest of any number of writes, exactly as written, and only once", () => {
    fc.assert(
      fc.property(fc.array(fc.array(cmd, { minLength: 0, maxLength: 5 }), { minLength: 1, maxLength: 6 }), (rounds) => {
        const buffer = new SharedArrayBuffer(mailboxBytes(FIELDS) + 8);
        // host and core each build their own views over the same bytes (8 in, as in the core's buffer)
        const host = new Mailbox(FIELDS, buffer, 8);
        const core = new Mailbox(FIELDS, buffer, 8);
        const got = { header: new Uint32Array(2), targets: new Float64Array(7), speeds: new Float64Array(7) };
        const copy = (s: Slot): void => {
          got.header.set(s.header);
          got.targets.set(s.targetsRad);
          got.speeds.set(s.speedRadS);
        };
        let writes = 0;
        for (const round of rounds) {
          for (const c of round) {
            writes = host.write((s) => {
              s.header[0] = c.kind;
              s.header[1] = c.generation;
              s.targetsRad.set(c.targets);
              s.speedRadS.set(c.speeds);
            });
          }
          const n = core.take(copy);
          const last = round.at(-1);
          if (!last) {
            expect(n).toBe(0); // nothing new
            continue;
          }
          expect(n).toBe(writes);
          expect(host.taken).toBe(writes);
          expect(Array.from(got.header)).toEqual([last.kind, last.generation]);
          // Object.is per element: NaN stays NaN, -0 stays -0
          expect(Array.from(got.targets).every((v, i) => Object.is(v, last.targets[i]))).toBe(true);
          expect(Array.from(got.speeds).every((v, i) => Object.is(v, last.speeds[i]))).toBe(true);
          expect(core.take(copy)).toBe(0); // taken once
        }
      }),
    );
  });
});
