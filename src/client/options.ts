/**
 * What `connect()` takes and what a client emits: the options, the events, and the parts of
 * WebSocket and fetch the SDK uses (the browser's and Node's both fit). Types only; browser-safe.
 */
import type { BodyKind, StateMessage } from "./messages.js";
import type { RobotState } from "./snapshots.js";

/** The part of a WebSocket the SDK uses (the browser's WebSocket and the `ws` package both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  /** The SDK reads `data` (message), `code` and `reason` (close) from the events it gets. */
  addEventListener(type: "open" | "close" | "error" | "message", listener: (event: object) => void): void;
  close(code?: number, reason?: string): void;
}
export interface WebSocketEventLike {
  readonly data?: unknown;
  readonly code?: number;
  readonly reason?: string;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{
  readonly status: number;
  readonly ok: boolean;
  text(): Promise<string>;
}>;

export interface ConnectOptions {
  /** WebSocket class. Defaults to globalThis.WebSocket (browsers, Node ≥ 22); in Node 20 pass `ws`. */
  WebSocket?: WebSocketConstructor;
  /** fetch function. Defaults to globalThis.fetch. */
  fetch?: FetchLike;
  /** A state older than this is not current: getters return null. Defaults to 250 ms. */
  staleAfterMs?: number;
  /** Refuse a server that serves another body. */
  expectBody?: BodyKind;
  /** connect() fails if no hello arrives within this (at once when nothing listens at the URL). Defaults to 5000 ms. */
  connectTimeoutMs?: number;
  /** Reconnect backoff; `false` to not reconnect. Defaults to 100 ms doubling to 2000 ms. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number } | false;
  /** Name shown to other clients when you hold control. Defaults to "sdk". */
  owner?: string;
  /** Local monotonic clock, ms. Defaults to performance.now (tests inject their own). */
  now?: () => number;
  /**
   * The runtime's token, when it has one (`serve --token`, BODYLINK_TOKEN; required off loopback):
   * sent as `Authorization: Bearer` on REST and as `?token=` on the stream (a browser cannot set
   * headers on a WebSocket).
   */
  token?: string;
}

export interface ClientEvents {
  /** The stream is up and its hello arrived (also after every reconnect). */
  open: { readonly body: BodyKind; readonly reconnected: boolean };
  /** The stream closed; getters return null until it is back. */
  disconnected: { readonly code: number; readonly reason: string; readonly willReconnect: boolean };
  reconnecting: { readonly attempt: number; readonly delayMs: number };
  reconnected: { readonly attempts: number; readonly downtimeMs: number };
  /** Every new state message that makes a complete snapshot (getState() non-null). */
  state: RobotState;
  /**
   * Every state message as received (deep-frozen, wire spelling), complete or not: for bodies or
   * sources where getState() cannot be complete (a real TNY-360 reports no efforts or IMU rates).
   */
  message: Readonly<StateMessage>;
  /** A held lease could not be renewed (expired, revoked by an emergency stop, server gone). */
  "control-lost": { readonly leaseId: string; readonly reason: string };
  error: Error;
}

export interface AcquireOptions {
  /** Lease duration, ms (50..60000). Defaults to 2000. */
  leaseMs?: number;
  /** Renew this often, ms. Defaults to a third of leaseMs. */
  renewEveryMs?: number;
  /** Overrides the client's owner name for this lease. */
  owner?: string;
}

export interface WaitForStateOptions {
  /** Reject with ApiError `BL_ERR_CLIENT_NO_STATE` after this long, ms. Defaults to 5000. */
  timeoutMs?: number;
  /** Reject with the signal's reason when it aborts. */
  signal?: AbortSignal;
}
