/**
 * A fleet's keys on disk (`bodylink fleet init` / `bodylink fleet keys`, docs/fleet.md "A secure
 * fleet"). The directory the admin keeps:
 *
 *   DIR/fleet.json     the roster: URL, broker settings, each identity's role and public keys (no secrets)
 *   DIR/nats.conf      the broker's configuration (broker-config.ts; public NKeys only)
 *   DIR/NAME/          one bundle per identity, copied to where it runs (`serve --fleet-dir`, `fleet … --fleet-dir`):
 *     identity.json    { name, role, url }
 *     nats.seed        its NKey seed (0600): who it is on the broker
 *     sign.key         robots and operators: its ed25519 private key, PKCS#8 PEM (0600)
 *     trust.json       the fleet's public signing keys: operators (a robot obeys their signatures)
 *                      and robots (a client counts only their signed answers and presence)
 *
 * Directories are 0700, secrets 0600, written to a fresh file then renamed (never through a symlink).
 * Prepare side; files only.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync, closeSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
// nkeys alone, not through @nats-io/transport-node: every `serve` loads this file (fleet-flags.ts),
// and the whole NATS client was ~120 ms of each start with no --fleet.
import { createUser } from "@nats-io/nkeys";
import { BodylinkError } from "../errors.js";
import { type BrokerIdentity, type FleetRole, FLEET_ROLES, renderBrokerConfig } from "./broker-config.js";
import { checkName } from "./subjects.js";
import { generateSigningKey, type PublicKeyText, type SigningKey, signingKeyFromPem, type TrustedKeys, trustedKeys } from "./sign.js";

export interface RosterEntry extends BrokerIdentity {
  /** Robots and operators: the public half of `sign.key`. */
  readonly sign?: PublicKeyText;
}

export interface Roster {
  readonly v: 1;
  /** What clients connect to (nats://HOST:PORT or tls://HOST:PORT). */
  readonly url: string;
  readonly listen: string;
  readonly storeDir: string;
  readonly identities: RosterEntry[];
}

/** The public signing keys every bundle carries. */
export interface TrustFile {
  readonly operators: Array<{ name: string; key: PublicKeyText }>;
  readonly robots: Array<{ name: string; key: PublicKeyText }>;
}

/** One identity's bundle, loaded: what `serve --fleet-dir` and `bodylink fleet … --fleet-dir` use. */
export interface FleetBundle {
  readonly dir: string;
  readonly name: string;
  readonly role: FleetRole;
  readonly url: string;
  readonly seedFile: string;
  readonly signingKey: SigningKey | null;
  /** Operator keys a robot obeys. */
  readonly operators: TrustedKeys;
  /** Robot keys whose answers and presence a client counts. */
  readonly robots: TrustedKeys;
}

const ROSTER = "fleet.json";
const SIGNS: Readonly<Record<FleetRole, boolean>> = { robot: true, operator: true, viewer: false, admin: false };

function fail(what: string): never {
  throw new BodylinkError("BL_ERR_FLEET_CONFIG", what);
}

/** Write `text` to `path` through a fresh file renamed into place, with `mode`. */
function writeFile(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, "wx", mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, mode); // whatever the umask
  renameSync(tmp, path);
}

function ensureDir(path: string): void {
  if (existsSync(path)) {
    const st = lstatSync(path);
    if (st.isSymbolicLink() || !st.isDirectory()) fail(`${path} is not a directory (a symlink is refused)`);
    if (process.getuid && st.uid !== process.getuid()) fail(`${path} belongs to another user`);
    chmodSync(path, 0o700);
  } else mkdirSync(path, { mode: 0o700, recursive: true });
}

function readJson<T>(path: string, what: string): T {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return fail(`cannot read the ${what} ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    return fail(`${path} is not JSON: ${(e as Error).message}`);
  }
}

export function readRoster(dir: string): Roster {
  const r = readJson<Roster>(join(dir, ROSTER), "fleet roster (made by `bodylink fleet init`)");
  if (r.v !== 1 || !Array.isArray(r.identities)) fail(`${join(dir, ROSTER)} is not a bodylink fleet roster`);
  return r;
}

function checkIdentityName(name: string, roster: readonly RosterEntry[]): void {
  const bad = checkName(name);
  if (bad) fail(bad.replace(/^robot name/, "name"));
  if (roster.some((e) => e.name.toLowerCase() === name.toLowerCase())) fail(`${name} is already in this fleet (\`bodylink fleet keys ls\`)`);
}

/** Make an identity's keys and its bundle directory; the caller rewrites the shared files. */
function makeIdentity(dir: string, url: string, role: FleetRole, name: string): RosterEntry {
  const bundle = join(dir, name);
  ensureDir(bundle);
  const user = createUser();
  writeFile(join(bundle, "nats.seed"), `${new TextDecoder().decode(user.getSeed())}\n`, 0o600);
  writeFile(join(bundle, "identity.json"), `${JSON.stringify({ name, role, url }, null, 2)}\n`, 0o600);
  let sign: PublicKeyText | undefined;
  if (SIGNS[role]) {
    const k = generateSigningKey(name);
    writeFile(join(bundle, "sign.key"), k.pem, 0o600);
    sign = k.publicKey;
  }
  return { name, role, nkey: user.getPublicKey(), ...(sign ? { sign } : {}) };
}

/** Rewrite what derives from the roster: fleet.json, nats.conf, every bundle's trust.json and identity.json. */
function renderAll(dir: string, r: Roster): void {
  const trust: TrustFile = {
    operators: r.identities.filter((e) => e.role === "operator" && e.sign).map((e) => ({ name: e.name, key: e.sign! })),
    robots: r.identities.filter((e) => e.role === "robot" && e.sign).map((e) => ({ name: e.name, key: e.sign! })),
  };
  for (const e of r.identities) {
    writeFile(join(dir, e.name, "trust.json"), `${JSON.stringify(trust, null, 2)}\n`, 0o600);
    writeFile(join(dir, e.name, "identity.json"), `${JSON.stringify({ name: e.name, role: e.role, url: r.url }, null, 2)}\n`, 0o600);
  }
  writeFile(join(dir, "nats.conf"), renderBrokerConfig(r.identities, { listen: r.listen, storeDir: r.storeDir }), 0o600);
  writeFile(join(dir, ROSTER), `${JSON.stringify(r, null, 2)}\n`, 0o600);
}

export interface InitOptions {
  readonly url: string;
  readonly listen?: string;
  readonly storeDir?: string;
  readonly robots: readonly string[];
  readonly operators: readonly string[];
  readonly viewers: readonly string[];
}

/** A new fleet directory: every identity's keys, the broker config, the trust files. Refuses an existing fleet. */
export function initFleet(dir: string, o: InitOptions): Roster {
  dir = resolve(dir);
  if (existsSync(join(dir, ROSTER))) fail(`${dir} already holds a fleet; add identities with \`bodylink fleet keys add ${dir} ROLE NAME\``);
  if (o.robots.length === 0) fail("name at least one robot (--robot NAME)");
  ensureDir(dir);
  const storeDir = o.storeDir ? resolve(o.storeDir) : join(dir, "jetstream");
  if (!isAbsolute(storeDir)) fail("--store-dir must be a path");
  const identities: RosterEntry[] = [];
  const add = (role: FleetRole, name: string) => {
    checkIdentityName(name, identities);
    identities.push(makeIdentity(dir, o.url, role, name));
  };
  for (const n of o.robots) add("robot", n);
  for (const n of o.operators) add("operator", n);
  for (const n of o.viewers) add("viewer", n);
  add("admin", "admin");
  const r: Roster = { v: 1, url: o.url, listen: o.listen ?? "0.0.0.0:4222", storeDir, identities };
  renderAll(dir, r);
  return r;
}

/** Add one identity to an existing fleet; every bundle's trust.json and nats.conf are rewritten (redistribute them). */
export function addIdentity(dir: string, role: FleetRole, name: string): Roster {
  dir = resolve(dir);
  if (!FLEET_ROLES.includes(role)) fail(`role ${JSON.stringify(role)} is not one of ${FLEET_ROLES.join(", ")}`);
  const r = readRoster(dir);
  checkIdentityName(name, r.identities);
  const next: Roster = { ...r, identities: [...r.identities, makeIdentity(dir, r.url, role, name)] };
  renderAll(dir, next);
  return next;
}

/** Remove an identity (its bundle is deleted; the broker and every trust.json forget its keys). */
export function removeIdentity(dir: string, name: string): Roster {
  dir = resolve(dir);
  const r = readRoster(dir);
  if (!r.identities.some((e) => e.name === name)) fail(`${name} is not in this fleet`);
  const next: Roster = { ...r, identities: r.identities.filter((e) => e.name !== name) };
  rmSync(join(dir, name), { recursive: true, force: true });
  renderAll(dir, next);
  return next;
}

/** Load one identity's bundle (the directory `fleet init` made for it, copied where it runs). */
export function loadBundle(dir: string): FleetBundle {
  dir = resolve(dir);
  const id = readJson<{ name: string; role: FleetRole; url: string }>(join(dir, "identity.json"), "fleet identity (a bundle from `bodylink fleet init`)");
  if (typeof id.name !== "string" || !FLEET_ROLES.includes(id.role) || typeof id.url !== "string") fail(`${join(dir, "identity.json")} is not a bodylink fleet identity`);
  for (const secret of ["nats.seed", ...(SIGNS[id.role] ? ["sign.key"] : [])]) {
    const p = join(dir, secret);
    let mode: number;
    try {
      mode = lstatSync(p).mode;
    } catch {
      return fail(`${p} is missing; copy the whole bundle ${id.name}/ from the fleet directory`);
    }
    if (mode & 0o077) fail(`${p} can be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
  }
  const trust = readJson<TrustFile>(join(dir, "trust.json"), "fleet trust file");
  const signingKey = SIGNS[id.role] ? signingKeyFromPem(id.name, readFileSync(join(dir, "sign.key"), "utf8")) : null;
  return {
    dir,
    name: id.name,
    role: id.role,
    url: id.url,
    seedFile: join(dir, "nats.seed"),
    signingKey,
    operators: trustedKeys(trust.operators ?? []),
    robots: trustedKeys(trust.robots ?? []),
  };
}
