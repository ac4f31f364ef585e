import { decode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { LOLA_COMMAND_KEY_ORDER, LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { LOLA_COMMAND_WITHOUT_SONAR_BYTES, LOLA_FULL_COMMAND_BYTES } from "../../src/wire/lola/constants.js";
import { f32, fixarray, fixmap, str, toHex } from "./helpers.js";

describe("LoLA command writer", () => {
  it("writes golden bytes: float32 for whole values, booleans for Sonar", () => {
    const w = new LolaCommandWriter(["Chest", "Sonar"]).setFloats("Chest", [1, 0, 0.5]).setSonar(true, false);
    const expected = Uint8Array.from([
      ...fixmap(2), // 2 keys
      ...str("Chest"), ...fixarray(3), ...f32(1), ...f32(0), ...f32(0.5), // Chest, 3 x f32
      ...str("Sonar"), ...fixarray(2), 0xc3, 0xc2, // Sonar, true false
    ]);
    expect(toHex(w.bytes)).toBe(toHex(expected));
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
