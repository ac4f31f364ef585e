/**
 * How bodylink reaches a NATS server: the URL (`nats://HOST:PORT`, `tls://HOST:PORT` for TLS;
 * `nats://USER:PASSWORD@HOST:PORT` for a user) and one way to authenticate (user/password, token,
 * NKey seed file, or a .creds file). Shared by the runtime's bridge and the fleet client (CLI).
 */
import { readFileSync } from "node:fs";
import { credsAuthenticator, type NodeConnectionOptions, nkeyAuthenticator } from "@nats-io/transport-node";
import { BodylinkError } from "../errors.js";

// Defined with the fleet's names (subjects.ts), which the CLI's flags read without loading NATS.
export { DEFAULT_FLEET_URL } from "./subjects.js";

export interface FleetConnectOptions {
  /** nats://HOST:PORT or tls://HOST:PORT; user and password may sit in it. */
  readonly url: string;
  readonly user?: string;
  readonly password?: string;
  readonly token?: string;
  /** File with an NKey seed (SU…). */
  readonly nkeyFile?: string;
  /** A .creds file (JWT + NKey seed), as `nsc` writes them. */
  readonly credsFile?: string;
  /** CA certificate file for tls:// (else the system's). */
  readonly caFile?: string;
  /** Where replies to this client arrive (`_INBOX_NAME` for a `fleet init` identity: only it may subscribe there). */
  readonly inboxPrefix?: string;
}

/** True when the options carry some credential (user, token, NKey or creds). */
export function hasCredentials(o: FleetConnectOptions): boolean {
  let inUrl = false;
  try {
    inUrl = new URL(o.url).username !== "";
  } catch {
    // natsOptions() says what is wrong with the URL
  }
  return inUrl || o.user !== undefined || o.token !== undefined || o.nkeyFile !== undefined || o.credsFile !== undefined;
}

/**
 * A fleet is closed by default: joining (or commanding) without credentials needs the explicit
 * `--fleet-insecure`, as `--host` off loopback needs `--token`.
 */
export function requireFleetCredentials(o: FleetConnectOptions, insecure: boolean): void {
  if (!insecure && !hasCredentials(o)) throw new BodylinkError("BL_ERR_FLEET_INSECURE", redactUrl(o.url));
}

/** The URL without credentials, for logs, health and records. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(unparsable URL)";
  }
}

/** Options for @nats-io/transport-node's connect(), or a clear error. */
export function natsOptions(o: FleetConnectOptions): NodeConnectionOptions {
  let u: URL;
  try {
    u = new URL(o.url);
  } catch {
    throw new BodylinkError("BL_ERR_FLEET_CONFIG", `--fleet ${JSON.stringify(o.url)} is not a URL; write nats://HOST:PORT (or tls://HOST:PORT)`);
  }
  if (u.protocol !== "nats:" && u.protocol !== "tls:") throw new BodylinkError("BL_ERR_FLEET_CONFIG", `--fleet ${redactUrl(o.url)}: the scheme must be nats:// or tls://`);
  const port = u.port || "4222";
  const out: NodeConnectionOptions = { servers: `${u.hostname}:${port}` };
  const user = o.user ?? (u.username ? decodeURIComponent(u.username) : undefined);
  const pass = o.password ?? (u.password ? decodeURIComponent(u.password) : undefined);
  const ways = [user !== undefined, o.token !== undefined, o.nkeyFile !== undefined, o.credsFile !== undefined].filter(Boolean).length;
  if (ways > 1) throw new BodylinkError("BL_ERR_FLEET_CONFIG", "choose one way to authenticate: user/password, token, NKey or creds file");
  if (user !== undefined) {
    out.user = user;
    if (pass !== undefined) out.pass = pass;
  }
  if (o.token !== undefined) out.token = o.token;
  if (o.nkeyFile !== undefined) {
    const seed = readSecret(o.nkeyFile, "NKey seed").trim();
    out.authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  }
  if (o.credsFile !== undefined) out.authenticator = credsAuthenticator(new TextEncoder().encode(readSecret(o.credsFile, "creds")));
  if (o.inboxPrefix !== undefined) out.inboxPrefix = o.inboxPrefix;
  if (u.protocol === "tls:") out.tls = o.caFile ? { caFile: o.caFile } : {};
  return out;
}

function readSecret(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new BodylinkError("BL_ERR_FLEET_CONFIG", `cannot read the ${what} file ${path}: ${(e as Error).message}`);
  }
}
