/**
 * LoLA's protocol table: the one place that names the sensor keys, the command keys, their sizes
 * and encodings, and the message sizes (docs/lola.md). The sensor writer,
 * the command reader, the server, the docs (docs/lola.md) and the tests all read this table.
 *
 * Pure data, no I/O, browser-safe. Nothing here allocates after module load.
 */

/** The Unix stream socket real LoLA serves on the robot (lola.md §2). */
export const LOLA_SOCKET_PATH = "/tmp/robocup";
/** One sensor message per 12 ms cycle, about 83 Hz (lola.md §3). */
export const LOLA_CYCLE_MS = 12;
/** Every sensor message is exactly this long (lola.md §2, §4.2); clients `read_exact` it. */
export const LOLA_SENSOR_MESSAGE_BYTES = 896;
/** A command map with all 11 keys, float32 values and true booleans (lola.md §5.3). */
export const LOLA_FULL_COMMAND_BYTES = 786;
/** B-Human's 10-key command map without Sonar (lola.md §5.3). */
export const LOLA_COMMAND_WITHOUT_SONAR_BYTES = 777;

/** Body and head ids in RobotConfig: HULKs converts them into `[u8; 20]` (lola.md §4.1, §7 #4). */
export const LOLA_ID_CHARS = 20;
/** Body and head versions in RobotConfig, e.g. "6.0.0"; the first character must be a digit. */
export const LOLA_VERSION_CHARS = 5;

/** How a sensor value is encoded. */
export type LolaSensorEncoding =
  /** Every element is float32 (`0xca` + 4 bytes big-endian), whole values included. */
  | "f32"
  /** Every element is a positive fixint (one byte, 0..127). */
  | "fixint"
  /** Every element is a fixstr of a fixed length (RobotConfig). */
  | "fixstr";

/** Which NaoState-like field feeds a sensor key (see `LolaSensorValues` in sensor-message.ts). */
export type LolaSensorField = "stiffness" | "position" | "temperature" | "current" | "battery" | "accelerometer" | "gyroscope" | "angles" | "sonar" | "fsr" | "status" | "touch" | "robotConfig";

export interface LolaSensorKey {
  readonly key: string;
  readonly count: number;
  readonly encoding: LolaSensorEncoding;
  readonly field: LolaSensorField;
}

/**
 * The 13 sensor keys **in the order bodylink writes them**. Real LoLA's order is unknown (lola.md
 * §4.2, §10); this is the Webots LoLA server's order, the only concrete sample, so its offsets
 * match the table in lola.md §4.2. Any order gives 896 bytes; what matters is that it never
 * changes between cycles (B-Human caches offsets from the first packet).
 */
export const LOLA_SENSOR_KEYS: readonly LolaSensorKey[] = [
  { key: "Stiffness", count: 25, encoding: "f32", field: "stiffness" }, // 0..1, LoLA joint order
  { key: "Position", count: 25, encoding: "f32", field: "position" }, // rad (hands 0..1)
  { key: "Temperature", count: 25, encoding: "f32", field: "temperature" }, // °C
  { key: "Current", count: 25, encoding: "f32", field: "current" }, // A
  { key: "Battery", count: 4, encoding: "f32", field: "battery" }, // charge, status, current, temperature
  { key: "Accelerometer", count: 3, encoding: "f32", field: "accelerometer" }, // m/s², x y z
  { key: "Gyroscope", count: 3, encoding: "f32", field: "gyroscope" }, // rad/s, x y z
  { key: "Angles", count: 2, encoding: "f32", field: "angles" }, // rad, x y
  { key: "Sonar", count: 2, encoding: "f32", field: "sonar" }, // m, left right
  { key: "FSR", count: 8, encoding: "f32", field: "fsr" }, // kg, LFoot FL FR RL RR, RFoot FL FR RL RR
  { key: "Status", count: 25, encoding: "fixint", field: "status" }, // 0..3 joint temperature status
  { key: "Touch", count: 14, encoding: "f32", field: "touch" }, // 0 or 1, lola.md §4.5
  { key: "RobotConfig", count: 4, encoding: "fixstr", field: "robotConfig" }, // body id, body version, head id, head version
];

/** The RobotConfig string lengths, in order: body id, body version, head id, head version. */
export const LOLA_ROBOT_CONFIG_CHARS: readonly number[] = [LOLA_ID_CHARS, LOLA_VERSION_CHARS, LOLA_ID_CHARS, LOLA_VERSION_CHARS];

/** How a command value must look. */
export type LolaCommandType = "float" | "bool";

export interface LolaCommandKey {
  readonly key: LolaCommandKeyName;
  readonly count: number;
  /** "float": numbers (float32/float64, and integers are accepted too); "bool": booleans (0/1 accepted). */
  readonly type: LolaCommandType;
}

export type LolaCommandKeyName = "Position" | "Stiffness" | "Chest" | "LEar" | "REar" | "LEye" | "REye" | "LFoot" | "RFoot" | "Skull" | "Sonar";

/**
 * The 11 command keys (lola.md §5.1). Clients send any subset in any order (lola.md §5.3, §7 #7,
 * #8, #10); the reader looks them up by name. Listed here in nidhogg's order.
 */
export const LOLA_COMMAND_KEYS: readonly LolaCommandKey[] = [
  { key: "Position", count: 25, type: "float" }, // rad, LoLA joint order
  { key: "Stiffness", count: 25, type: "float" }, // 0..1, LoLA joint order
  { key: "REar", count: 10, type: "float" }, // segments 324°, 288°, …, 0°
  { key: "LEar", count: 10, type: "float" }, // segments 0°, 36°, …, 324°
  { key: "Chest", count: 3, type: "float" }, // R G B
  { key: "LEye", count: 24, type: "float" }, // R×8 G×8 B×8, 45°, 0°, 315°, …, 90°
  { key: "REye", count: 24, type: "float" }, // R×8 G×8 B×8, 0°, 45°, …, 315°
  { key: "LFoot", count: 3, type: "float" }, // R G B
  { key: "RFoot", count: 3, type: "float" }, // R G B
  { key: "Skull", count: 12, type: "float" }, // lola.md §5.2
  { key: "Sonar", count: 2, type: "bool" }, // left, right enable
];

/** Command keys by name, for lookups by name (null prototype: no `__proto__` surprises). */
export const LOLA_COMMAND_KEY_BY_NAME: Readonly<Record<string, LolaCommandKey | undefined>> = (() => {
  const o: Record<string, LolaCommandKey> = Object.create(null);
  for (const k of LOLA_COMMAND_KEYS) o[k.key] = k;
  return o;
})();

/**
 * The largest command message the reader buffers before it gives up on a client. A full command
 * is 786 bytes; float64 values would make it about 1.4 KiB. 64 KiB leaves room for anything a
 * real client sends and bounds what a broken one can make us hold.
 */
export const LOLA_MAX_COMMAND_BYTES = 64 * 1024;

/** MessagePack bytes the writer uses, named (msgpack spec "formats"). */
export const MP = {
  FIXMAP: 0x80, // fixmap, low nibble = entry count
  FIXARRAY: 0x90, // fixarray, low nibble = element count
  FIXSTR: 0xa0, // fixstr, low 5 bits = byte length
  FLOAT32: 0xca, // float 32, 4 bytes big-endian follow
  ARRAY16: 0xdc, // array 16, 2 bytes big-endian count follow
  POSITIVE_FIXINT_MAX: 0x7f, // positive fixint 0..127 is the byte itself
} as const;

/** What a MessagePack length field counts (`MP_HEAD.lengthCounts`). */
export const MP_LENGTH = { BYTES: 0, ITEMS: 1, PAIRS: 2 } as const;

/**
 * Every MessagePack type byte's head, as tables indexed by the byte (the readers walk values with
 * them, allocation-free):
 * - `headBytes`: the type byte plus its length field (1, 2, 3 or 5); 0 for a byte LoLA's
 *   old-spec dialect never sends (0xc1, and the extension types 0xc7–0xc9, 0xd4–0xd8);
 * - `fixedBytes`: payload bytes the type byte itself fixes (fixstr length, number widths);
 * - `fixedItems`: child values it fixes (fixarray n, fixmap 2n);
 * - `lengthCounts`: for a length field, what it counts (MP_LENGTH).
 */
export const MP_HEAD = ((): {
  readonly headBytes: Uint8Array;
  readonly fixedBytes: Uint8Array;
  readonly fixedItems: Uint8Array;
  readonly lengthCounts: Uint8Array;
} => {
  const headBytes = new Uint8Array(256);
  const fixedBytes = new Uint8Array(256);
  const fixedItems = new Uint8Array(256);
  const lengthCounts = new Uint8Array(256);
  const set = (t: number, head: number, bytes = 0, counts: number = MP_LENGTH.BYTES): void => {
    headBytes[t] = head;
    fixedBytes[t] = bytes;
    lengthCounts[t] = counts;
  };
  for (let t = 0x00; t <= 0x7f; t++) set(t, 1); // positive fixint
  for (let t = 0xe0; t <= 0xff; t++) set(t, 1); // negative fixint
  for (let t = 0x80; t <= 0x8f; t++) {
    set(t, 1); // fixmap
    fixedItems[t] = 2 * (t & 0x0f);
  }
  for (let t = 0x90; t <= 0x9f; t++) {
    set(t, 1); // fixarray
    fixedItems[t] = t & 0x0f;
  }
  for (let t = 0xa0; t <= 0xbf; t++) set(t, 1, t & 0x1f); // fixstr
  for (const t of [0xc0, 0xc2, 0xc3]) set(t, 1); // nil, false, true
  set(0xc4, 2); // bin 8
  set(0xd9, 2); // str 8
  set(0xc5, 3); // bin 16
  set(0xda, 3); // str 16
  set(0xc6, 5); // bin 32
  set(0xdb, 5); // str 32
  set(0xdc, 3, 0, MP_LENGTH.ITEMS); // array 16
  set(0xdd, 5, 0, MP_LENGTH.ITEMS); // array 32
  set(0xde, 3, 0, MP_LENGTH.PAIRS); // map 16
  set(0xdf, 5, 0, MP_LENGTH.PAIRS); // map 32
  for (const t of [0xcc, 0xd0]) set(t, 1, 1); // uint 8, int 8
  for (const t of [0xcd, 0xd1]) set(t, 1, 2); // uint 16, int 16
  for (const t of [0xca, 0xce, 0xd2]) set(t, 1, 4); // float 32, uint 32, int 32
  for (const t of [0xcb, 0xcf, 0xd3]) set(t, 1, 8); // float 64, uint 64, int 64
  return { headBytes, fixedBytes, fixedItems, lengthCounts };
})();
