import { readFileSync } from "node:fs";
import { encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NaoState } from "../../src/bodies/nao/state.js";
import { LOLA_SENSOR_KEYS } from "../../src/wire/lola/constants.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
import { LOLA_NEED_MORE, LolaSensorError, LolaSensorReader } from "../../src/wire/lola/sensor-reader.js";
import { KNOWN_ROBOT_CONFIG, array16, f32, fixarray, fixmap, knownSensorValues, str } from "./helpers.js";

/** The golden message shared with the writer's test (test/lola/sensor-message.test.ts). */
const GOLDEN = Uint8Array.from(Buffer.from(readFileSync(new URL("./golden/sensor-known-state.hex", import.meta.url), "utf8").replace(/\s+/g, ""), "hex"));

type Fields = Record<string, ArrayLike<number>>;

function expectValues(st: NaoState, want: ReturnType<typeof knownSensorValues>): void {
  const got = st as unknown as Fields;
  const w = want as unknown as Fields;
  for (const k of LOLA_SENSOR_KEYS) {
    if (k.field === "robotConfig") continue;
    expect(Array.from(got[k.field]!), k.key).toEqual(Array.from(w[k.field]!));
  }
}

/** A sensor map built entry by entry, in any key order, with per-entry bytes. */
function entry(key: string, values: number[], enc: (v: number) => number[] = f32): number[] {
  return [...str(key), ...(values.length > 15 ? array16(values.length) : fixarray(values.length)), ...values.flatMap(enc)];
}
function knownEntries(): Map<string, number[]> {
  const s = knownSensorValues() as unknown as Fields;
  const m = new Map<string, number[]>();
  for (const k of LOLA_SENSOR_KEYS) {
    if (k.field === "robotConfig") {
      const c = KNOWN_ROBOT_CONFIG;
      m.set(k.key, [...str(k.key), ...fixarray(4), ...str(c.bodyId), ...str(c.bodyVersion), ...str(c.headId), ...str(c.headVersion)]);
    } else m.set(k.key, entry(k.key, Array.from(s[k.field]!), k.encoding === "fixint" ? (v) => [v] : f32));
  }
  return m;
}
const build = (entries: number[][]): Uint8Array => Uint8Array.from([...fixmap(entries.length), ...entries.flat()]);

describe("LoLA sensor message reader", () => {
  it("decodes the writer's golden 896 bytes into the known values and RobotConfig", () => {
    const st = new NaoState();
    const r = new LolaSensorReader(st);
    expect(r.decode(GOLDEN)).toBe(896);
    expectValues(st, knownSensorValues());
    expect(r.robotConfig).toEqual(KNOWN_ROBOT_CONFIG);
    expect(r.messages).toBe(1);
  });

  it("reads keys in any order (real LoLA's order is unknown) and skips unknown keys", () => {
    const m = knownEntries();
    const reversed = [...m.values()].reverse();
    const st = new NaoState();
    const r = new LolaSensorReader(st);
    const withExtra = build([reversed[0]!, entry("FutureKey", [1, 2, 3]), [...str("Nested"), ...fixmap(1), ...str("a"), ...fixarray(1), 0xc0], ...reversed.slice(1)]);
    expect(r.decode(withExtra)).toBe(withExtra.length);
    expectValues(st, knownSensorValues());
    // nidhogg's field order, as serde would emit it.
    const nidhogg = ["Stiffness", "Position", "Temperature", "Current", "Battery", "Accelerometer", "Gyroscope", "Angles", "Sonar", "FSR", "Touch", "Status", "RobotConfig"];
    const b = build(nidhogg.map((k) => m.get(k)!));
    expect(b.length).toBe(896);
    const st2 = new NaoState();
    expect(new LolaSensorReader(st2).decode(b)).toBe(896);
    expectValues(st2, knownSensorValues());
  });

  it("accepts every number encoding where LoLA writes float32 (newer msgpack-c packs 0.0 as 0)", () => {
    const s = knownSensorValues();
    // @msgpack/msgpack's defaults: whole numbers as ints, others float64.
    const plain: Record<string, unknown> = {};
    const fields = s as unknown as Fields;
    for (const k of LOLA_SENSOR_KEYS) plain[k.key] = k.field === "robotConfig" ? Object.values(KNOWN_ROBOT_CONFIG) : Array.from(fields[k.field]!);
    const bytes = encode(plain);
    expect(bytes.length).not.toBe(896);
    const st = new NaoState();
    expect(new LolaSensorReader(st).decode(bytes)).toBe(bytes.length);
    expectValues(st, s);
    // Integers of every width, negative ones included.
    const ints: Array<[number, number[]]> = [
      [5, [0x05]], // positive fixint
      [-3, [0xfd]], // negative fixint
      [200, [0xcc, 200]], // uint 8
      [-100, [0xd0, 0x9c]], // int 8
      [-32708, [0xd1, 0x80, 0x3c]], // int 16 (the Webots battery status)
      [70000, [0xce, 0x00, 0x01, 0x11, 0x70]], // uint 32
      [-70000, [0xd2, 0xff, 0xfe, 0xee, 0x90]], // int 32
      [2 ** 40, [0xcf, 0, 0, 0x01, 0, 0, 0, 0, 0]], // uint 64
      [-(2 ** 40), [0xd3, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0]], // int 64
      [0.1, [0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a]], // float 64
    ];
    const m = knownEntries();
    for (const [value, enc] of ints) {
      m.set("Battery", [...str("Battery"), ...fixarray(4), ...enc, ...f32(0), ...f32(0), ...f32(0)]);
      const st2 = new NaoState();
      new LolaSensorReader(st2).decode(build([...m.values()]));
      expect(st2.battery[0], `0x${enc[0]!.toString(16)}`).toBe(Math.fround(value));
    }
  });

  it("every prefix of a message is 'need more' and leaves the target untouched", () => {
    const st = new NaoState();
    const r = new LolaSensorReader(st);
    for (let n = 0; n < GOLDEN.length; n++) expect(r.decode(GOLDEN, 0, n), `prefix ${n}`).toBe(LOLA_NEED_MORE);
    expect(Array.from(st.position)).toEqual(Array(25).fill(0));
    expect(r.robotConfig).toBeNull();
    // Two messages back to back, read from an offset.
    const two = new Uint8Array(2 * 896 + 3);
    two.set(GOLDEN, 3);
    two.set(GOLDEN, 899);
    expect(r.decode(two, 3)).toBe(899);
    expect(r.decode(two, 899)).toBe(1795);
    expect(r.messages).toBe(2);
  });

  it("names what is wrong: not a map, bad bytes, wrong counts, types, NaN, missing and repeated keys, size", () => {
    const st = new NaoState();
    const bad = (b: Uint8Array | number[], kind: string, re: RegExp) => {
      const r = new LolaSensorReader(st, { maxMessageBytes: 2048 });
      let err: unknown;
      try {
        r.decode(Uint8Array.from(b));
      } catch (e) {
        err = e;
      }
      expect(err, String(re)).toBeInstanceOf(LolaSensorError);
      expect((err as LolaSensorError).kind).toBe(kind);
      expect((err as LolaSensorError).message).toMatch(re);
    };
    const m = knownEntries();
    const with_ = (key: string, bytes: number[]) => build([...new Map([...m, [key, bytes]]).values()]);
    bad([0x93, 1, 2, 3], "not-a-map", /first byte is 0x93 \(fixarray\)/);
    bad([0x81, 0xa1, 0x41, 0xc1], "malformed", /byte 0xc1 cannot appear/);
    bad([0x81, 0xa1, 0x41, 0xd4, 0, 0], "malformed", /extension/);
    bad(with_("Position", entry("Position", Array(24).fill(0))), "bad-value", /Position has 24 values, LoLA sends 25/);
    bad(with_("Battery", [...str("Battery"), ...fixarray(4), 0xc3, ...f32(0), ...f32(0), ...f32(0)]), "bad-value", /Battery\[0\] is 0xc3 \(boolean\), not a number/);
    bad(with_("Gyroscope", entry("Gyroscope", [0, Number.NaN, 0])), "bad-value", /Gyroscope\[1\] is NaN; LoLA values are finite/);
    bad(with_("Angles", entry("Angles", [Number.POSITIVE_INFINITY, 0])), "bad-value", /Angles\[0\] is Infinity/);
    bad(
      with_(
        "Status",
        entry("Status", Array(25).fill(200), (v) => [0xcc, v]),
      ),
      "bad-value",
      /Status\[0\] is 200; LoLA sends integers 0..3/,
    );
    bad(with_("Status", entry("Status", Array(25).fill(0.5))), "bad-value", /Status\[0\] is 0.5/);
    bad(with_("Touch", [...str("Touch"), 0xca, 0, 0, 0, 0]), "malformed", /Touch must be an array, found 0xca/);
    bad(with_("RobotConfig", [...str("RobotConfig"), ...fixarray(4), 1, 2, 3, 4]), "bad-value", /RobotConfig\[0\] must be a string, found 0x01/);
    bad(build([...m.values()].slice(0, 12)), "missing-key", /lacks RobotConfig \(it has 12 keys; LoLA sends all 13\)/);
    bad(build([...m.values(), m.get("FSR")!]), "malformed", /key FSR appears twice/);
    bad([0x81, 0x01, 0x02], "malformed", /expected a string key, found 0x01/);
    bad([0x81, 0xa1, 0x41, 0xdc, 0x0f, 0xff], "too-large", /larger than 2048 bytes/);
  });

  it("decodes RobotConfig into a new object only when it changes", () => {
    const st = new NaoState();
    const r = new LolaSensorReader(st);
    r.decode(GOLDEN);
    const first = r.robotConfig;
    r.decode(GOLDEN);
    expect(r.robotConfig).toBe(first);
    expect(r.robotConfigChanges).toBe(1);
    const other = { ...KNOWN_ROBOT_CONFIG, headId: "P0000074A05S93M00099" };
    r.decode(new LolaSensorWriter(other).write(knownSensorValues()));
    expect(r.robotConfig).toEqual(other);
    expect(r.robotConfigChanges).toBe(2);
  });

  it("refuses a target that cannot hold a key's values", () => {
    const st = new NaoState();
    expect(() => new LolaSensorReader({ ...st, position: new Float32Array(24) } as unknown as NaoState)).toThrow(/target.position must hold 25 values/);
  });

  it("property: writer → reader round-trips any float32 values, Status 0..127 and RobotConfig strings", () => {
    const f32arr = (n: number) => fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: n, maxLength: n });
    const ascii = (n: number) => fc.stringMatching(new RegExp(`^[0-9][ -~]{${n - 1}}$`));
    fc.assert(
      fc.property(
        fc.record({
          stiffness: f32arr(25),
          position: f32arr(25),
          temperature: f32arr(25),
          current: f32arr(25),
          battery: f32arr(4),
          accelerometer: f32arr(3),
          gyroscope: f32arr(3),
          angles: f32arr(2),
          sonar: f32arr(2),
          fsr: f32arr(8),
          touch: f32arr(14),
          status: fc.array(fc.integer({ min: 0, max: 127 }), { minLength: 25, maxLength: 25 }),
        }),
        fc.record({ bodyId: ascii(20), bodyVersion: ascii(5), headId: ascii(20), headVersion: ascii(5) }),
        (vals, config) => {
          const bytes = new LolaSensorWriter(config).write(vals);
          const st = new NaoState();
          const r = new LolaSensorReader(st);
          expect(r.decode(bytes)).toBe(896);
          const got = st as unknown as Fields;
          for (const k of LOLA_SENSOR_KEYS) {
            if (k.field === "robotConfig") continue;
            // -0 survives float32 bit for bit; toEqual distinguishes it, which is what we want.
            expect(Array.from(got[k.field]!), k.key).toEqual((vals as unknown as Record<string, number[]>)[k.field]);
          }
          expect(r.robotConfig).toEqual(config);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: once the layout is learnt, messages with it read the same as the general way; anything else falls back", () => {
    const learnt = new NaoState();
    const reader = new LolaSensorReader(learnt);
    const w = new LolaSensorWriter(KNOWN_ROBOT_CONFIG);
    const f32arr = (n: number) => fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: n, maxLength: n });
    fc.assert(
      fc.property(
        fc.record({
          stiffness: f32arr(25),
          position: f32arr(25),
          temperature: f32arr(25),
          current: f32arr(25),
          battery: f32arr(4),
          accelerometer: f32arr(3),
          gyroscope: f32arr(3),
          angles: f32arr(2),
          sonar: f32arr(2),
          fsr: f32arr(8),
          touch: f32arr(14),
          status: fc.array(fc.integer({ min: 0, max: 127 }), { minLength: 25, maxLength: 25 }),
        }),
        fc.constantFrom("none", "nan", "status", "reorder", "config"),
        (vals, twist) => {
          let bytes: Uint8Array = Uint8Array.from(w.write(vals));
          if (twist === "nan") new DataView(bytes.buffer).setFloat32(w.field("Gyroscope")!.elementOffsets[1]!, Number.NaN);
          if (twist === "status") bytes[w.field("Status")!.elementOffsets[3]!] = 0xcc; // uint 8 follows: another layout
          if (twist === "config") bytes = Uint8Array.from(new LolaSensorWriter({ ...KNOWN_ROBOT_CONFIG, headId: "P0000074A05S93M00099" }).write(vals));
          if (twist === "reorder") {
            const m = knownEntries();
            const s = vals as unknown as Record<string, number[]>;
            for (const k of LOLA_SENSOR_KEYS) if (k.field !== "robotConfig") m.set(k.key, entry(k.key, s[k.field]!, k.encoding === "fixint" ? (v) => [v] : f32));
            bytes = build([...m.values()].reverse());
          }
          const fresh = new NaoState();
          const before = Array.from(learnt.position);
          let want: unknown;
          try {
            want = new LolaSensorReader(fresh).decode(bytes);
          } catch (e) {
            want = (e as LolaSensorError).kind;
          }
          let got: unknown;
          try {
            got = reader.decode(bytes);
          } catch (e) {
            got = (e as LolaSensorError).kind;
          }
          expect(got).toBe(want);
          if (typeof want === "number" && want > 0) expectValues(learnt, fresh as unknown as ReturnType<typeof knownSensorValues>);
          if (want === LOLA_NEED_MORE) expect(Array.from(learnt.position)).toEqual(before); // untouched
          // Back to the usual layout: read correctly again (re-learnt if needed).
          expect(reader.decode(w.write(vals))).toBe(896);
          expectValues(learnt, vals as unknown as ReturnType<typeof knownSensorValues>);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("property: arbitrary bytes never throw anything but LolaSensorError, and never read past `end`", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1200 }), fc.boolean(), (junk, prefixMap) => {
        const b = prefixMap && junk.length > 0 ? Uint8Array.from([0x8d, ...junk]) : junk;
        const r = new LolaSensorReader(new NaoState());
        try {
          const end = r.decode(b);
          expect(end === LOLA_NEED_MORE || (end > 0 && end <= b.length)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(LolaSensorError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("property: damaging any structural byte of the golden message is an error or 'need more', unless it re-encodes a number", () => {
    const w = new LolaSensorWriter(KNOWN_ROBOT_CONFIG);
    const valueBytes = new Set<number>();
    for (const l of w.layout) for (const o of l.elementOffsets) for (let i = 0; i < (l.encoding === "f32" ? 4 : l.encoding === "fixint" ? 1 : 0); i++) valueBytes.add(o + i);
    const robotConfigStrings = w.field("RobotConfig")!.valueOffset + 1;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 895 }), fc.integer({ min: 1, max: 255 }), fc.boolean(), (at, xor, learnFirst) => {
        if (valueBytes.has(at)) return;
        const b = Uint8Array.from(GOLDEN);
        b[at] = b[at]! ^ xor;
        let end: number;
        const r = new LolaSensorReader(new NaoState());
        if (learnFirst) r.decode(GOLDEN); // the learnt layout must see the damage as well
        try {
          end = r.decode(b);
        } catch (e) {
          expect(e).toBeInstanceOf(LolaSensorError);
          return;
        }
        if (end === LOLA_NEED_MORE) return;
        // What still decodes: a float32 marker turned into another number type (0xce uint 32 has
        // the same size), or a character of a RobotConfig string.
        expect(GOLDEN[at] === 0xca || at >= robotConfigStrings, `byte ${at}`).toBe(true);
        expect(end).toBeLessThanOrEqual(896);
      }),
      { numRuns: 2000 },
    );
  });
});
