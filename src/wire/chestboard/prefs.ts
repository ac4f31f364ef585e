/**
 * The chest board's preference block (seed: 4,635 bytes, read in 32-byte pieces, checked with a
 * CRC, typed key-value pairs). The byte layout is inferred and defined here once:
 *
 *   0     4  magic "PREF"
 *   4   u16  format version (1)
 *   6   u16  entry count
 *   8        entries: u8 type, u8 key length, key (ASCII), value (by type)
 *   …        zero padding
 *   4631 u32 CRC-32 of bytes [0, 4631)
 *
 * Value encodings: F32 4 bytes, I32 4, U32 4, U16 2, Str u8 length + bytes. Little-endian.
 * Pure; `decodePreferenceBlock` never throws on bad bytes, it reports.
 */
import { Reader, Writer } from "../bytes.js";
import { crc32 } from "../crc32.js";
import { PREFS } from "./constants.js";

export const PREF_MAGIC = "PREF";
export const PREF_FORMAT_VERSION = 1;
export const PREF_CRC_OFFSET = PREFS.BLOCK_BYTES - 4;

export enum PrefType {
  F32 = 1,
  I32 = 2,
  U32 = 3,
  U16 = 4,
  Str = 5,
}

export type PrefValue = number | string;

export interface PrefEntry {
  readonly key: string;
  readonly type: PrefType;
  readonly value: PrefValue;
}

export type DecodedPrefs =
  | { readonly ok: true; readonly entries: PrefEntry[]; readonly crc: number }
  | { readonly ok: false; readonly reason: string; readonly storedCrc: number; readonly computedCrc: number };

/** Encode entries into a full 4,635-byte block with its CRC (the simulator's flash image). */
export function encodePreferenceBlock(entries: readonly PrefEntry[]): Uint8Array {
  const block = new Uint8Array(PREFS.BLOCK_BYTES);
  const w = new Writer(block.subarray(0, PREF_CRC_OFFSET));
  for (let i = 0; i < 4; i++) w.u8(PREF_MAGIC.charCodeAt(i));
  w.u16(PREF_FORMAT_VERSION).u16(entries.length);
  const enc = new TextEncoder();
  for (const e of entries) {
    const key = enc.encode(e.key);
    if (key.length > 255) throw new RangeError(`preference key too long: ${e.key}`);
    w.u8(e.type).u8(key.length).bytesFrom(key);
    switch (e.type) {
      case PrefType.F32:
        w.f32(e.value as number);
        break;
      case PrefType.I32:
        w.i32(e.value as number);
        break;
      case PrefType.U32:
        w.u32(e.value as number);
        break;
      case PrefType.U16:
        w.u16(e.value as number);
        break;
      case PrefType.Str: {
        const s = enc.encode(e.value as string);
        if (s.length > 255) throw new RangeError(`preference string too long: ${e.key}`);
        w.u8(s.length).bytesFrom(s);
        break;
      }
    }
  }
  const c = crc32(block, 0, PREF_CRC_OFFSET);
  new DataView(block.buffer).setUint32(PREF_CRC_OFFSET, c, true);
  return block;
}

/** Decode a block; checks length, CRC, magic and every entry. Never throws. */
export function decodePreferenceBlock(block: Uint8Array): DecodedPrefs {
  if (block.length !== PREFS.BLOCK_BYTES) {
    return { ok: false, reason: `preference block is ${block.length} bytes, expected ${PREFS.BLOCK_BYTES}`, storedCrc: 0, computedCrc: 0 };
  }
  const stored = new DataView(block.buffer, block.byteOffset, block.byteLength).getUint32(PREF_CRC_OFFSET, true);
  const computed = crc32(block, 0, PREF_CRC_OFFSET);
  if (stored !== computed) {
    return { ok: false, reason: `CRC mismatch: stored ${hex32(stored)}, computed ${hex32(computed)}`, storedCrc: stored, computedCrc: computed };
  }
  const bad = (reason: string): DecodedPrefs => ({ ok: false, reason, storedCrc: stored, computedCrc: computed });
  const r = new Reader(block, 0, PREF_CRC_OFFSET);
  const dec = new TextDecoder();
  try {
    const magic = dec.decode(r.bytesView(4));
    if (magic !== PREF_MAGIC) return bad(`bad magic ${JSON.stringify(magic)}`);
    const version = r.u16();
    if (version !== PREF_FORMAT_VERSION) return bad(`unknown format version ${version}`);
    const count = r.u16();
    const entries: PrefEntry[] = [];
    for (let i = 0; i < count; i++) {
      const at = r.offset;
      const type = r.u8() as PrefType;
      const key = dec.decode(r.bytesView(r.u8()));
      let value: PrefValue;
      switch (type) {
        case PrefType.F32:
          value = r.f32();
          break;
        case PrefType.I32:
          value = r.i32();
          break;
        case PrefType.U32:
          value = r.u32();
          break;
        case PrefType.U16:
          value = r.u16();
          break;
        case PrefType.Str:
          value = dec.decode(r.bytesView(r.u8()));
          break;
        default:
          return bad(`entry ${i} at offset ${at}: unknown type ${type}`);
      }
      entries.push({ key, type, value });
    }
    return { ok: true, entries, crc: stored };
  } catch (e) {
    return bad(`entries run past the end of the block: ${(e as Error).message}`);
  }
}

/** Offset and length of preference piece `i` (0..144; the last is 27 bytes). */
export function prefPiece(i: number): { offset: number; length: number } {
  const offset = i * PREFS.PIECE_BYTES;
  return { offset, length: Math.min(PREFS.PIECE_BYTES, PREFS.BLOCK_BYTES - offset) };
}

function hex32(v: number): string {
  return `0x${v.toString(16).padStart(8, "0")}`;
}
