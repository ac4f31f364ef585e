/**
 * The robot API's adapter per body, keyed by the body registry (`bodies/registry.ts`). Typed as a
 * mapped type over `BodyKind`: a registry entry without an adapter here does not compile, and each
 * factory receives its own body's runtime object (`ApiRobots[K]`).
 */
import type { BodyKind } from "../../../bodies/registry.js";
import type { BodyAdapter } from "../adapter.js";
import type { ApiRobots } from "../routes/context.js";
import { NaoAdapter } from "./nao.js";
import { P7Adapter } from "./p7.js";
import { Tny360Adapter } from "./tny360.js";

export type AdapterFactory<K extends BodyKind> = (robot: ApiRobots[K]) => BodyAdapter;

export const ADAPTERS: { readonly [K in BodyKind]: AdapterFactory<K> } = Object.freeze({
  nao: (robot) => new NaoAdapter(robot),
  p7: (robot) => new P7Adapter(robot),
  tny360: (robot) => new Tny360Adapter(robot),
});

/** The adapter for body `kind` (generic, so the factory and the robot agree without a cast). */
export function adapterOf<K extends BodyKind>(kind: K, robot: ApiRobots[K]): BodyAdapter {
  const make: AdapterFactory<K> = ADAPTERS[kind];
  return make(robot);
}
