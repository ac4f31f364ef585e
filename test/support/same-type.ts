/**
 * Type-level equality for checking hand-written types against schema-derived ones. Readonly-ness is
 * ignored (the SDK's types are readonly, TypeBox's Static is not); everything else must be
 * identical: the same keys, the same optional marks, the same literal unions, at every depth.
 * Types only.
 */

/** T with every array and property readonly and intersections flattened, recursively. */
export type DeepReadonly<T> = T extends readonly (infer E)[] ? readonly DeepReadonly<E>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** true when A and B are the same type up to readonly; false otherwise (never "maybe"). */
export type Same<A, B> = (<T>() => T extends DeepReadonly<A> ? 1 : 2) extends <T>() => T extends DeepReadonly<B> ? 1 : 2 ? true : false;

/** Compiles only when A and B agree: `agree<Mine, Static<typeof Schema>>(true)`. */
export function agree<A, B>(ok: Same<A, B>): Same<A, B> {
  return ok;
}
