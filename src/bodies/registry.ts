/**
 * The body registry: the one list of bodies. `BodyKind`, the CLI's `--body` choices, the robot
 * API's adapters, the dashboard's switch and the client's per-body facets derive from it; the
 * per-layer tables (drivers, runtimes, adapters) are typed `Record<BodyKind, …>`, so a new body
 * that lacks an entry in one of them does not compile. Pure data (browser-safe). `safeStop` says
 * in words what the body's safe state is (serve prints it on shutdown).
 */
export const BODIES = {
  nao: { title: "NAO v6", periodMs: 12, description: "chest-board link, LoLA-compatible socket", safeStop: "stiffness off" },
  p7: { title: "AIRBOT P7 arm", periodMs: 4, description: "7-joint arm (simulated)", safeStop: "joints stopped where they are" },
  tny360: { title: "TNY-360 quadruped", periodMs: 5, description: "binary WebSocket API, simulated or a real robot", safeStop: "velocity to zero, joints hold their pose" },
} as const;

export type BodyKind = keyof typeof BODIES;
/** Every body kind, in the registry's order. */
export const BODY_KINDS = Object.keys(BODIES) as BodyKind[];

/**
 * A per-body type table (`PerBody<{ nao: …; p7: …; tny360: … }>`): compiles only with exactly the
 * registry's keys, so adding a body makes every such table name its entry.
 */
export type PerBody<T extends { readonly [K in BodyKind]: unknown } & { readonly [K in Exclude<keyof T, BodyKind>]: never }> = T;

/** A per-body value table: one entry per registry body, no others (`{ [K in BodyKind]: … }`). */
export type BodyTable<V> = { readonly [K in BodyKind]: V };

/** A value table built from the registry itself (one entry per body, in the registry's order). */
export function bodyTable<V>(f: (kind: BodyKind) => V): BodyTable<V> {
  return Object.freeze(Object.fromEntries(BODY_KINDS.map((k) => [k, f(k)]))) as BodyTable<V>;
}

export function isBodyKind(v: unknown): v is BodyKind {
  return typeof v === "string" && Object.hasOwn(BODIES, v);
}

/** "nao, p7 or tny360": the choices as a sentence, for help texts and errors. */
export function bodyChoicesText(): string {
  return BODY_KINDS.length > 1 ? `${BODY_KINDS.slice(0, -1).join(", ")} or ${BODY_KINDS[BODY_KINDS.length - 1]}` : (BODY_KINDS[0] ?? "");
}
