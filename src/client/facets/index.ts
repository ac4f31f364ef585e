/**
 * The SDK's per-body facets, keyed by the body registry (`bodies/registry.ts`): `client.nao`,
 * `client.p7`, `client.tny360`. `BodyFacets` is a `PerBody` table and `FACETS` a mapped type over
 * `BodyKind`, so a registry entry without a facet does not compile.
 *
 * Typing (`BodyClient<K>`, `RobotClient`): `connect()` resolves a union discriminated by `body`, so
 * `if (c.body === "nao") c.nao.setLeds(…)` type-checks and `c.nao` on a P7 client does not; the
 * client's older flat methods (`c.setLeds`, deprecated) are typed `never` on the bodies that lack
 * them. Browser-safe.
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

/**
 * The bodies each deprecated flat method of `BodylinkClient` belongs to (its facet has the same
 * method). On a client typed for another body, the flat method is `never`: calling it does not
 * type-check (at run time it fails with `BL_ERR_CLIENT_NOT_THIS_BODY`, or returns null for the
 * NAO getters, as before).
 */
export interface FlatMethodBodies {
  getBatteryState: "nao";
  getTouchState: "nao";
  getFootState: "nao";
  getSonarState: "nao";
  getHeadState: "nao";
  fetchPreferences: "nao";
  fetchBoards: "nao";
  setLeds: "nao";
  setSonar: "nao";
  setJointTargets: "nao" | "tny360";
  smoothEnable: "nao" | "tny360";
  smoothDisable: "nao" | "tny360";
  moveJoints: "p7";
  servoJoints: "p7";
  clearError: "p7";
  setVelocity: "tny360";
  setPosture: "tny360";
  setEnabledMask: "tny360";
  setGait: "tny360";
  setJointTarget: "tny360";
  setLegPosition: "tny360";
}

/** The flat methods a `K` client does not have, typed never. */
export type NotOn<K extends BodyKind> = { readonly [M in keyof FlatMethodBodies as K extends FlatMethodBodies[M] ? never : M]: never };
