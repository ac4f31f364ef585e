/**
 * The fleet's names on NATS: subjects, KV buckets, the event stream, and the messages on them
 * (docs/fleet.md is the reference). One table, read by the bridge (each runtime), the fleet client
 * (CLI, bench, tests) and the docs. Pure: no I/O, browser-safe.
 *
 * Subjects (NAME is the runtime's name, `serve --name`; a single NATS token):
 *   bodylink.NAME.state          the robot API's state message, JSON, at --fleet-rate (10 Hz)
 *   bodylink.NAME.health         health, 1 Hz (link, cycle, control holder, e-stop, battery)
 *   bodylink.NAME.events         leases, e-stops, resets, link changes (kept in the BODYLINK_EVENTS stream)
 *   bodylink.NAME.cmd.COMMAND    request/reply: acquire, renew, release, control, state, health, and the body's commands
 *   bodylink.NAME.estop          request/reply: latch this robot's e-stop
 *   bodylink.NAME.reset          request/reply: reset this robot's e-stop
 *   bodylink.estop               every robot latches (each one replies; collect with requestMany)
 *   bodylink.reset               every robot resets (each one replies)
 */
import { LEASE_HEADER } from "../bodies/link.js";

/** The broker a runtime or the CLI reaches without --fleet, BODYLINK_FLEET or a bundle's URL. */
export const DEFAULT_FLEET_URL = "nats://127.0.0.1:4222";
export const SUBJECT_ROOT = "bodylink";
/** Presence: key NAME, value {@link PresenceRecord}; entries expire (bucket max age) unless refreshed. */
export const ROBOTS_BUCKET = "bodylink_robots";
/** Fleet leases: key NAME, value {@link FleetLeaseRecord}; written with compare-and-set on the revision. */
export const LEASES_BUCKET = "bodylink_leases";
/** JetStream stream holding every robot's events (fleet-wide history). */
export const EVENTS_STREAM = "BODYLINK_EVENTS";

/** How long a presence record lives without a refresh (the bucket's max age); refreshed every third of it. */
export const PRESENCE_TTL_MS = 5000;
/** Longest fleet lease, and the leases bucket's max age: a record of a holder that vanished expires by itself. */
export const FLEET_MAX_LEASE_MS = 10_000;
/** Header that carries a lease id on command requests: the robot API's (defined once, in bodies/link.ts). */
export const FLEET_LEASE_HEADER = LEASE_HEADER;

export const subject = {
  state: (name: string) => `${SUBJECT_ROOT}.${name}.state`,
  health: (name: string) => `${SUBJECT_ROOT}.${name}.health`,
  events: (name: string) => `${SUBJECT_ROOT}.${name}.events`,
  cmd: (name: string, command: string) => `${SUBJECT_ROOT}.${name}.cmd.${command}`,
  estop: (name: string) => `${SUBJECT_ROOT}.${name}.estop`,
  reset: (name: string) => `${SUBJECT_ROOT}.${name}.reset`,
  estopAll: `${SUBJECT_ROOT}.estop`,
  resetAll: `${SUBJECT_ROOT}.reset`,
  allState: `${SUBJECT_ROOT}.*.state`,
  allHealth: `${SUBJECT_ROOT}.*.health`,
  allEvents: `${SUBJECT_ROOT}.*.events`,
} as const;

/** Robot (and fleet identity) names: also NATS subject tokens and file names, so no dots, wildcards, slashes or spaces. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Names that would read like fleet-wide subjects (`bodylink.estop`, `bodylink.reset`). */
const RESERVED_NAMES = new Set(["estop", "reset", "fleet"]);

export function checkName(name: string): string | null {
  if (!NAME_PATTERN.test(name)) return `robot name ${JSON.stringify(name)} must be 1-64 letters, digits, '-' or '_', starting with a letter or digit`;
  if (RESERVED_NAMES.has(name.toLowerCase())) return `robot name ${JSON.stringify(name)} is reserved (fleet-wide subjects use it)`;
  return null;
}

/** The robot's name from a per-robot subject (`bodylink.NAME.…`), or null. */
export function nameOfSubject(s: string): string | null {
  const parts = s.split(".");
  return parts.length >= 3 && parts[0] === SUBJECT_ROOT ? parts[1]! : null;
}

/** Commands every robot answers besides its body's own (`/v1/commands/X` answers on `cmd.X`). */
export const CONTROL_COMMANDS = ["acquire", "renew", "release", "control", "state", "health", "info"] as const;

/** Of those, the ones that only read: answered to anyone on the broker, never signed (everything else over the fleet needs an operator's signature). */
export const READ_COMMANDS = ["info", "state", "health", "control"] as const satisfies ReadonlyArray<(typeof CONTROL_COMMANDS)[number]>;

/** KV value of `bodylink_robots/NAME`. */
export interface PresenceRecord {
  readonly name: string;
  readonly body: string;
  /** bodylink's version. */
  readonly version: string;
  readonly host: string;
  readonly pid: number;
  /** Random per process: tells this runtime's record from another one's that claims the same name. */
  readonly instance: string;
  readonly urls: { readonly api: string | null; readonly lola: string | null; readonly tny: string | null };
  readonly started_at: string;
  /** Wall-clock time of this refresh; a reader treats the record as gone after ttl_ms without one. */
  readonly refreshed_at_epoch_ms: number;
  readonly ttl_ms: number;
}

/** KV value of `bodylink_leases/NAME`: the fleet lease this robot granted (never the lease id). */
export interface FleetLeaseRecord {
  readonly owner: string;
  /** Which runtime instance granted it (its presence record's `instance`). */
  readonly instance: string;
  readonly acquired_at_epoch_ms: number;
  readonly expires_at_epoch_ms: number;
}

export type EstopCategory = 0 | 1;

/** Body of an e-stop request (per robot or fleet-wide). */
export interface EstopRequest {
  readonly category?: EstopCategory;
  readonly reason?: string;
  /** Who asked (a person or a program); recorded as the e-stop's source, `fleet:<by>`. */
  readonly by?: string;
}

/** Body of a reset request. */
export interface ResetRequest {
  readonly reason: string;
  readonly by?: string;
}

/** The robot API's e-stop state (GET /v1/estop), as every fleet message carries it. */
export interface EstopStateAnswer {
  readonly latched: boolean;
  readonly reason: string | null;
  readonly source: string | null;
  readonly since_ms: number | null;
  readonly category: EstopCategory | null;
  readonly phase: string;
}

/** Each robot's reply to an e-stop or reset request. */
export interface EstopReply {
  readonly name: string;
  readonly ok: boolean;
  readonly estop: EstopStateAnswer;
  /** Set when the request was refused (bad body); the e-stop itself is never refused. */
  readonly error?: ErrorAnswer;
}

/** The robot API's error shape. */
export interface ErrorAnswer {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly holder?: unknown;
  readonly problems?: unknown;
}

/** `bodylink.NAME.health`, 1 Hz. */
export interface FleetHealth {
  readonly type: "health";
  readonly name: string;
  readonly body: string;
  readonly epoch_ms: number;
  readonly link: string;
  /** SAFETY_CODES (src/bodies/safety.ts). */
  readonly safety_code: string;
  readonly safety_reason: string | null;
  readonly cycle: { readonly cycles: number; readonly late_cycles: number; readonly nominal_period_ms: number; readonly period_p99_ms: number | null; readonly jitter_p99_ms: number | null };
  readonly control: { readonly owner: string; readonly source: string; readonly expires_at_epoch_ms: number } | null;
  readonly estop: EstopStateAnswer;
  /** 0..1 where the body reports it (NAO), else null. */
  readonly battery_charge: number | null;
  readonly urls: PresenceRecord["urls"];
}

/** `bodylink.NAME.events`. */
export interface FleetEvent {
  readonly type: "event";
  readonly name: string;
  readonly epoch_ms: number;
  readonly event: "lease-acquired" | "lease-released" | "lease-expired" | "lease-revoked" | "estop" | "reset" | "link" | "joined" | "left";
  readonly detail: Readonly<Record<string, unknown>>;
}
