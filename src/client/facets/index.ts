/**
 * The SDK's per-body facets, keyed by the body registry (`bodies/registry.ts`): `client.nao`,
 * `client.p7`, `client.tny360`. `BodyFacets` is a `PerBody` table and `FACETS` a mapped type over
 * `BodyKind`, so a registry entry without a facet does not compile.
 *
 * Typing (`BodyClient<K>`, `RobotClient`): `connect()` resolves a union discriminated by `body`, so
 * `if (c.body === "nao") c.nao.setLeds(…)` type-checks and `c.nao` on a P7 client does not.
 * Browser-safe.
 */
import type { BodyKind, PerBody } from "../../bodies/registry.js";
import type { FacetHost } from "./host.js";
import { NaoFacet } from "./nao.js";
import { P7Facet } from "./p7.js";
import { Tny360Facet } from "./tny360.js";

export type { FacetHost } from "./host.js";
export * from "./nao.js";
export * from "./p7.js";
export * from "./tny360.js";

export type BodyFacets = PerBody<{
  nao: NaoFacet;
  p7: P7Facet;
  tny360: Tny360Facet;
}>;

export const FACETS: { readonly [K in BodyKind]: new (host: FacetHost) => BodyFacets[K] } = Object.freeze({
  nao: NaoFacet,
  p7: P7Facet,
  tny360: Tny360Facet,
});
