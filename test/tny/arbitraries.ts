/** fast-check arbitraries for TNY-360 wire values, built from the table's field specs. */
import fc from "fast-check";
import type { FieldSpec } from "../../src/wire/tny/constants.js";

const f32 = () => fc.float({ noNaN: true, noDefaultInfinity: true });

/** A valid value for one field (valid for the strict argument decoder too). */
export function arbField(field: FieldSpec): fc.Arbitrary<unknown> {
  switch (field.type) {
    case "u8":
      return fc.integer({ min: 0, max: field.max ?? 0xff });
    case "u16":
      return fc.integer({ min: 0, max: field.max ?? 0xffff });
    case "u32":
      return fc.integer({ min: 0, max: 0xffffffff });
    case "i32":
      return fc.integer({ min: -0x80000000, max: 0x7fffffff });
    case "f32":
      return f32();
    case "bool":
      return fc.boolean();
    case "string":
      return fc.string({ unit: "grapheme-ascii", maxLength: field.maxLength !== undefined ? field.maxLength - 1 : 40 });
    case "vec3f":
      return fc.record({ x: f32(), y: f32(), z: f32() });
    case "f32x14":
      return fc.float32Array({ minLength: 14, maxLength: 14, noNaN: true, noDefaultInfinity: true });
    case "f32x16":
      return fc.float32Array({ minLength: 16, maxLength: 16, noNaN: true, noDefaultInfinity: true });
    case "errorEvent":
      return fc.record({
        timestampMs: fc.integer({ min: 0, max: 0xffffffff }),
        eventId: fc.integer({ min: 0, max: 0xffff }),
        module: fc.integer({ min: 0, max: 0xff }),
        subsystem: fc.integer({ min: 0, max: 0xff }),
        code: fc.integer({ min: 0, max: 0xff }),
        severity: fc.integer({ min: 0, max: 0xff }),
        payload: fc.uint8Array({ maxLength: 32 }),
      });
    case "calibrationDataPadded":
    case "calibrationDataPacked":
      return fc.record({
        dcMinMs: f32(),
        dcMaxMs: f32(),
        dcDeadband: f32(),
        feedbackMinV: f32(),
        feedbackMaxV: f32(),
        feedbackNoiseV: f32(),
        feedbackLatencyMs: f32(),
        feedbackInverted: fc.boolean(),
        maxSpeed: f32(),
      });
    case "bytes8":
      return fc.uint8Array({ maxLength: 255 });
    case "bytesRest":
      return fc.uint8Array({ maxLength: 64 });
  }
}

/** Values for a whole field list; a trailing optional may be left out (undefined). */
export function arbFields(fields: readonly FieldSpec[]): fc.Arbitrary<unknown[]> {
  const arbs = fields.map((f) => (f.optional ? fc.option(arbField(f), { nil: undefined }) : arbField(f)));
  return fc.tuple(...arbs) as fc.Arbitrary<unknown[]>;
}

/** Helpers for golden vectors: one field per line with a comment. */
export const u16le = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff];
export const u32le = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff];
export function f32le(v: number): number[] {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, v, true);
  return [...b];
}
