/**
 * The LoLA sensor message writer (docs/lola.md): one MessagePack map of 13 keys,
 * exactly 896 bytes, with a layout (key order, encodings, offsets) that is identical every cycle.
 *
 * How: the constructor builds the whole message once as a template (map header, keys, array
 * headers, `0xca` markers, the RobotConfig strings) into a preallocated buffer and records the
 * offset of every value. `write(state)` then overwrites only the value bytes in place through one
 * cached DataView: no allocation per cycle, and nothing but values can ever change, which is what
 * B-Human's cached offsets and the `read_exact(896)` clients (HULKs, nidhogg) need (lola.md §7).
 *
 * Encodings (lola.md §4.2): fixmap(13); fixstr keys; array16 for the 25-element arrays, fixarray
 * otherwise; every number float32 (`0xca` + 4 bytes big-endian) **including 0.0 and 1.0**; Status
 * as positive fixint; RobotConfig as four fixstr of 20, 5, 20 and 5 characters.
 *
 * Pure: no I/O, browser-safe. Allocates in the constructor only.
 */
import { LOLA_ID_CHARS, LOLA_ROBOT_CONFIG_CHARS, LOLA_SENSOR_KEYS, LOLA_SENSOR_MESSAGE_BYTES, LOLA_VERSION_CHARS, type LolaSensorEncoding, MP } from "./constants.js";

/**
 * The values the writer reads, in LoLA's order and units. `NaoState` (src/bodies/nao/state.ts)
 * satisfies this structurally; a missing element is written as NaN (float) or 0 (Status), so a
 * short array can never change the layout.
 */
export interface LolaSensorValues {
  readonly stiffness: ArrayLike<number>;
  readonly position: ArrayLike<number>;
  readonly temperature: ArrayLike<number>;
  readonly current: ArrayLike<number>;
  readonly battery: ArrayLike<number>;
  readonly accelerometer: ArrayLike<number>;
  readonly gyroscope: ArrayLike<number>;
  readonly angles: ArrayLike<number>;
  readonly sonar: ArrayLike<number>;
  readonly fsr: ArrayLike<number>;
  readonly status: ArrayLike<number>;
  readonly touch: ArrayLike<number>;
}

/** RobotConfig's four strings (lola.md §4.1). */
export interface LolaRobotConfig {
  /** Body id ("BodyId"), exactly 20 characters, e.g. "P0000073A07S94700012". */
  readonly bodyId: string;
  /** Body version, exactly 5 characters starting with a digit, e.g. "6.0.0". */
  readonly bodyVersion: string;
  /** Head id ("FullHeadId"), exactly 20 characters. */
  readonly headId: string;
  /** Head version, exactly 5 characters starting with a digit. */
  readonly headVersion: string;
}

/** What the Webots LoLA server sends when it knows nothing better (lola.md §4.1). */
export const DEFAULT_LOLA_ROBOT_CONFIG: LolaRobotConfig = Object.freeze({
  bodyId: "P0000000000000000000",
  bodyVersion: "6.0.0",
  headId: "P0000000000000000000",
  headVersion: "6.0.0",
});

/** A RobotConfig string that cannot be sent without changing the message size. Start-up error. */
export class LolaConfigError extends Error {
  constructor(
    readonly field: keyof LolaRobotConfig,
    readonly value: string,
    reason: string,
  ) {
    super(`LoLA RobotConfig ${field} ${JSON.stringify(value)} ${reason}`);
    this.name = "LolaConfigError";
  }
}

export interface NormalizeRobotConfigOptions {
  /**
   * Pad strings shorter than their fixed length with trailing spaces (ids to 20, versions to 5),
   * and report each padding in `notes`. With false, a short string is an error. Defaults to true.
   * Longer strings are always an error: cutting an id would silently name another robot.
   */
  readonly padShort?: boolean;
}

const FIELDS: readonly (keyof LolaRobotConfig)[] = ["bodyId", "bodyVersion", "headId", "headVersion"];

/**
 * Check (and by default pad) the RobotConfig strings so the message stays 896 bytes. Missing
 * fields take the defaults. Throws {@link LolaConfigError} with the field, the value and what to
 * change. Prepare side (allocates).
 */
export function normalizeLolaRobotConfig(input: Partial<LolaRobotConfig> = {}, opts: NormalizeRobotConfigOptions = {}): { config: LolaRobotConfig; notes: string[] } {
  const pad = opts.padShort ?? true;
  const notes: string[] = [];
  const out: Record<keyof LolaRobotConfig, string> = { ...DEFAULT_LOLA_ROBOT_CONFIG };
  for (let i = 0; i < FIELDS.length; i++) {
    const field = FIELDS[i]!;
    const want = LOLA_ROBOT_CONFIG_CHARS[i]!;
    const raw = input[field];
    if (raw === undefined) continue;
    if (typeof raw !== "string") throw new LolaConfigError(field, String(raw), "must be a string");
    if (raw.length === 0) throw new LolaConfigError(field, raw, "is empty");
    if (!/^[\x20-\x7e]*$/.test(raw)) {
      throw new LolaConfigError(field, raw, "must be printable ASCII (one byte per character), or the message size would change");
    }
    const isVersion = want === LOLA_VERSION_CHARS;
    if (isVersion && !/^[0-9]/.test(raw)) {
      throw new LolaConfigError(field, raw, "must start with a digit (HULKs reads the first character as the major version)");
    }
    if (raw.length > want) {
      throw new LolaConfigError(field, raw, `is ${raw.length} characters; LoLA clients need exactly ${want} (set a shorter value in the robot config)`);
    }
    if (raw.length < want) {
      if (!pad) throw new LolaConfigError(field, raw, `is ${raw.length} characters; LoLA clients need exactly ${want}`);
      notes.push(`RobotConfig ${field} ${JSON.stringify(raw)} padded with spaces to ${want} characters`);
      out[field] = raw.padEnd(want, " ");
    } else {
      out[field] = raw;
    }
  }
  return { config: out, notes };
}

/** Where one key sits in the message. Offsets are byte offsets from the start of the message. */
export interface LolaFieldLayout {
  readonly key: string;
  readonly encoding: LolaSensorEncoding;
  readonly count: number;
  /** Offset of the key's fixstr byte. */
  readonly keyOffset: number;
  /** Offset of the value's array header. */
  readonly valueOffset: number;
  /**
   * Offset of each element's data: for f32, the 4 big-endian bytes after `0xca`; for fixint, the
   * byte itself; for fixstr, the first character after the fixstr byte.
   */
  readonly elementOffsets: readonly number[];
  /** Key plus value, bytes. */
  readonly bytes: number;
}

/**
 * Offset of each key's first value byte(s), from the key table alone: RobotConfig, the only entry
 * whose bytes depend on the robot, comes last, so every value offset is a constant.
 */
const FIRST: Readonly<Record<string, number>> = (() => {
  const out: Record<string, number> = Object.create(null);
  let p = 1; // fixmap byte
  for (const k of LOLA_SENSOR_KEYS) {
    p += 1 + k.key.length + (k.count > 15 ? 3 : 1);
    out[k.key] = k.encoding === "f32" ? p + 1 : p;
    p += k.encoding === "f32" ? 5 * k.count : k.encoding === "fixint" ? k.count : 0;
  }
  return out;
})();
// NOTE: hot path. Module constants rather than fields: TurboFan folds them into the stores.
const AT_STIFFNESS = FIRST["Stiffness"]!;
const AT_POSITION = FIRST["Position"]!;
const AT_TEMPERATURE = FIRST["Temperature"]!;
const AT_CURRENT = FIRST["Current"]!;
const AT_BATTERY = FIRST["Battery"]!;
const AT_ACCELEROMETER = FIRST["Accelerometer"]!;
const AT_GYROSCOPE = FIRST["Gyroscope"]!;
const AT_ANGLES = FIRST["Angles"]!;
const AT_SONAR = FIRST["Sonar"]!;
const AT_FSR = FIRST["FSR"]!;
const AT_STATUS = FIRST["Status"]!;
const AT_TOUCH = FIRST["Touch"]!;

/**
 * Writes LoLA sensor messages in place. One instance per server; `write()` returns the same
 * buffer every time (borrowed: valid until the next `write()`; copy it to keep it).
 */
export class LolaSensorWriter {
  /** The message buffer, always {@link LOLA_SENSOR_MESSAGE_BYTES} long. */
  readonly bytes: Uint8Array;
  readonly layout: readonly LolaFieldLayout[];
  #robotConfig: LolaRobotConfig;
  readonly #view: DataView;

  /** Builds the template. Throws {@link LolaConfigError} unless the strings have exactly their lengths. */
  constructor(robotConfig: LolaRobotConfig = DEFAULT_LOLA_ROBOT_CONFIG) {
    // Strict here (no padding): the caller decides about padding with normalizeLolaRobotConfig.
    const { config } = normalizeLolaRobotConfig(robotConfig, { padShort: false });
    this.#robotConfig = Object.freeze({ ...config });
    const strings = [config.bodyId, config.bodyVersion, config.headId, config.headVersion];
    const b = new Uint8Array(LOLA_SENSOR_MESSAGE_BYTES);
    const layout: LolaFieldLayout[] = [];
    let p = 0;
    b[p++] = MP.FIXMAP | LOLA_SENSOR_KEYS.length; // fixmap, 13 entries
    for (const k of LOLA_SENSOR_KEYS) {
      const keyOffset = p;
      b[p++] = MP.FIXSTR | k.key.length; // fixstr key
      for (let i = 0; i < k.key.length; i++) b[p++] = k.key.charCodeAt(i);
      const valueOffset = p;
      if (k.count > 15) {
        b[p++] = MP.ARRAY16; // array 16
        b[p++] = k.count >> 8;
        b[p++] = k.count & 0xff;
      } else {
        b[p++] = MP.FIXARRAY | k.count; // fixarray
      }
      const elementOffsets: number[] = [];
      for (let i = 0; i < k.count; i++) {
        if (k.encoding === "f32") {
          b[p++] = MP.FLOAT32; // float 32
          elementOffsets.push(p);
          p += 4; // value, big-endian, written per cycle
        } else if (k.encoding === "fixint") {
          elementOffsets.push(p);
          b[p++] = 0; // positive fixint, written per cycle
        } else {
          const s = strings[i]!;
          b[p++] = MP.FIXSTR | s.length; // fixstr
          elementOffsets.push(p);
          for (let j = 0; j < s.length; j++) b[p++] = s.charCodeAt(j);
        }
      }
      layout.push(Object.freeze({ key: k.key, encoding: k.encoding, count: k.count, keyOffset, valueOffset, elementOffsets: Object.freeze(elementOffsets), bytes: p - keyOffset }));
    }
    if (p !== LOLA_SENSOR_MESSAGE_BYTES) {
      // Cannot happen with the checked strings; guards edits to the key table.
      throw new Error(`LoLA sensor template is ${p} bytes, expected ${LOLA_SENSOR_MESSAGE_BYTES}`);
    }
    this.bytes = b;
    this.layout = Object.freeze(layout);
    this.#view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    // The value offsets used by write() are module constants; the template must agree with them.
    for (const l of layout) {
      if (l.encoding !== "fixstr" && l.elementOffsets[0] !== FIRST[l.key]) {
        throw new Error(`LoLA sensor template: ${l.key} values at ${l.elementOffsets[0]}, expected ${FIRST[l.key]}`);
      }
    }
  }

  /** The RobotConfig strings every message carries. */
  get robotConfig(): LolaRobotConfig {
    return this.#robotConfig;
  }

  /**
   * Change the RobotConfig strings in place (a robot identified later, e.g. by an upstream LoLA).
   * They must have exactly the lengths of the template (20, 5, 20, 5), so the layout and the size
   * never change (B-Human caches offsets). Prepare side. Throws {@link LolaConfigError}.
   */
  setRobotConfig(robotConfig: LolaRobotConfig): void {
    const { config } = normalizeLolaRobotConfig(robotConfig, { padShort: false });
    const at = this.field("RobotConfig")!.elementOffsets;
    const strings = [config.bodyId, config.bodyVersion, config.headId, config.headVersion];
    for (let i = 0; i < 4; i++) {
      const str = strings[i]!;
      for (let j = 0; j < str.length; j++) this.bytes[at[i]! + j] = str.charCodeAt(j);
    }
    this.#robotConfig = Object.freeze({ ...config });
  }

  /** The layout entry of a key, or undefined. */
  field(key: string): LolaFieldLayout | undefined {
    return this.layout.find((l) => l.key === key);
  }

  /**
   * Overwrite the values from `s` and return the message (the writer's own buffer, borrowed).
   * Perform side: no allocation. Values are rounded to float32 (NaoState's arrays already are).
   */
  write(s: LolaSensorValues): Uint8Array {
    const v = this.#view;
    f32s(v, AT_STIFFNESS, s.stiffness, 25);
    f32s(v, AT_POSITION, s.position, 25);
    f32s(v, AT_TEMPERATURE, s.temperature, 25);
    f32s(v, AT_CURRENT, s.current, 25);
    f32s(v, AT_BATTERY, s.battery, 4);
    f32s(v, AT_ACCELEROMETER, s.accelerometer, 3);
    f32s(v, AT_GYROSCOPE, s.gyroscope, 3);
    f32s(v, AT_ANGLES, s.angles, 2);
    f32s(v, AT_SONAR, s.sonar, 2);
    f32s(v, AT_FSR, s.fsr, 8);
    f32s(v, AT_TOUCH, s.touch, 14);
    const b = this.bytes;
    const st = s.status;
    const o = AT_STATUS;
    for (let i = 0; i < 25; i++) {
      const x = st[i]!;
      // A positive fixint is 0..127: clamp (0..3 in practice) so the encoding never changes. NaN
      // stays NaN through Math.max and the byte store makes it 0; the store truncates fractions.
      b[o + i] = x > 127 ? 127 : Math.max(x, 0);
    }
    return b;
  }
}

/** Write `n` floats as float32 big-endian, 5 bytes apart (the `0xca` markers stay). */
function f32s(v: DataView, offset: number, a: ArrayLike<number>, n: number): void {
  for (let i = 0; i < n; i++) v.setFloat32(offset + i * 5, a[i]!, false);
}

/** The expected size of every entry, for docs and tests: key bytes + value bytes. */
export function lolaEntryBytes(key: string, count: number, encoding: LolaSensorEncoding): number {
  const header = count > 15 ? 3 : 1;
  const element = encoding === "f32" ? 5 : encoding === "fixint" ? 1 : 0;
  const strings = encoding === "fixstr" ? 1 + LOLA_ID_CHARS + 1 + LOLA_VERSION_CHARS + 1 + LOLA_ID_CHARS + 1 + LOLA_VERSION_CHARS : 0;
  return 1 + key.length + header + count * element + strings;
}
