/**
 * The NAO's 76 preference values (as HAL logs them): names, types, units, and their meaning for
 * decoding. The wire format of the block is in src/wire/chestboard/prefs.ts.
 *
 *   2  body id and body version
 *  19  stored serial number of every board
 *  25  joint zero positions (encoder counts, LoLA order)
 *  16  foot pressure sensors: gain (kg/count) and offset (kg) for each of the 8
 *  14  inertial unit: angle offsets (2, applied), gyroscope and accelerometer offsets and gains
 *      (3 each; reported, not applied: LoLA's accelerometer and gyroscope values are uncorrected)
 */
import { BOARDS } from "../../wire/chestboard/constants.js";
import { type PrefEntry, PrefType, type PrefValue } from "../../wire/chestboard/prefs.js";
import { LOLA_ORDER } from "./joints.js";

export interface PrefSpec {
  readonly key: string;
  readonly type: PrefType;
  readonly unit: string;
}

export const FSR_NAMES = ["LFoot/FrontLeft", "LFoot/FrontRight", "LFoot/RearLeft", "LFoot/RearRight", "RFoot/FrontLeft", "RFoot/FrontRight", "RFoot/RearLeft", "RFoot/RearRight"] as const;
const XYZ = ["X", "Y", "Z"] as const;

/** The 76 keys, in the order HAL logs them (and `bodylink prefs` prints them). */
export const PREF_SPECS: readonly PrefSpec[] = [
  { key: "Body/BodyId", type: PrefType.Str, unit: "" },
  { key: "Body/BodyVersion", type: PrefType.Str, unit: "" },
  ...BOARDS.map((b) => ({ key: `Board/${b.name}/Serial`, type: PrefType.U32, unit: "" })),
  ...LOLA_ORDER.map((n) => ({ key: `Joint/${n}/ZeroPosition`, type: PrefType.U16, unit: "counts" })),
  ...FSR_NAMES.map((n) => ({ key: `FSR/${n}/Gain`, type: PrefType.F32, unit: "kg/count" })),
  ...FSR_NAMES.map((n) => ({ key: `FSR/${n}/Offset`, type: PrefType.F32, unit: "kg" })),
  { key: "InertialUnit/AngleOffset/X", type: PrefType.F32, unit: "rad" },
  { key: "InertialUnit/AngleOffset/Y", type: PrefType.F32, unit: "rad" },
  ...XYZ.map((a) => ({ key: `InertialUnit/GyroscopeOffset/${a}`, type: PrefType.F32, unit: "rad/s" })),
  ...XYZ.map((a) => ({ key: `InertialUnit/GyroscopeGain/${a}`, type: PrefType.F32, unit: "" })),
  ...XYZ.map((a) => ({ key: `InertialUnit/AccelerometerOffset/${a}`, type: PrefType.F32, unit: "m/s²" })),
  ...XYZ.map((a) => ({ key: `InertialUnit/AccelerometerGain/${a}`, type: PrefType.F32, unit: "" })),
];

export const PREF_COUNT = PREF_SPECS.length; // 76

/** Decoded preferences in the shapes the decoder uses. */
export interface NaoPreferences {
  readonly bodyId: string;
  readonly bodyVersion: string;
  /** Stored serial per board name. */
  readonly serials: ReadonlyMap<string, number>;
  /** Encoder zero per joint, LoLA order. */
  readonly jointZeroCounts: Int32Array;
  readonly fsrGainKgPerCount: Float64Array;
  readonly fsrOffsetKg: Float64Array;
  /** Subtracted from the inertial unit's angle estimate, rad (x, y). */
  readonly angleOffsetRad: Float64Array;
  readonly gyroscopeOffsetRadS: Float64Array;
  readonly gyroscopeGain: Float64Array;
  readonly accelerometerOffsetMps2: Float64Array;
  readonly accelerometerGain: Float64Array;
  /** All 76 entries in PREF_SPECS order, with units, for printing. */
  readonly values: ReadonlyArray<{ readonly key: string; readonly value: PrefValue; readonly unit: string }>;
}

export type InterpretedPrefs = { readonly ok: true; readonly prefs: NaoPreferences } | { readonly ok: false; readonly reason: string };

/** Check that every one of the 76 keys is present with its type, and build NaoPreferences. */
export function interpretPreferences(entries: readonly PrefEntry[]): InterpretedPrefs {
  const byKey = new Map(entries.map((e) => [e.key, e]));
  const values: Array<{ key: string; value: PrefValue; unit: string }> = [];
  for (const s of PREF_SPECS) {
    const e = byKey.get(s.key);
    if (!e) return { ok: false, reason: `preference ${s.key} is missing` };
    if (e.type !== s.type) return { ok: false, reason: `preference ${s.key} has type ${PrefType[e.type]}, expected ${PrefType[s.type]}` };
    values.push({ key: s.key, value: e.value, unit: s.unit });
  }
  const num = (k: string) => byKey.get(k)!.value as number;
  const serials = new Map(BOARDS.map((b) => [b.name, num(`Board/${b.name}/Serial`)]));
  return {
    ok: true,
    prefs: {
      bodyId: byKey.get("Body/BodyId")!.value as string,
      bodyVersion: byKey.get("Body/BodyVersion")!.value as string,
      serials,
      jointZeroCounts: Int32Array.from(LOLA_ORDER, (n) => num(`Joint/${n}/ZeroPosition`)),
      fsrGainKgPerCount: Float64Array.from(FSR_NAMES, (n) => num(`FSR/${n}/Gain`)),
      fsrOffsetKg: Float64Array.from(FSR_NAMES, (n) => num(`FSR/${n}/Offset`)),
      angleOffsetRad: Float64Array.from(["X", "Y"], (a) => num(`InertialUnit/AngleOffset/${a}`)),
      gyroscopeOffsetRadS: Float64Array.from(XYZ, (a) => num(`InertialUnit/GyroscopeOffset/${a}`)),
      gyroscopeGain: Float64Array.from(XYZ, (a) => num(`InertialUnit/GyroscopeGain/${a}`)),
      accelerometerOffsetMps2: Float64Array.from(XYZ, (a) => num(`InertialUnit/AccelerometerOffset/${a}`)),
      accelerometerGain: Float64Array.from(XYZ, (a) => num(`InertialUnit/AccelerometerGain/${a}`)),
      values,
    },
  };
}

/** Build entries (PREF_SPECS order) from a value lookup; used by the simulator and tests. */
export function preferenceEntries(value: (spec: PrefSpec) => PrefValue): PrefEntry[] {
  return PREF_SPECS.map((s) => ({ key: s.key, type: s.type, value: value(s) }));
}
