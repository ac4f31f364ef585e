/**
 * Motor-board handshake answer (seed: 32 bytes = 16 status + 16 configuration). Field positions
 * inside the two halves are inferred; see docs/protocol/chestboard.md.
 *
 * configuration: u32 serial | u8 config version | u8 hardware revision | u8 board type |
 *                u8 joint count | u16 encoder counts per turn | u16 current LSB (0.1 mA) |
 *                u8 temperature step °C | 3 reserved
 */
import { Reader, Writer } from "../bytes.js";
import { HANDSHAKE } from "./constants.js";

export interface BoardConfiguration {
  /** 16 status bytes, kept raw (their meaning is not known). */
  readonly status: Uint8Array;
  /** Serial number; foot boards send 0. */
  readonly serial: number;
  readonly configVersion: number;
  readonly hardwareRevision: number;
  readonly boardType: number;
  readonly jointCount: number;
  readonly encoderCountsPerTurn: number;
  /** Joint current per count, in 0.1 mA (160 = 0.016 A). */
  readonly currentLsbDeciMa: number;
  readonly temperatureStepC: number;
}

export const CONFIG_ANSWER_BYTES = HANDSHAKE.STATUS_BYTES + HANDSHAKE.CONFIG_BYTES;

export function encodeBoardConfiguration(c: BoardConfiguration, into = new Uint8Array(CONFIG_ANSWER_BYTES)): Uint8Array {
  if (c.status.length !== HANDSHAKE.STATUS_BYTES) throw new RangeError(`status must be ${HANDSHAKE.STATUS_BYTES} bytes`);
  const w = new Writer(into);
  w.bytesFrom(c.status);
  w.u32(c.serial).u8(c.configVersion).u8(c.hardwareRevision).u8(c.boardType).u8(c.jointCount);
  w.u16(c.encoderCountsPerTurn).u16(c.currentLsbDeciMa).u8(c.temperatureStepC).u8(0).u8(0).u8(0);
  return into;
}

/** Decode the 32 answer bytes, or null when there are not exactly 32. */
export function decodeBoardConfiguration(bytes: Uint8Array): BoardConfiguration | null {
  if (bytes.length !== CONFIG_ANSWER_BYTES) return null;
  const r = new Reader(bytes);
  const status = r.bytesCopy(HANDSHAKE.STATUS_BYTES);
  return {
    status,
    serial: r.u32(),
    configVersion: r.u8(),
    hardwareRevision: r.u8(),
    boardType: r.u8(),
    jointCount: r.u8(),
    encoderCountsPerTurn: r.u16(),
    currentLsbDeciMa: r.u16(),
    temperatureStepC: r.u8(),
  };
}
