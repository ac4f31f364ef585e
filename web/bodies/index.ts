/**
 * The dashboard's per-body table, keyed by the body registry (`src/bodies/registry.ts`): a mapped
 * type over `BodyKind`, so a registry body without a dashboard entry does not compile. The page
 * (main.ts) asks this table instead of switching on the body.
 */
import type { BodyKind } from "../../src/bodies/registry.js";
import type { StateMessage } from "../../src/client/index.js";
import type { DashboardBody, MessageOf } from "./common.js";
import { NAO_DASHBOARD } from "./nao.js";
import { P7_DASHBOARD } from "./p7.js";
import { TNY360_DASHBOARD } from "./tny360.js";

export type { DashboardBody, JointColumns, Limit, MessageOf } from "./common.js";

export const DASHBOARD_BODIES: { readonly [K in BodyKind]: DashboardBody<K> } = {
  nao: NAO_DASHBOARD,
  p7: P7_DASHBOARD,
  tny360: TNY360_DASHBOARD,
};

/** `m`'s body entry, typed for `m` (TypeScript cannot correlate a union's body with the table's entry). */
export function entryFor<K extends BodyKind>(m: Readonly<MessageOf<K>>): DashboardBody<K> {
  return DASHBOARD_BODIES[m.body as K] as DashboardBody<K>;
}

/** The entry of whatever body `m` is from, with `m` typed for it. */
export function withEntry<R>(m: Readonly<StateMessage>, f: <K extends BodyKind>(d: DashboardBody<K>, m: Readonly<MessageOf<K>>) => R): R {
  return f(entryFor(m as Readonly<MessageOf<BodyKind>>), m as Readonly<MessageOf<BodyKind>>);
}
