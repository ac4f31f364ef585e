import { readFileSync } from "node:fs";
import { decode } from "@msgpack/msgpack";
import fc from "fast-check";
import { unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { NaoState } from "../../src/bodies/nao/state.js";
import { LOLA_SENSOR_KEYS, LOLA_SENSOR_MESSAGE_BYTES } from "../../src/wire/lola/constants.js";
import { DEFAULT_LOLA_ROBOT_CONFIG, LolaConfigError, LolaSensorWriter, lolaEntryBytes, normalizeLolaRobotConfig } from "../../src/wire/lola/sensor-message.js";
import { KNOWN_ROBOT_CONFIG, array16, f32s, fixarray, fixints, fixmap, knownSensorValues, str, toHex, walkMap } from "./helpers.js";

/** The expected message for knownSensorValues(), built field by field from the encoding rules. */
function expectedKnownBytes(): Uint8Array {
  const s = knownSensorValues();
  const c = KNOWN_ROBOT_CONFIG;
  return Uint8Array.from([
    ...fixmap(13), // 13 keys
    ...str("Stiffness"),
    ...array16(25),
    ...f32s(s.stiffness), // Stiffness, 25 x f32
    ...str("Position"),
    ...array16(25),
    ...f32s(s.position), // Position, 25 x f32
    ...str("Temperature"),
    ...array16(25),
    ...f32s(s.temperature), // Temperature, 25 x f32
    ...str("Current"),
    ...array16(25),
    ...f32s(s.current), // Current, 25 x f32
    ...str("Battery"),
    ...fixarray(4),
    ...f32s(s.battery), // Battery, 4 x f32
    ...str("Accelerometer"),
    ...fixarray(3),
    ...f32s(s.accelerometer), // Accelerometer, 3 x f32
    ...str("Gyroscope"),
    ...fixarray(3),
    ...f32s(s.gyroscope), // Gyroscope, 3 x f32
    ...str("Angles"),
    ...fixarray(2),
    ...f32s(s.angles), // Angles, 2 x f32
    ...str("Sonar"),
    ...fixarray(2),
    ...f32s(s.sonar), // Sonar, 2 x f32
    ...str("FSR"),
    ...fixarray(8),
    ...f32s(s.fsr), // FSR, 8 x f32
    ...str("Status"),
    ...array16(25),
    ...fixints(s.status), // Status, 25 x positive fixint
    ...str("Touch"),
    ...fixarray(14),
    ...f32s(s.touch), // Touch, 14 x f32
    ...str("RobotConfig"),
    ...fixarray(4), // RobotConfig, 4 x fixstr
    ...str(c.bodyId),
    ...str(c.bodyVersion),
    ...str(c.headId),
    ...str(c.headVersion),
  ]);
}

const GOLDEN_HEX = readFileSync(new URL("./golden/sensor-known-state.hex", import.meta.url), "utf8").replace(/\s+/g, "");

describe("LoLA sensor message writer", () => {
  it("writes exactly the golden 896 bytes for a known state", () => {
    const w = new LolaSensorWriter(KNOWN_ROBOT_CONFIG);
    const bytes = w.write(knownSensorValues());
    expect(bytes.length).toBe(LOLA_SENSOR_MESSAGE_BYTES);
    expect(toHex(bytes)).toBe(toHex(expectedKnownBytes()));
    expect(toHex(bytes)).toBe(GOLDEN_HEX);
    // lola.md §4.2: "8d a9 Stiffness dc 00 19 ca …"
    expect(toHex(bytes.subarray(0, 15))).toBe("8da953746966666e657373dc0019ca");
  });

  it("is read back by @msgpack/msgpack with every key, length and value", () => {
    const s = knownSensorValues();
    const bytes = new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(s);
    const m = decode(bytes) as Record<string, unknown[]>;
    expect(Object.keys(m)).toEqual(LOLA_SENSOR_KEYS.map((k) => k.key));
    const fields: Record<string, ArrayLike<number>> = s;
    for (const k of LOLA_SENSOR_KEYS) {
      expect(m[k.key], k.key).toHaveLength(k.count);
      if (k.encoding === "f32") expect(m[k.key], k.key).toEqual(Array.from(fields[k.field]!));
    }
    expect(m.Status).toEqual(Array.from(s.status));
    expect(m.Status!.every((v) => Number.isInteger(v))).toBe(true);
    expect(m.RobotConfig).toEqual([KNOWN_ROBOT_CONFIG.bodyId, KNOWN_ROBOT_CONFIG.bodyVersion, KNOWN_ROBOT_CONFIG.headId, KNOWN_ROBOT_CONFIG.headVersion]);
    // msgpackr agrees.
    expect(unpack(bytes)).toEqual(m);
  });

  it("encodes every number as float32 (whole values too), Status as fixint, RobotConfig as fixstr", () => {
    const bytes = new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(knownSensorValues());
    const { entries, end } = walkMap(bytes);
    expect(end).toBe(896);
    for (const e of entries) {
      const spec = LOLA_SENSOR_KEYS.find((k) => k.key === e.key)!;
      const want = spec.encoding === "f32" ? "f32" : spec.encoding === "fixint" ? "int" : "str";
      expect(
        e.values.map((v) => v.type),
        e.key,
      ).toEqual(Array(spec.count).fill(want));
    }
    // 0.0 and 1.0 are there and still 5 bytes each.
    const stiff = entries.find((e) => e.key === "Stiffness")!.values;
    expect(stiff[0]).toMatchObject({ type: "f32", value: 0 });
    expect(stiff[24]).toMatchObject({ type: "f32", value: 1 });
  });

  it("matches the offsets table of lola.md §4.2", () => {
    const w = new LolaSensorWriter();
    const table: Array<[string, number, number, number]> = [
      ["Stiffness", 1, 11, 138],
      ["Position", 139, 148, 137],
      ["Temperature", 276, 288, 140],
      ["Current", 416, 424, 136],
      ["Battery", 552, 560, 29],
      ["Accelerometer", 581, 595, 30],
      ["Gyroscope", 611, 621, 26],
      ["Angles", 637, 644, 18],
      ["Sonar", 655, 661, 17],
      ["FSR", 672, 676, 45],
      ["Status", 717, 724, 35],
      ["Touch", 752, 758, 77],
      ["RobotConfig", 829, 841, 67],
    ];
    expect(w.layout.map((l) => [l.key, l.keyOffset, l.valueOffset, l.bytes])).toEqual(table);
    for (const l of w.layout) expect(lolaEntryBytes(l.key, l.count, l.encoding)).toBe(l.bytes);
  });

  it("writes a NaoState directly and only value bytes change between cycles", () => {
    const w = new LolaSensorWriter();
    const st = new NaoState();
    const first = Uint8Array.from(w.write(st));
    st.position[3] = 0.25;
    st.stiffness.fill(1);
    st.status[7] = 3;
    st.battery[0] = 1;
    const second = w.write(st);
    expect(second).toBe(w.bytes); // same buffer every time (borrowed)
    const valueBytes = new Set<number>();
    for (const l of w.layout) {
      for (const o of l.elementOffsets) {
        const n = l.encoding === "f32" ? 4 : l.encoding === "fixint" ? 1 : 0;
        for (let i = 0; i < n; i++) valueBytes.add(o + i);
      }
    }
    for (let i = 0; i < 896; i++) if (!valueBytes.has(i)) expect(second[i], `byte ${i}`).toBe(first[i]);
    expect(second).not.toEqual(first);
  });

  it("property: any values (NaN, ±Infinity, -0, huge status) keep the size and the layout", () => {
    const w = new LolaSensorWriter(KNOWN_ROBOT_CONFIG);
    const template = Uint8Array.from(w.write(knownSensorValues()));
    const layoutBytes = new Set<number>();
    for (const l of w.layout) for (const o of l.elementOffsets) for (let i = 0; i < (l.encoding === "f32" ? 4 : l.encoding === "fixint" ? 1 : 0); i++) layoutBytes.add(o + i);
    const floats = (n: number) => fc.array(fc.double(), { minLength: n, maxLength: n });
    fc.assert(
      fc.property(
        fc.record({
          stiffness: floats(25),
          position: floats(25),
          temperature: floats(25),
          current: floats(25),
          battery: floats(4),
          accelerometer: floats(3),
          gyroscope: floats(3),
          angles: floats(2),
          sonar: floats(2),
          fsr: floats(8),
          touch: floats(14),
          status: fc.array(fc.oneof(fc.integer({ min: -5, max: 300 }), fc.double()), { minLength: 25, maxLength: 25 }),
        }),
        (vals) => {
          const b = w.write(vals);
          expect(b.length).toBe(896);
          for (let i = 0; i < 896; i++) if (!layoutBytes.has(i) && b[i] !== template[i]) return false;
          const m = decode(b) as Record<string, number[]>;
          expect(m.Position![5]).toBe(Math.fround(vals.position[5]!));
          for (const x of m.Status!) if (!(Number.isInteger(x) && x >= 0 && x <= 127)) return false;
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("RobotConfig strings", () => {
  it("can be changed in place (a robot identified later): only the string bytes change", () => {
    const w = new LolaSensorWriter();
    const before = Uint8Array.from(w.write(knownSensorValues()));
    w.setRobotConfig(KNOWN_ROBOT_CONFIG);
    const after = w.write(knownSensorValues());
    expect(toHex(after)).toBe(toHex(new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(knownSensorValues())));
    const strings = w.field("RobotConfig")!.elementOffsets;
    const lengths = [20, 5, 20, 5];
    for (let i = 0; i < 896; i++) {
      const inString = strings.some((o, k) => i >= o && i < o + lengths[k]!);
      if (!inString) expect(after[i], `byte ${i}`).toBe(before[i]);
    }
    expect(w.robotConfig).toEqual(KNOWN_ROBOT_CONFIG);
    expect(() => w.setRobotConfig({ ...KNOWN_ROBOT_CONFIG, headId: "short" })).toThrow(/headId "short" is 5 characters/);
    expect(w.robotConfig).toEqual(KNOWN_ROBOT_CONFIG);
  });

  it("defaults to the Webots server's values", () => {
    expect(normalizeLolaRobotConfig().config).toEqual(DEFAULT_LOLA_ROBOT_CONFIG);
  });

  it("pads short ids and versions with spaces, and says so", () => {
    const { config, notes } = normalizeLolaRobotConfig({ bodyId: "P0000073", bodyVersion: "6.0" });
    expect(config.bodyId).toBe("P0000073            ");
    expect(config.bodyVersion).toBe("6.0  ");
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/bodyId "P0000073" padded with spaces to 20/);
    expect(new LolaSensorWriter(config).write(new NaoState()).length).toBe(896);
  });

  it("refuses what would change the message size, with a clear message", () => {
    expect(() => normalizeLolaRobotConfig({ headId: "P0000074A05S93M000610" })).toThrow(/headId "P0000074A05S93M000610" is 21 characters; LoLA clients need exactly 20/);
    expect(() => normalizeLolaRobotConfig({ bodyVersion: "6.10.0" })).toThrow(LolaConfigError);
    expect(() => normalizeLolaRobotConfig({ bodyVersion: "v6.0" })).toThrow(/must start with a digit/);
    expect(() => normalizeLolaRobotConfig({ bodyId: "P00000ÄA07S947000120" })).toThrow(/printable ASCII/);
    expect(() => normalizeLolaRobotConfig({ bodyId: "" })).toThrow(/is empty/);
    expect(() => normalizeLolaRobotConfig({ bodyId: "short" }, { padShort: false })).toThrow(/is 5 characters/);
    expect(() => new LolaSensorWriter({ ...DEFAULT_LOLA_ROBOT_CONFIG, bodyId: "short" })).toThrow(LolaConfigError);
  });
});
