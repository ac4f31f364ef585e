import { readFileSync } from "node:fs";
import { decode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOLA_COMMAND_KEY_ORDER, LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LolaCommandReader, type LolaCommandUpdate } from "../../src/wire/lola/command-reader.js";
import { LOLA_COMMAND_KEYS, LOLA_COMMAND_WITHOUT_SONAR_BYTES, LOLA_FULL_COMMAND_BYTES, type LolaCommandKeyName } from "../../src/wire/lola/constants.js";
import { array16, f32, f32s, fixarray, fixmap, knownCommandValues, str, toHex } from "./helpers.js";

/** The full command both the writer and the reader are pinned to (knownCommandValues()). */
const GOLDEN_HEX = readFileSync(new URL("./golden/command-full.hex", import.meta.url), "utf8").replace(/\s+/g, "");

function writeAll(w: LolaCommandWriter, v: Record<string, ArrayLike<number> | boolean[]>): LolaCommandWriter {
  for (const k of w.keys) {
    if (k === "Sonar") w.setSonar((v.Sonar as boolean[])[0]!, (v.Sonar as boolean[])[1]!);
    else w.setFloats(k, v[k] as ArrayLike<number>);
  }
  return w;
}

describe("LoLA command writer", () => {
  it("writes golden bytes: float32 for whole values, booleans for Sonar", () => {
    const w = new LolaCommandWriter(["Chest", "Sonar"]).setFloats("Chest", [1, 0, 0.5]).setSonar(true, false);
    const expected = Uint8Array.from([
      ...fixmap(2), // 2 keys
      ...str("Chest"),
      ...fixarray(3),
      ...f32(1),
      ...f32(0),
      ...f32(0.5), // Chest, 3 x f32
      ...str("Sonar"),
      ...fixarray(2),
      0xc3,
      0xc2, // Sonar, true false
    ]);
    expect(toHex(w.bytes)).toBe(toHex(expected));
  });

  it("writes the golden full command, built field by field, and the reader decodes it back", () => {
    const v = knownCommandValues();
    const expected = Uint8Array.from([
      ...fixmap(11), // 11 keys, nidhogg's order
      ...str("Position"),
      ...array16(25),
      ...f32s(v.Position), // Position, 25 x f32
      ...str("Stiffness"),
      ...array16(25),
      ...f32s(v.Stiffness), // Stiffness, 25 x f32 (0.0 and 1.0 too)
      ...str("REar"),
      ...fixarray(10),
      ...f32s(v.REar), // REar, 10 x f32
      ...str("LEar"),
      ...fixarray(10),
      ...f32s(v.LEar), // LEar, 10 x f32
      ...str("Chest"),
      ...fixarray(3),
      ...f32s(v.Chest), // Chest, RGB
      ...str("LEye"),
      ...array16(24),
      ...f32s(v.LEye), // LEye, 24 x f32
      ...str("REye"),
      ...array16(24),
      ...f32s(v.REye), // REye, 24 x f32
      ...str("LFoot"),
      ...fixarray(3),
      ...f32s(v.LFoot), // LFoot, RGB
      ...str("RFoot"),
      ...fixarray(3),
      ...f32s(v.RFoot), // RFoot, RGB
      ...str("Skull"),
      ...fixarray(12),
      ...f32s(v.Skull), // Skull, 12 x f32
      ...str("Sonar"),
      ...fixarray(2),
      0xc3,
      0xc2, // Sonar, true false
    ]);
    const bytes = writeAll(new LolaCommandWriter(), v).bytes;
    expect(bytes.length).toBe(LOLA_FULL_COMMAND_BYTES);
    expect(toHex(bytes)).toBe(toHex(expected));
    expect(toHex(bytes)).toBe(GOLDEN_HEX);
    const got: LolaCommandUpdate[] = [];
    const err = new LolaCommandReader().push(Uint8Array.from(Buffer.from(GOLDEN_HEX, "hex")), (u, problems) => {
      expect(problems).toEqual([]);
      got.push(u);
    });
    expect(err).toBeNull();
    expect(got).toEqual([v]);
  });

  it("property: writer → reader round-trips any subset of keys, in any order, with any float32 values", () => {
    const values = (k: (typeof LOLA_COMMAND_KEYS)[number]) =>
      k.type === "bool" ? fc.tuple(fc.boolean(), fc.boolean()) : fc.array(fc.float({ noNaN: true }), { minLength: k.count, maxLength: k.count });
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...LOLA_COMMAND_KEYS], { minLength: 1 }).chain((keys) => fc.tuple(fc.constant(keys.map((k) => k.key)), fc.tuple(...keys.map(values)))),
        ([keys, vals]) => {
          const v: Record<string, number[] | boolean[]> = {};
          keys.forEach((k, i) => {
            v[k] = vals[i] as number[] | boolean[];
          });
          const w = writeAll(new LolaCommandWriter(keys as LolaCommandKeyName[]), v);
          const got: LolaCommandUpdate[] = [];
          expect(new LolaCommandReader().push(w.bytes, (u) => got.push(u))).toBeNull();
          expect(got).toEqual([v]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is 786 bytes with all keys and 777 without Sonar (lola.md §5.3); decodes back", () => {
    const all = new LolaCommandWriter();
    expect(all.keys).toEqual(LOLA_COMMAND_KEY_ORDER);
    expect(all.bytes.length).toBe(LOLA_FULL_COMMAND_BYTES);
    expect(new LolaCommandWriter(LOLA_COMMAND_KEY_ORDER.filter((k) => k !== "Sonar")).bytes.length).toBe(LOLA_COMMAND_WITHOUT_SONAR_BYTES);
    all.setFloat("Position", 24, 0.75);
    const m = decode(all.bytes) as Record<string, unknown[]>;
    expect(m.Position![24]).toBe(0.75);
    expect(m.Stiffness).toEqual(Array(25).fill(0)); // safe default: nothing driven
    expect(m.Sonar).toEqual([true, true]);
  });

  it("valuesAt: where each key's values are, for writing in place (golden offsets; the same bytes as setFloats)", () => {
    const w = new LolaCommandWriter();
    // fixmap (1), "Position" fixstr (1 + 8), array 16 header (3), then the first value's 0xca marker
    expect(w.valuesAt("Position")).toBe(1 + 9 + 3 + 1);
    // … its 25 values (5 bytes each), "Stiffness" fixstr (1 + 9), array 16 (3), 0xca
    expect(w.valuesAt("Stiffness")).toBe(14 + 25 * 5 - 1 + 10 + 3 + 1);
    expect(w.valuesAt("Sonar")).toBe(LOLA_FULL_COMMAND_BYTES - 2); // the last key: its two booleans end the message
    const byName = new LolaCommandWriter();
    const inPlace = new LolaCommandWriter();
    const view = new DataView(inPlace.bytes.buffer, inPlace.bytes.byteOffset, inPlace.bytes.byteLength);
    for (const k of LOLA_COMMAND_KEYS) {
      if (k.type === "bool") continue;
      const values = Array.from({ length: k.count }, (_, i) => Math.fround(0.25 + i / 128));
      byName.setFloats(k.key as Exclude<LolaCommandKeyName, "Sonar">, values);
      for (let i = 0; i < k.count; i++) view.setFloat32(inPlace.valuesAt(k.key) + 5 * i, values[i]!, false);
    }
    expect(toHex(inPlace.bytes)).toBe(toHex(byName.bytes));
    expect(() => new LolaCommandWriter(["Position"]).valuesAt("Sonar")).toThrow(/no Sonar key/);
  });

  it("refuses absent keys, wrong lengths, bad indexes, duplicates and unknown keys", () => {
    const w = new LolaCommandWriter(["Chest"]);
    expect(() => w.setFloats("Position", Array(25).fill(0))).toThrow(/no Position key/);
    expect(() => w.setFloats("Chest", [1, 2])).toThrow(/Chest needs 3 values, got 2/);
    expect(() => w.setFloat("Chest", 3, 1)).toThrow(/index 3 out of 0..2/);
    expect(() => w.setSonar(true, true)).toThrow(/no Sonar key/);
    expect(() => new LolaCommandWriter(["Chest", "Chest"])).toThrow(/duplicate/);
    expect(() => new LolaCommandWriter([])).toThrow(/1 to 11 keys/);
    // @ts-expect-error: not a LoLA key
    expect(() => new LolaCommandWriter(["Head"])).toThrow(/unknown LoLA command key "Head"/);
  });
});
