/**
 * A LoLA command message writer, the client side of lola.md §5: a fixmap of the chosen keys,
 * fixstr keys, fixarray/array16 headers, every number float32 (`0xca`, whole values included) and
 * `Sonar` as two booleans. With all 11 keys the message is 786 bytes; without Sonar, 777.
 *
 * The server does not need it; the example client, the tests and the benchmarks do, and TypeScript
 * LoLA clients can use it. Like B-Human's writer, it builds the message once and then overwrites
 * values in place: `set*()` and `bytes` never allocate.
 *
 * Pure: no I/O, browser-safe. Allocates in the constructor only.
 */
import { LOLA_COMMAND_KEY_BY_NAME, LOLA_COMMAND_KEYS, type LolaCommandKeyName, MP } from "./constants.js";

/** nidhogg's key order, all 11 keys. */
export const LOLA_COMMAND_KEY_ORDER: readonly LolaCommandKeyName[] = LOLA_COMMAND_KEYS.map((k) => k.key);

const TRUE = 0xc3; // true
const FALSE = 0xc2; // false

export class LolaCommandWriter {
  /** The whole message; borrowed, overwritten by the setters. */
  readonly bytes: Uint8Array;
  readonly keys: readonly LolaCommandKeyName[];
  readonly #view: DataView;
  /** Offset of the first element's data per key (after `0xca` for floats, the bool byte for Sonar). */
  readonly #first: Record<string, number> = Object.create(null);

  /**
   * @param keys which keys to send, in this order (any subset, no duplicates). Defaults to all 11
   *   in nidhogg's order. Values start at 0 (stiffness 0: nothing driven) and sonar on.
   */
  constructor(keys: readonly LolaCommandKeyName[] = LOLA_COMMAND_KEY_ORDER) {
    if (keys.length === 0 || keys.length > 15) throw new RangeError("a LoLA command has 1 to 11 keys");
    if (new Set(keys).size !== keys.length) throw new RangeError(`duplicate command key in ${keys.join(", ")}`);
    let size = 1;
    for (const k of keys) {
      const spec = LOLA_COMMAND_KEY_BY_NAME[k];
      if (!spec) throw new RangeError(`unknown LoLA command key ${JSON.stringify(k)}`);
      size += 1 + k.length + (spec.count > 15 ? 3 : 1) + spec.count * (spec.type === "bool" ? 1 : 5);
    }
    const b = new Uint8Array(size);
    let p = 0;
    b[p++] = MP.FIXMAP | keys.length; // fixmap
    for (const k of keys) {
      const spec = LOLA_COMMAND_KEY_BY_NAME[k]!;
      b[p++] = MP.FIXSTR | k.length; // fixstr key
      for (let i = 0; i < k.length; i++) b[p++] = k.charCodeAt(i);
      if (spec.count > 15) {
        b[p++] = MP.ARRAY16; // array 16
        b[p++] = spec.count >> 8;
        b[p++] = spec.count & 0xff;
      } else {
        b[p++] = MP.FIXARRAY | spec.count; // fixarray
      }
      if (spec.type === "bool") {
        this.#first[k] = p;
        for (let i = 0; i < spec.count; i++) b[p++] = TRUE; // sonar on by default
      } else {
        this.#first[k] = p + 1;
        for (let i = 0; i < spec.count; i++) {
          b[p] = MP.FLOAT32; // float 32, value 0.0
          p += 5;
        }
      }
    }
    this.bytes = b;
    this.keys = Object.freeze([...keys]);
    this.#view = new DataView(b.buffer);
  }

  /** Set a float key's values (float32, whole values included). Throws on an absent key or wrong length. */
  setFloats(key: Exclude<LolaCommandKeyName, "Sonar">, values: ArrayLike<number>): this {
    const o = this.#first[key];
    const spec = LOLA_COMMAND_KEY_BY_NAME[key];
    if (o === undefined || !spec) throw new RangeError(`this writer has no ${key} key`);
    if (values.length !== spec.count) throw new RangeError(`${key} needs ${spec.count} values, got ${values.length}`);
    for (let i = 0; i < spec.count; i++) this.#view.setFloat32(o + i * 5, values[i]!, false);
    return this;
  }

  /**
   * Where `key`'s values are: the offset in `bytes` of its first float32's payload (after the 0xca
   * marker), each next value 5 bytes on; Sonar's first boolean. For a caller that writes a command
   * in place every cycle through its own view of `bytes`, with no lookup by name. Throws on an absent key.
   */
  valuesAt(key: LolaCommandKeyName): number {
    const o = this.#first[key];
    if (o === undefined) throw new RangeError(`this writer has no ${key} key`);
    return o;
  }

  /** Set one float of a key. */
  setFloat(key: Exclude<LolaCommandKeyName, "Sonar">, index: number, value: number): this {
    const o = this.#first[key];
    const spec = LOLA_COMMAND_KEY_BY_NAME[key];
    if (o === undefined || !spec) throw new RangeError(`this writer has no ${key} key`);
    if (!(index >= 0 && index < spec.count)) throw new RangeError(`${key} index ${index} out of 0..${spec.count - 1}`);
    this.#view.setFloat32(o + index * 5, value, false);
    return this;
  }

  setSonar(left: boolean, right: boolean): this {
    const o = this.#first["Sonar"];
    if (o === undefined) throw new RangeError("this writer has no Sonar key");
    this.bytes[o] = left ? TRUE : FALSE;
    this.bytes[o + 1] = right ? TRUE : FALSE;
    return this;
  }
}
