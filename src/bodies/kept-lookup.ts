/**
 * `table[key]` for a per-cycle caller (a state's publish): the last answer is kept, so the usual
 * call (the same key as the last) compares one string reference instead of a keyed load by a
 * variable name, which is megamorphic (V8's stub cache: ~0.8 % of the proxy's core thread when the
 * NAO publish read its link and safety codes so, docs/performance.md).
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
