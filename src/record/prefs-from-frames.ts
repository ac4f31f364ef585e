/**
 * Rebuild the chest board's preference block from answer frames seen on the wire (a recording's
 * `/nao/chestboard/in`, or a usbmon capture of HAL reading it): every PrefData message carries
 * its offset, so the pieces can be put together in any order, retries included. Prepare side.
 */
import { Kind, PREFS } from "../wire/chestboard/constants.js";
import { decodeFrame } from "../wire/chestboard/frame.js";
import { decodePreferenceBlock } from "../wire/chestboard/prefs.js";

export class PreferenceAssembler {
  readonly block = new Uint8Array(PREFS.BLOCK_BYTES);
  readonly #have = new Uint8Array(PREFS.BLOCK_BYTES);
  #missing: number = PREFS.BLOCK_BYTES;

  /** Look for preference pieces in one answer frame. Returns true once the block is complete. */
  push(frame: Uint8Array, length = frame.length): boolean {
    if (this.#missing === 0) return true;
    const d = decodeFrame(frame, length);
    if (!d.ok) return false;
    for (const m of d.messages) {
      if (m.kind !== Kind.PrefData || m.payload.length < 2) continue;
      const offset = m.payload[0]! | (m.payload[1]! << 8);
      const data = m.payload.subarray(2);
      if (offset + data.length > PREFS.BLOCK_BYTES) continue;
      this.block.set(data, offset);
      for (let i = 0; i < data.length; i++) {
        if (!this.#have[offset + i]) {
          this.#have[offset + i] = 1;
          this.#missing--;
        }
      }
    }
    return this.#missing === 0;
  }

  get complete(): boolean {
    return this.#missing === 0;
  }

  /** The block when every byte was seen and its CRC checks, else null. */
  result(): Uint8Array | null {
    if (this.#missing !== 0) return null;
    return decodePreferenceBlock(this.block).ok ? this.block.slice() : null;
  }
}
