/**
 * The dashboard's per-body table, keyed by the body registry (`src/bodies/registry.ts`): a mapped
 * type over `BodyKind`, so a registry body without a dashboard entry does not compile. The page
 * (main.ts, teleop.ts) asks this table instead of switching on the body: each entry's parts are
 * typed for its body, and the helpers below hand them the page's client and messages typed so.
 */
import type { BodyKind } from "../../src/bodies/registry.js";
import type { BodyClient, RobotClient, StateMessage } from "../../src/client/index.js";
import type { DashboardBody, MessageOf } from "./common.js";
import { NAO_DASHBOARD } from "./nao.js";
import { P7_DASHBOARD } from "./p7.js";
import { TNY360_DASHBOARD } from "./tny360.js";

export type { BodyControls, BodyPanel, DashboardBody, JointColumns, Limit, MessageOf, SimPoseOf, SimWorld } from "./common.js";
export { messageOf } from "./common.js";

export const DASHBOARD_BODIES: { readonly [K in BodyKind]: DashboardBody<K> } = {
  nao: NAO_DASHBOARD,
  p7: P7_DASHBOARD,
  tny360: TNY360_DASHBOARD,
};

/** `kind`'s entry, typed for it (TypeScript cannot correlate a generic key with the mapped table's entry). */
export function entryOf<K extends BodyKind>(kind: K): DashboardBody<K> {
  return DASHBOARD_BODIES[kind] as DashboardBody<K>;
}

/** `m`'s body entry, typed for `m`. */
export function entryFor<K extends BodyKind>(m: Readonly<MessageOf<K>>): DashboardBody<K> {
  return entryOf(m.body as K);
}

/** The entry of the body `c` serves, with `c` and its body's kind typed for it. */
export function withClient<R>(c: RobotClient, f: <K extends BodyKind>(d: DashboardBody<K>, c: BodyClient<K>, kind: K) => R): R {
  return f(entryOf(c.body), c, c.body);
}

/** The entry of whatever body `m` is from, with `m` typed for it. */
export function withEntry<R>(m: Readonly<StateMessage>, f: <K extends BodyKind>(d: DashboardBody<K>, m: Readonly<MessageOf<K>>) => R): R {
  return f(entryFor(m as Readonly<MessageOf<BodyKind>>), m as Readonly<MessageOf<BodyKind>>);
}
