import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AnswerDecoder } from "../../src/bodies/nao/frames.js";
import { interpretPreferences } from "../../src/bodies/nao/prefs.js";
import { NaoState } from "../../src/bodies/nao/state.js";
import * as U from "../../src/bodies/nao/units.js";
import { computeFeet } from "../../src/bodies/nao/feet.js";
import { SimChestboard } from "../../src/sim/nao/chestboard.js";
import { Kind } from "../../src/wire/chestboard/constants.js";
import { encodeFrame } from "../../src/wire/chestboard/frame.js";
import { bytes, u16le } from "../helpers/bytes.js";
import { BATTERY_STATUS_DISCHARGING, SimNaoBody } from "../../src/sim/nao/body.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
import { KNOWN_ROBOT_CONFIG, knownSensorValues } from "../lola/helpers.js";

const f32 = Math.fround;

describe("conversions at full scale, both directions", () => {
  it("accelerometer: ±9.81 m/s² per 16,384 counts", () => {
    expect(U.accelFromCounts(16384)).toBeCloseTo(9.81, 12);
    expect(U.accelFromCounts(-16384)).toBeCloseTo(-9.81, 12);
    expect(U.accelFromCounts(32767)).toBeCloseTo(19.619401, 5);
    expect(U.toCounts(9.81, U.ACCEL_MPS2_PER_COUNT, U.I16.min, U.I16.max)).toBe(16384);
    expect(U.toCounts(-40, U.ACCEL_MPS2_PER_COUNT, U.I16.min, U.I16.max)).toBe(-32768); // clamps at the field's range
  });
  it("gyroscope: 500 °/s per 32,768 counts, in rad/s", () => {
    expect(U.gyroFromCounts(32768)).toBeCloseTo((500 * Math.PI) / 180, 12);
    expect(U.gyroFromCounts(-32768)).toBeCloseTo((-500 * Math.PI) / 180, 12);
    expect(U.toCounts((500 * Math.PI) / 180, U.GYRO_RADS_PER_COUNT, U.I16.min, U.I16.max)).toBe(32767);
  });
  it("sonar 0.01 m, current 0.016 A, temperature 2 °C per count", () => {
    expect(U.sonarFromCounts(65535)).toBeCloseTo(655.35, 9);
    expect(U.currentFromCounts(250)).toBeCloseTo(4, 12);
    expect(U.temperatureFromCounts(40)).toBe(80);
    expect(U.toCounts(4, U.CURRENT_A_PER_COUNT, 0, 65535)).toBe(250);
  });
  it("joint angles wrap into [−π, π) around the zero and invert exactly", () => {
    expect(U.jointAngleFromCounts(8192 + 4096, 8192)).toBeCloseTo(Math.PI / 2, 12);
    expect(U.jointAngleFromCounts(8192 - 8192, 8192)).toBeCloseTo(-Math.PI, 12);
    fc.assert(
      fc.property(fc.double({ min: -3.1, max: 3.1, noNaN: true }), fc.integer({ min: 0, max: 16383 }), (rad, zero) => {
        const back = U.jointAngleFromCounts(U.jointAngleToCounts(rad, zero), zero);
        return Math.abs(back - rad) <= (Math.PI / U.ENCODER_COUNTS_PER_TURN) * 1.0001; // half a count
      }),
    );
  });
  it("battery charge 1.01 is dropped; 0..1 is kept", () => {
    expect(U.batteryChargeFromCounts(1010)).toBeNaN();
    expect(U.batteryChargeFromCounts(1000)).toBe(1);
    expect(U.batteryChargeFromCounts(990)).toBeCloseTo(0.99, 12);
  });
  it("battery temperature 28.5 °C reads 2.8 on LoLA's scale and 28 on REST", () => {
    expect(f32(U.batteryTemperatureLolaFromCounts(285))).toBe(f32(2.8));
    expect(U.batteryTemperatureCFromCounts(285)).toBeCloseTo(28.5, 12);
    expect(U.batteryTemperatureWholeCFromLola(f32(2.8))).toBe(28);
  });
  it("head: INA230 1.25 mV per count; TMP100 1/256 °C", () => {
    expect(U.headVoltageFromCounts(19840)).toBeCloseTo(24.8, 12);
    expect(U.tmp100FromCounts(45 * 256)).toBe(45);
  });
});

describe("answer decoding", () => {
  const sim = new SimChestboard({ seed: 7 });
  const p = interpretPreferences(sim.preferenceEntries);
  if (!p.ok) throw new Error(p.reason);
  const prefs = p.prefs;

  it("drops an out-of-range battery charge and keeps the previous value", () => {
    const d = new AnswerDecoder(prefs);
    const s = new NaoState();
    const battery = (chargePermille: number) => encodeFrame([{ kind: Kind.BatteryState, bus: 0, address: 0x04, payload: bytes(u16le(chargePermille), u16le(0x80), u16le(0xfc18), u16le(285)) }]);
    expect(d.decode(battery(990), battery(990).length, s)).toBe(true);
    expect(s.battery[0]).toBe(f32(0.99));
    expect(s.battery[1]).toBe(0x80);
    expect(s.battery[2]).toBe(f32(-1)); // 0xfc18 = −1000 mA
    expect(s.battery[3]).toBe(f32(2.8));
    expect(s.batteryTemperatureC).toBeCloseTo(28.5, 5);
    d.decode(battery(1010), battery(1010).length, s);
    expect(s.battery[0]).toBe(f32(0.99));
  });
  it("golden: Battery[1] is the status register read as LoLA reads it, signed (rUNSWift's captures: -32724 discharging, -32628 charging)", () => {
    const d = new AnswerDecoder(prefs);
    const s = new NaoState();
    const writer = new LolaSensorWriter(KNOWN_ROBOT_CONFIG);
    for (const [status, expected, lolaBytes] of [
      [0x802c, -32724, "c6ffa800"],
      [0x808c, -32628, "c6fee800"],
      [0x0080, 128, "43000000"], // top bit clear: positive, as before
    ] as const) {
      const f = encodeFrame([{ kind: Kind.BatteryState, bus: 0, address: 0x04, payload: bytes(u16le(990), u16le(status), u16le(0xfc18), u16le(285)) }]);
      expect(d.decode(f, f.length, s)).toBe(true);
      expect(s.battery[1]).toBe(expected);
      // And on the LoLA socket: the same float32, sign included, at Battery[1].
      const m = writer.write({ ...knownSensorValues(), battery: s.battery });
      const at = Buffer.from(m).indexOf(Buffer.from("Battery")) + "Battery".length + 1 /* fixarray 4 */ + 5 /* Battery[0] */ + 1; /* 0xca */
      expect(Buffer.from(m.subarray(at, at + 4)).toString("hex")).toBe(lolaBytes);
    }
    // The simulator sends what a discharging robot sends.
    expect(new SimNaoBody(1).batteryStatusBits).toBe(BATTERY_STATUS_DISCHARGING);
  });
  it("skips messages with a wrong payload size or an unknown board, and counts them", () => {
    const d = new AnswerDecoder(prefs);
    const s = new NaoState();
    const f = encodeFrame([
      { kind: Kind.SonarState, bus: 0, address: 0x03, payload: bytes(u16le(100)) }, // 2 bytes, needs 4
      { kind: Kind.JointState, bus: 9, address: 0x99, payload: new Uint8Array(6) }, // no such board
      { kind: 0x7f, bus: 0, address: 0, payload: new Uint8Array(0) }, // unknown kind
      { kind: Kind.SonarState, bus: 0, address: 0x03, payload: bytes(u16le(100), u16le(250)) },
    ]);
    expect(d.decode(f, f.length, s)).toBe(true);
    expect(d.stats).toMatchObject({ used: 1, skipped: 3 });
    expect([...s.sonar]).toEqual([1, 2.5]);
  });
  it("property: arbitrary frames of known kinds never throw and leave values finite", () => {
    const d = new AnswerDecoder(prefs);
    const s = new NaoState();
    const kinds = [Kind.JointState, Kind.HandState, Kind.FootState, Kind.InertialState, Kind.BatteryState, Kind.SonarState, Kind.ChestState, Kind.HeadState];
    const msg = fc.record({
      kind: fc.constantFrom(...kinds),
      bus: fc.integer({ min: 0, max: 6 }),
      address: fc.constantFrom(0, 1, 2, 3, 4, 0x10, 0x20, 0x21, 0x22, 0x40, 0x43, 0x53),
      payload: fc.uint8Array({ maxLength: 24 }),
    });
    fc.assert(
      fc.property(fc.array(msg, { maxLength: 30 }), (msgs) => {
        const f = encodeFrame(msgs);
        d.decode(f, f.length, s);
        for (const a of [s.accelerometer, s.gyroscope, s.angles, s.battery, s.fsr, s.sonar, s.touch, s.position, s.current, s.temperature]) {
          for (const v of a) if (!Number.isFinite(v)) return false;
        }
        return s.status.every((v) => v <= 3);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("foot weight and centre of pressure", () => {
  it("centre of pressure is the weighted mean of the sensor positions", () => {
    const w = new Float32Array(2);
    const cop = new Float32Array(4);
    computeFeet([1, 1, 1, 1, 0, 2, 0, 0], w, cop);
    expect(w[0]).toBeCloseTo(4, 6);
    expect(cop[0]).toBeCloseTo((0.07025 * 2 - 0.03025 - 0.02965) / 4, 6);
    expect(cop[1]).toBeCloseTo((0.0299 - 0.0231 + 0.0299 - 0.0191) / 4, 6);
    expect(w[1]).toBeCloseTo(2, 6);
    expect([cop[2], cop[3]].map((v) => Number(v!.toFixed(5)))).toEqual([0.07025, -0.0299]);
  });
  it("an unloaded foot has weight 0 and centre (0, 0); negative readings count as 0", () => {
    const w = new Float32Array(2);
    const cop = new Float32Array(4);
    computeFeet([0, 0, -0.01, 0, 0, 0, 0, 0], w, cop);
    expect([...w]).toEqual([0, 0]);
    expect([...cop]).toEqual([0, 0, 0, 0]);
  });
});
