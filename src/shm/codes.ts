/**
 * The link and safety codes a state's publish writes every cycle, looked up with the last answer
 * kept (`keptLookup`). Here, not beside the tables: src/bodies' tables import nothing (the
 * browser-safe SDK takes them as they are).
 */
import { LINK_CODE, type LinkStatus } from "../bodies/link.js";
import { SAFETY_CODE, type SafetyCode } from "../bodies/safety.js";

/**
 * `table[key]` for a per-cycle caller: the last answer is kept, so the usual call (the same key as
 * the last) compares one string reference instead of a keyed load by a variable name, which is
 * megamorphic (V8's stub cache: ~0.8 % of the proxy's core thread when the NAO publish read its
 * link and safety codes so, docs/performance.md).
 */
export function keptLookup<K extends string>(table: { readonly [P in K]: number }): (key: K) => number {
  let lastKey: K | null = null;
  let lastValue = 0;
  return (key) => {
    if (key !== lastKey) {
      lastValue = table[key];
      lastKey = key;
    }
    return lastValue;
  };
}

/** LINK_CODE[status], per cycle. */
export const linkCodeOf: (status: LinkStatus) => number = keptLookup(LINK_CODE);
/** SAFETY_CODE[code], per cycle. */
export const safetyCodeOf: (code: SafetyCode) => number = keptLookup(SAFETY_CODE);
