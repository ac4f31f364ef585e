/**
 * The body registry: the one list of bodies. `BodyKind`, the CLI's `--body` choices, the robot
 * API's adapters, the dashboard's switch and the client's per-body facets derive from it; the
 * per-layer tables (drivers, runtimes, adapters) are typed `Record<BodyKind, …>`, so a new body
 * that lacks an entry in one of them does not compile. Pure data (browser-safe).
 */
export const BODIES = {
  nao: { title: "NAO v6", periodMs: 12, description: "chest-board link, LoLA-compatible socket" },
  p7: { title: "AIRBOT P7 arm", periodMs: 4, description: "7-joint arm (simulated)" },
  tny360: { title: "TNY-360 quadruped", periodMs: 5, description: "binary WebSocket API, simulated or a real robot" },
} as const;

export type BodyKind = keyof typeof BODIES;
/** Every body kind, in the registry's order. */
export const BODY_KINDS = Object.keys(BODIES) as BodyKind[];

export function isBodyKind(v: unknown): v is BodyKind {
  return typeof v === "string" && Object.hasOwn(BODIES, v);
}

/** "nao, p7 or tny360": the choices as a sentence, for help texts and errors. */
export function bodyChoicesText(): string {
  return BODY_KINDS.length > 1 ? `${BODY_KINDS.slice(0, -1).join(", ")} or ${BODY_KINDS[BODY_KINDS.length - 1]}` : (BODY_KINDS[0] ?? "");
}
