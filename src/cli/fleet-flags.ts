/**
 * The fleet's connection from the flags `serve --fleet` and `bodylink fleet …` share (declared in
 * serve-command.ts): the broker's URL, the credentials (secrets may come from the environment
 * instead of argv) and the --fleet-dir identity bundle. Apart from serve.ts so `bodylink fleet`
 * loads none of the servers.
 */
import { inboxPrefixOf } from "../fleet/broker-config.js";
import type { FleetConnectOptions } from "../fleet/connect.js";
import { type FleetBundle, loadBundle } from "../fleet/roster.js";
import { DEFAULT_FLEET_URL } from "../fleet/subjects.js";
import type { ServeOptions } from "./serve-options.js";

/** The fleet connection options from serve's flags (secrets may come from the environment instead of argv). */
export type FleetFlags = Pick<ServeOptions, "fleet" | "fleetUser" | "fleetPassword" | "fleetToken" | "fleetNkey" | "fleetCreds" | "fleetCa" | "fleetDir" | "fleetInsecure">;

/** The identity bundle named by --fleet-dir (or BODYLINK_FLEET_DIR), or null. */
export function fleetBundleOf(o: FleetFlags): FleetBundle | null {
  const dir = o.fleetDir ?? (process.env.BODYLINK_FLEET_DIR || undefined);
  return dir === undefined ? null : loadBundle(dir);
}

export function fleetConnectOptions(o: FleetFlags, bundle: FleetBundle | null = fleetBundleOf(o)): FleetConnectOptions {
  const password = o.fleetPassword ?? process.env.BODYLINK_FLEET_PASSWORD;
  const token = o.fleetToken ?? process.env.BODYLINK_FLEET_TOKEN;
  const other = o.fleetUser !== undefined || token !== undefined || o.fleetNkey !== undefined || o.fleetCreds !== undefined;
  const nkeyFile = o.fleetNkey ?? (bundle && !other ? bundle.seedFile : undefined);
  return {
    url: o.fleet ?? process.env.BODYLINK_FLEET ?? bundle?.url ?? DEFAULT_FLEET_URL,
    ...(o.fleetUser !== undefined ? { user: o.fleetUser } : {}),
    ...(password !== undefined && (o.fleetUser !== undefined || o.fleetPassword !== undefined) ? { password } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(nkeyFile !== undefined ? { nkeyFile } : {}),
    ...(bundle ? { inboxPrefix: inboxPrefixOf(bundle.name) } : {}),
    ...(o.fleetCreds !== undefined ? { credsFile: o.fleetCreds } : {}),
    ...(o.fleetCa !== undefined ? { caFile: o.fleetCa } : {}),
  };
}
