/**
 * bodylink client SDK (`bodylink/client`): the robot API from Node or a browser.
 *
 * ```ts
 * import WebSocket from "ws"; // Node 20 only; browsers and Node ≥ 22 have a global WebSocket
 * import { connect } from "bodylink/client";
 * const robot = await connect("http://127.0.0.1:8080", { WebSocket });
 * robot.getJointState();            // frozen { seq, timestampMs, epochMs, angles, velocities, efforts } or null
 * await using control = await robot.acquireControl({ leaseMs: 2000 });
 * if (robot.body === "nao") await robot.nao.setJointTargets({ stiffness: new Array(26).fill(0.5) });
 * ```
 *
 * - Each body's own readings and commands are on its facet, `robot.nao`, `robot.p7`,
 *   `robot.tny360` (`facets/`, one file per body of the registry). `connect()` resolves a union
 *   discriminated by `body`: narrow on it (or pass `expectBody`) and only that body's facet
 *   type-checks. At run time a facet of another body fails with ApiError
 *   `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. The flat methods (`robot.setLeds` …)
 *   still work and are deprecated.
 *
 * - State arrives over one WebSocket at 20 Hz; getters read the newest message (never a queue).
 *   Each returns a deep-frozen snapshot with its source `seq`, `timestampMs` and `epochMs`, or
 *   `null` when there is no current data: before the first state, while disconnected, when the
 *   body link is not ok/degraded, when an array's length does not match the body, or when the
 *   newest state is older than `staleAfterMs` (default 250 ms, five stream periods).
 * - Age is measured without trusting either machine's wall clock: the SDK tracks the smallest
 *   (local receive time − source monotonic time) it has seen, letting it rise by 1 ms per second to
 *   follow clock drift, and a state's age is how much later than that best case it is now.
 * - Commands go over REST (fetch). `acquireControl` takes a lease and renews it in the background
 *   (every third of its duration) until `release()`, `releaseControl()` or `close()`; a lease
 *   works with `await using` or try/finally.
 * - The stream reconnects by itself (backoff 100 ms → 2 s) and says so through events:
 *   `disconnected`, `reconnecting`, `reconnected`; `control-lost` when renewal fails.
 *
 * Browser-safe: no `node:` imports; WebSocket and fetch are injectable.
 */
import { LEASE_HEADER } from "../bodies/link.js";
import { BODY_KINDS } from "../bodies/registry.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { ApiError } from "./errors.js";
import { Emitter } from "./events.js";
import type {
  AppliedAnswer,
  BodyKind,
  ControlHolder,
  ControlStatusAnswer,
  ErrorAnswer,
  EstopResetAnswer,
  EstopStateAnswer,
  EstopStopAnswer,
  HealthAnswer,
  HelloMessage,
  InfoAnswer,
  LeaseAnswer,
  LinkStatus,
  StateMessage,
} from "./messages.js";
import {
  type BatteryState,
  type BodyFacets,
  FACETS,
  type FacetHost,
  type FootState,
  type HeadState,
  type NaoJointTargets,
  type NaoLedGroup,
  type NotOn,
  type SonarState,
  type Tny360Gait,
  type TouchState,
} from "./facets/index.js";
import { BODY_SHAPES, buildModels, deepFreeze, type ImuState, type JointState, type MotorState, type RobotState } from "./snapshots.js";

export { ApiError } from "./errors.js";
/** Health's `safety_code` words and what each means. */
export { SAFETY_CODES, SAFETY_FAULT, SAFETY_TEXT } from "../bodies/safety.js";
export type * from "./messages.js";
export * from "./facets/index.js";
export { BODY_SHAPES, type EffortUnit, type ImuState, type JointState, type MotorState, type RobotState, type SnapshotMeta } from "./snapshots.js";

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
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<{
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

const DEFAULT_STALE_MS = 250;
const DRIFT_MS_PER_MS = 0.001; // how fast the best-case delay may rise (clock drift allowance)

function localError(code: ErrorCode, ...args: Array<string | number>): ApiError {
  const e = new BodylinkError(code, ...args);
  return new ApiError({ code: e.code, status: e.status, message: e.message });
}

/**
 * A client connected to a `K` body: `body` is `K`, its facet is `client[K]` (and no other body's
 * is), and the deprecated flat methods of other bodies are `never`. For a union of kinds, a union
 * of clients (narrow on `body`).
 */
export type BodyClient<K extends BodyKind> = K extends BodyKind ? BodylinkClient & { readonly body: K } & { readonly [P in K]: BodyFacets[P] } & NotOn<K> : never;
/** A client connected to some body: narrow on `client.body` to reach its facet. */
export type RobotClient = BodyClient<BodyKind>;

/**
 * Connect to a robot API at `url` (http://host:port); resolves once the stream's hello arrived.
 * With `expectBody`, refuses a server of another body and resolves that body's client type.
 */
export async function connect<K extends BodyKind>(url: string, opts: ConnectOptions & { expectBody: K }): Promise<BodyClient<K>>;
export async function connect(url: string, opts?: ConnectOptions): Promise<RobotClient>;
export async function connect(url: string, opts: ConnectOptions = {}): Promise<BodylinkClient> {
  // The hello sets `body`; the facets exist on every client and check the body themselves.
  const client = new BodylinkClient(url, opts);
  await client.ready;
  return client;
}

export class BodylinkClient extends Emitter<ClientEvents> implements AsyncDisposable {
  /** Base URL of the REST API, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** Resolves when the first hello arrived; rejects on timeout, wrong body or close. */
  readonly ready: Promise<void>;
  readonly #streamUrl: string;
  readonly #token: string | undefined;
  readonly #WebSocket: WebSocketConstructor;
  readonly #fetch: FetchLike;
  readonly #now: () => number;
  readonly #staleAfterMs: number;
  readonly #expectBody: BodyKind | undefined;
  readonly #reconnect: { initialDelayMs: number; maxDelayMs: number } | false;
  readonly #owner: string;
  #ws: WebSocketLike | null = null;
  #open = false;
  #closed = false;
  #everOpened = false;
  /** The HTTP probe after a first failed stream attempt ran (see #probeRuntime). */
  #probed = false;
  #attempts = 0;
  #downSinceMs = 0;
  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  #body: BodyKind | null = null;
  #jointNames: readonly string[] = Object.freeze([]);
  // Newest state and its derived snapshots (built lazily, once per message).
  #latest: StateMessage | null = null;
  #models: ReturnType<typeof buildModels> | null = null;
  #state: RobotState | null | undefined = undefined;
  #frozen = false;
  // Best-case delay estimate (local receive − source monotonic time).
  #minDelayMs = Number.NaN;
  #lastRecvMs = 0;
  #lease: ControlLease | null = null;
  #resolveReady!: () => void;
  #rejectReady!: (e: Error) => void;
  readonly #facets: Partial<{ -readonly [K in BodyKind]: BodyFacets[K] }> = {};
  /** What the facets see of this client (FacetHost); the body check is theirs to call. */
  readonly #host: FacetHost = {
    checkBody: (kind, what) => {
      if (this.#body !== kind) throw localError("BL_ERR_CLIENT_NOT_THIS_BODY", what, kind, this.url, this.#body ? `a ${this.#body} body` : "no body yet (not connected)");
    },
    current: () => {
      const mm = this.#current();
      return mm?.meta ? { message: this.#freezeLatest(), meta: mm.meta } : null;
    },
    request: (method, path, body) => this.#request(method, path, body),
    command: (path, body) => this.command(path, body),
  };

  // `client.nao`, `client.p7`, `client.tny360`: one getter per registry body, not declared on the
  // class, so only a client typed for that body (BodyClient<K>) shows it.
  static {
    for (const kind of BODY_KINDS) {
      Object.defineProperty(BodylinkClient.prototype, kind, {
        get(this: BodylinkClient) {
          return this.#facet(kind);
        },
        enumerable: false,
        configurable: false,
      });
    }
  }

  constructor(url: string, opts: ConnectOptions = {}) {
    super();
    const base = url.replace(/\/+$/, "").replace(/^ws(s?):/, "http$1:");
    if (!/^https?:\/\//.test(base)) throw new TypeError(`robot API URL must start with http://, https://, ws:// or wss://, got ${url}`);
    this.url = base;
    this.#token = opts.token;
    this.#streamUrl = `${base.replace(/^http/, "ws")}/v1/stream${opts.token ? `?token=${encodeURIComponent(opts.token)}` : ""}`;
    const g = globalThis as { WebSocket?: WebSocketConstructor; fetch?: FetchLike; performance?: { now(): number } };
    const WS = opts.WebSocket ?? g.WebSocket;
    if (!WS) throw localError("BL_ERR_CLIENT_NO_WEBSOCKET");
    this.#WebSocket = WS;
    this.#fetch = opts.fetch ?? (g.fetch ? (g.fetch.bind(globalThis) as FetchLike) : missingFetch);
    this.#now = opts.now ?? (() => (g.performance ? g.performance.now() : Date.now()));
    this.#staleAfterMs = opts.staleAfterMs ?? DEFAULT_STALE_MS;
    this.#expectBody = opts.expectBody;
    this.#reconnect = opts.reconnect === false ? false : { initialDelayMs: opts.reconnect?.initialDelayMs ?? 100, maxDelayMs: opts.reconnect?.maxDelayMs ?? 2000 };
    this.#owner = opts.owner ?? "sdk";
    this.ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.ready.catch(() => {}); // connect() reports it; a bare constructor user may ignore it
    const timeoutMs = opts.connectTimeoutMs ?? 5000;
    const timer = setTimeout(() => {
      if (this.#everOpened) return;
      this.#rejectReady(localError("BL_ERR_CLI_NO_RUNTIME", this.url));
      this.#shutdownStream();
    }, timeoutMs);
    this.ready.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    this.#openStream();
  }

  /** The body the server serves (known once connected). */
  get body(): BodyKind | null {
    return this.#body;
  }
  /** Joint names in the order of every joint array. */
  get jointNames(): readonly string[] {
    return this.#jointNames;
  }
  /** True while the stream is open. */
  get connected(): boolean {
    return this.#open;
  }
  /** The lease this client holds, or null. */
  get control(): ControlLease | null {
    return this.#lease?.active ? this.#lease : null;
  }

  /**
   * How old the newest state is, ms, against the best delivery seen (see the module comment);
   * Infinity when there is none.
   */
  ageMs(): number {
    const m = this.#latest;
    if (!m || Number.isNaN(this.#minDelayMs)) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.#now() - (m.timestamp_ms + this.#minDelayMs));
  }

  // --- getters: frozen snapshots or null ---

  getJointState(): JointState | null {
    return this.#current()?.joints ?? null;
  }
  getMotorState(): MotorState | null {
    return this.#current()?.motors ?? null;
  }
  getImuState(): ImuState | null {
    return this.#current()?.imu ?? null;
  }
  /** Joints, motors and IMU from the same cycle, plus the body's own fields; or null. */
  getState(): RobotState | null {
    return this.#current() ? this.#robotState() : null;
  }
  /** The body's full message as sent (wire spelling), deep-frozen; or null. */
  getBodyState(): Readonly<StateMessage> | null {
    return this.#current() ? this.#freezeLatest() : null;
  }

  /** NAO: battery. null on other bodies. @deprecated use `client.nao.getBatteryState()` (narrow on `client.body`). */
  getBatteryState(): BatteryState | null {
    return this.#body === "nao" ? this.#facet("nao").getBatteryState() : null;
  }
  /** NAO: touch. null on other bodies. @deprecated use `client.nao.getTouchState()`. */
  getTouchState(): TouchState | null {
    return this.#body === "nao" ? this.#facet("nao").getTouchState() : null;
  }
  /** NAO: feet. null on other bodies. @deprecated use `client.nao.getFootState()`. */
  getFootState(): FootState | null {
    return this.#body === "nao" ? this.#facet("nao").getFootState() : null;
  }
  /** NAO: sonar. null on other bodies. @deprecated use `client.nao.getSonarState()`. */
  getSonarState(): SonarState | null {
    return this.#body === "nao" ? this.#facet("nao").getSonarState() : null;
  }
  /** NAO: head power and face temperature. null on other bodies. @deprecated use `client.nao.getHeadState()`. */
  getHeadState(): HeadState | null {
    return this.#body === "nao" ? this.#facet("nao").getHeadState() : null;
  }

  /**
   * Call `callback` with every new complete state (frozen, same as getState()). Returns an
   * unsubscribe function. Slow callbacks never queue: the stream keeps only the newest message.
   */
  subscribe(callback: (state: RobotState) => void): () => void {
    return this.on("state", callback);
  }

  // --- REST reads ---

  fetchInfo(): Promise<InfoAnswer> {
    return this.#request("GET", "/v1/info");
  }
  /** The state over REST (REST units: the NAO's battery temperature in whole °C). */
  fetchState(): Promise<StateMessage> {
    return this.#request("GET", "/v1/state");
  }
  /** Health; a latched `estop` in it ends this client's lease (see fetchEstop). */
  async fetchHealth(): Promise<HealthAnswer> {
    const sentAt = this.#now();
    const h = await this.#request<HealthAnswer>("GET", "/v1/health");
    this.#sawLatch(h.estop, sentAt);
    return h;
  }
  fetchControl(): Promise<ControlStatusAnswer> {
    return this.#request("GET", "/v1/control");
  }
  /** NAO: the chest board's decoded preferences. @deprecated use `client.nao.fetchPreferences()`. */
  fetchPreferences(): Promise<unknown> {
    return this.#facetCall("nao", (f) => f.fetchPreferences());
  }
  /** NAO: motor-board handshake results. @deprecated use `client.nao.fetchBoards()`. */
  fetchBoards(): Promise<unknown[]> {
    return this.#facetCall("nao", (f) => f.fetchBoards());
  }

  // --- control ---

  /**
   * Take control. Resolves with a lease that renews itself in the background until released;
   * rejects with ApiError BL_ERR_AUTH_HELD (409, `holder` says who and until when) if another
   * client holds control. Use `await using lease = await client.acquireControl()` or try/finally.
   */
  async acquireControl(opts: AcquireOptions = {}): Promise<ControlLease> {
    this.#assertOpen();
    if (this.#lease?.active) return this.#lease;
    const body: Record<string, unknown> = { owner: opts.owner ?? this.#owner };
    if (opts.leaseMs !== undefined) body["lease_ms"] = opts.leaseMs;
    const a = await this.#request<LeaseAnswer>("POST", "/v1/control", body);
    const lease = new ControlLease(this, a, opts.renewEveryMs ?? Math.max(20, a.lease_ms / 3), this.#now);
    this.#lease = lease;
    return lease;
  }

  /** Release the lease this client holds (no-op without one). */
  async releaseControl(): Promise<void> {
    const l = this.#lease;
    this.#lease = null;
    if (l) await l.release();
  }

  /**
   * Emergency stop: no lease needed; every lease is revoked (this client's too) and the stop stays
   * latched until `resetEstop`. `category` 0 cuts at once, 1 reaches a safe posture first; the
   * default is the body's (`fetchEstop().default_category`).
   */
  async emergencyStop(reason?: string, opts: { category?: 0 | 1; source?: string } = {}): Promise<EstopStopAnswer> {
    // The stop revokes every lease: stop renewing ours now, so no renewal is sent into the latch
    // (it would only be refused). If the stop itself fails, the lease carries on.
    const lease = this.#lease;
    lease?.hold();
    try {
      const a = await this.#request<EstopStopAnswer>("POST", "/v1/estop", { ...(reason === undefined ? {} : { reason }), ...opts });
      lease?.revoked(`revoked by the emergency stop (${a.reason})`);
      return a;
    } catch (e) {
      lease?.resume();
      throw e;
    }
  }

  /** The emergency-stop latch (a latched answer ends this client's lease: the stop revoked it). */
  async fetchEstop(): Promise<EstopStateAnswer> {
    const sentAt = this.#now();
    const a = await this.#request<EstopStateAnswer>("GET", "/v1/estop");
    this.#sawLatch(a, sentAt);
    return a;
  }

  /** Release the emergency-stop latch (a reason is required). Nothing moves until a client takes control and commands. */
  resetEstop(reason: string, opts: { source?: string } = {}): Promise<EstopResetAnswer> {
    return this.#request("POST", "/v1/estop/reset", { reason, ...opts });
  }

  /**
   * An answer sent after `sentAtLocalMs` says the latch is on: a lease this client took before
   * then was revoked by that stop (nobody gets a lease while latched), so end it here instead of
   * learning it from a refused renewal.
   */
  #sawLatch(e: { readonly latched: boolean; readonly reason: string | null } | null | undefined, sentAtLocalMs: number): void {
    const l = this.#lease;
    if (e?.latched && l?.active && l.acquiredAtLocalMs < sentAtLocalMs) l.revoked(`revoked by the emergency stop${e.reason ? ` (${e.reason})` : ""}`);
  }

  // --- the flat body commands (deprecated: each body's facet has them, typed for that body) ---

  /**
   * Joint targets in `jointNames` order. NAO: positions and/or stiffness (26 each); TNY-360:
   * positions (14). @deprecated use `client.nao.setJointTargets()` or `client.tny360.setJointTargets()`.
   */
  setJointTargets(targets: NaoJointTargets): Promise<AppliedAnswer> {
    if (this.#body === "tny360") return this.#facet("tny360").setJointTargets({ positions: targets.positions ?? [] }) as Promise<never>;
    return this.#facetCall("nao", (f) => f.setJointTargets(targets));
  }
  /** NAO: LED intensities 0..1 per group. @deprecated use `client.nao.setLeds()`. */
  setLeds(groups: Partial<Record<NaoLedGroup, readonly number[]>>): Promise<AppliedAnswer> {
    return this.#facetCall("nao", (f) => f.setLeds(groups));
  }
  /** NAO: sonar transmitters on/off. @deprecated use `client.nao.setSonar()`. */
  setSonar(on: { left: boolean; right: boolean }): Promise<AppliedAnswer> {
    return this.#facetCall("nao", (f) => f.setSonar(on));
  }
  /** NAO and TNY-360: stand up. @deprecated use `client.nao.smoothEnable()` or `client.tny360.smoothEnable()`. */
  smoothEnable(): Promise<{ estimatedS: number }> {
    return this.#body === "tny360" ? this.#facet("tny360").smoothEnable() : this.#facetCall("nao", (f) => f.smoothEnable());
  }
  /** NAO and TNY-360: rest, then stiffness off. @deprecated use `client.nao.smoothDisable()` or `client.tny360.smoothDisable()`. */
  smoothDisable(): Promise<{ estimatedS: number }> {
    return this.#body === "tny360" ? this.#facet("tny360").smoothDisable() : this.#facetCall("nao", (f) => f.smoothDisable());
  }
  /** P7: move all 7 joints under a speed limit. @deprecated use `client.p7.moveJoints()`. */
  moveJoints(positionsRad: readonly number[], opts: { speedRadS?: number | readonly number[] } = {}): Promise<{ etaS: number; speedRadS: readonly number[] }> {
    return this.#facetCall("p7", (f) => f.moveJoints(positionsRad, opts));
  }
  /** P7: track `positionsRad` at full speed. @deprecated use `client.p7.servoJoints()`. */
  servoJoints(positionsRad: readonly number[]): Promise<void> {
    return this.#facetCall("p7", (f) => f.servoJoints(positionsRad));
  }
  /** P7: clear error ids. @deprecated use `client.p7.clearError()`. */
  clearError(joint?: number): Promise<{ clearedJoints: readonly number[] }> {
    return this.#facetCall("p7", (f) => f.clearError(joint));
  }
  /** TNY-360: walk. @deprecated use `client.tny360.setVelocity()`. */
  setVelocity(v: { xMS: number; yMS: number; yawRadS: number; clearOverrides?: boolean }): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setVelocity(v));
  }
  /** TNY-360: body posture. @deprecated use `client.tny360.setPosture()`. */
  setPosture(p: { xM: number; yM: number; zM: number; rxRad: number; ryRad: number; rzRad: number; clearOverrides?: boolean }): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setPosture(p));
  }
  /** TNY-360: power joints by bit mask. @deprecated use `client.tny360.setEnabledMask()`. */
  setEnabledMask(mask: number): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setEnabledMask(mask));
  }
  /** TNY-360: gait. @deprecated use `client.tny360.setGait()`. */
  setGait(gait: Tny360Gait): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setGait(gait));
  }
  /** TNY-360: one joint's target, rad. @deprecated use `client.tny360.setJointTarget()`. */
  setJointTarget(joint: number, positionRad: number): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setJointTarget(joint, positionRad));
  }
  /** TNY-360: a leg's foot position, m. @deprecated use `client.tny360.setLegPosition()`. */
  setLegPosition(leg: number, xM: number, yM: number, zM: number): Promise<{ forwarded: boolean }> {
    return this.#facetCall("tny360", (f) => f.setLegPosition(leg, xM, yM, zM));
  }

  /** Any body command (POST /v1/commands/…) with this client's lease; resolves its `result`. */
  async command<T = Record<string, unknown>>(path: string, body: unknown): Promise<T> {
    const lease = this.#lease?.active ? this.#lease.id : undefined;
    const a = await this.#request<{ ok: true; result: T }>("POST", path, body, lease);
    return a.result;
  }

  /** Stop reconnecting, release control, close the stream. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#rejectReady(localError("BL_ERR_CLIENT_CLOSED"));
    this.#shutdownStream();
    const l = this.#lease;
    this.#lease = null;
    if (l) await l.release().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal REST call; resolves the parsed answer or rejects with ApiError. */
  async request<T>(method: string, path: string, body?: unknown, leaseId?: string): Promise<T> {
    return this.#request(method, path, body, leaseId);
  }

  /** @internal A lease stopped being renewable. */
  leaseLost(lease: ControlLease, reason: string): void {
    this.leaseEnded(lease);
    this.emit("control-lost", { leaseId: lease.id, reason });
  }
  /** @internal A lease was released or lost. */
  leaseEnded(lease: ControlLease): void {
    if (this.#lease === lease) this.#lease = null;
  }
  /** @internal */
  reportError(e: Error): void {
    this.emit("error", e);
  }

  // --- internals ---

  async #request<T>(method: string, path: string, body?: unknown, leaseId?: string): Promise<T> {
    // x-bodylink-client: every request is non-simple, so the server can tell it from a blind
    // cross-origin POST (docs/security.md), even without a body.
    const headers: Record<string, string> = { accept: "application/json", "x-bodylink-client": "sdk" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (leaseId) headers[LEASE_HEADER] = leaseId;
    let res: Awaited<ReturnType<FetchLike>>;
    try {
      res = await this.#fetch(this.url + path, body === undefined ? { method, headers } : { method, headers, body: JSON.stringify(body) });
    } catch (cause) {
      const e = new BodylinkError("BL_ERR_CLI_NO_RUNTIME", this.url);
      throw new ApiError({ code: e.code, status: 0, message: e.message }, { cause });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) {
      const p = parsed as Partial<ErrorAnswer> | null;
      throw new ApiError({
        code: p?.code ?? "BL_ERR_API_INTERNAL",
        status: res.status,
        message: p?.message ?? `HTTP ${res.status} from ${method} ${path}: ${text.slice(0, 200)}`,
        ...(p?.holder ? { holder: p.holder } : {}),
        ...(p?.problems ? { problems: p.problems } : {}),
      });
    }
    return parsed as T;
  }

  #assertOpen(): void {
    if (this.#closed) throw localError("BL_ERR_CLIENT_CLOSED");
  }

  #openStream(): void {
    if (this.#closed) return;
    let ws: WebSocketLike;
    try {
      ws = new this.#WebSocket(this.#streamUrl);
    } catch (e) {
      this.emit("error", e instanceof Error ? e : new Error(String(e)));
      this.#scheduleReconnect();
      return;
    }
    this.#ws = ws;
    ws.addEventListener("message", (ev) => {
      if (this.#ws === ws) this.#onMessage((ev as WebSocketEventLike).data);
    });
    ws.addEventListener("close", (ev) => {
      const e = ev as WebSocketEventLike;
      if (this.#ws === ws) this.#onClose(e.code ?? 1006, e.reason ?? "");
    });
    ws.addEventListener("error", () => {
      // A close event follows; the reason is reported there.
    });
  }

  #onMessage(data: unknown): void {
    const text = typeof data === "string" ? data : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? decodeUtf8(data) : null;
    if (text === null) return;
    let msg: { type?: unknown };
    try {
      msg = JSON.parse(text) as { type?: unknown };
    } catch {
      this.emit("error", new Error("robot API sent a message that is not JSON"));
      return;
    }
    if (msg.type === "hello") this.#onHello(msg as HelloMessage);
    else if (msg.type === "state") this.#onState(msg as StateMessage);
  }

  #onHello(h: HelloMessage): void {
    // After the first hello the body is fixed: a client typed (and used) for one body never
    // silently talks to another that took its URL over while it reconnected.
    const expected = this.#expectBody ?? (this.#everOpened ? this.#body : null);
    if (expected && h.body !== expected) {
      const err = localError("BL_ERR_CLIENT_WRONG_BODY", this.url, String(h.body), expected);
      this.#closed = true;
      this.#shutdownStream();
      this.#rejectReady(err);
      this.emit("error", err);
      return;
    }
    this.#body = h.body;
    this.#jointNames = Object.freeze(Array.isArray(h.joint_names) ? h.joint_names.map(String) : []);
    this.#open = true;
    this.#minDelayMs = Number.NaN; // a new connection may be a new runtime with another clock origin
    const reconnected = this.#everOpened;
    this.#everOpened = true;
    if (reconnected) this.emit("reconnected", { attempts: this.#attempts, downtimeMs: this.#now() - this.#downSinceMs });
    this.#attempts = 0;
    this.#resolveReady();
    this.emit("open", { body: h.body, reconnected });
  }

  #onState(m: StateMessage): void {
    if (!this.#open || m.body !== this.#body) return;
    const now = this.#now();
    const delay = now - m.timestamp_ms;
    if (Number.isFinite(delay)) {
      this.#minDelayMs = Number.isNaN(this.#minDelayMs) ? delay : Math.min(delay, this.#minDelayMs + (now - this.#lastRecvMs) * DRIFT_MS_PER_MS);
      this.#lastRecvMs = now;
    }
    this.#latest = m;
    this.#models = null;
    this.#state = undefined;
    this.#frozen = false;
    if (this.listenerCount("message") > 0) this.emit("message", this.#freezeLatest());
    if (this.listenerCount("state") > 0) {
      const s = this.getState();
      if (s) this.emit("state", s);
    }
  }

  #onClose(code: number, reason: string): void {
    const wasOpen = this.#open;
    this.#open = false;
    this.#ws = null;
    this.#latest = null;
    this.#models = null;
    this.#state = undefined;
    if (wasOpen) this.#downSinceMs = this.#now();
    const willReconnect = !this.#closed && this.#reconnect !== false;
    if (wasOpen) this.emit("disconnected", { code, reason, willReconnect });
    // (Not without fetch: its stand-in refuses every call, which would read as "nothing listens".)
    if (!this.#everOpened && !this.#probed && this.#fetch !== missingFetch) this.#probeRuntime();
    if (willReconnect) this.#scheduleReconnect();
    else if (!this.#everOpened) this.#rejectReady(localError("BL_ERR_CLI_NO_RUNTIME", this.url));
  }

  /**
   * The first stream attempt failed before any hello: ask the robot API once over HTTP. A refused
   * connection (nothing listens) fails connect() now instead of after connectTimeoutMs; any answer
   * (a runtime still starting, a token refused) leaves the retries and the timeout to decide.
   */
  #probeRuntime(): void {
    this.#probed = true;
    this.#fetch(`${this.url}/v1/health`, { method: "GET", headers: {} }).then(
      () => {},
      () => {
        if (this.#everOpened || this.#closed) return;
        this.#rejectReady(localError("BL_ERR_CLI_NO_RUNTIME", this.url));
        this.#shutdownStream();
      },
    );
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#reconnect === false) return;
    const { initialDelayMs, maxDelayMs } = this.#reconnect;
    const delayMs = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(this.#attempts, 16));
    this.#attempts++;
    if (this.#everOpened) this.emit("reconnecting", { attempt: this.#attempts, delayMs });
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#openStream();
    }, delayMs);
  }

  #shutdownStream(): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    const ws = this.#ws;
    this.#ws = null;
    this.#open = false;
    this.#latest = null;
    if (ws && (ws.readyState === 0 || ws.readyState === 1)) ws.close(1000, "client closed");
  }

  /** The newest message's models when it is current (connected, link ok, fresh), else null. */
  #current(): ReturnType<typeof buildModels> | null {
    const m = this.#latest;
    if (!m || !this.#open) return null;
    if (m.link !== "ok" && m.link !== "degraded") return null;
    if (this.ageMs() > this.#staleAfterMs) return null;
    if (!this.#models) this.#models = buildModels(m, this.#jointNames);
    return this.#models;
  }

  #freezeLatest(): Readonly<StateMessage> {
    const m = this.#latest!;
    if (!this.#frozen) {
      deepFreeze(m);
      this.#frozen = true;
    }
    return m;
  }

  #robotState(): RobotState | null {
    if (this.#state !== undefined) return this.#state;
    const mm = this.#models!;
    const m = this.#latest!;
    const motorsOk = mm.motors !== null || !BODY_SHAPES[m.body].motors;
    this.#state =
      mm.joints && motorsOk && mm.imu && mm.meta
        ? Object.freeze({ ...mm.meta, body: m.body, link: m.link as LinkStatus, joints: mm.joints, motors: mm.motors, imu: mm.imu, fields: this.#freezeLatest() })
        : null;
    return this.#state;
  }

  /** This client's facet for `kind` (one per kind, built on first use). */
  #facet<K extends BodyKind>(kind: K): BodyFacets[K] {
    const have = this.#facets[kind];
    if (have) return have;
    const f = new FACETS[kind](this.#host) as BodyFacets[K];
    this.#facets[kind] = f;
    return f;
  }

  /** A facet call as a promise: a wrong body rejects (ApiError) rather than throws. */
  async #facetCall<K extends BodyKind, T>(kind: K, call: (facet: BodyFacets[K]) => Promise<T>): Promise<T> {
    return call(this.#facet(kind));
  }

}

/**
 * A held control lease. Renews itself in the background until `release()`; if a renewal is
 * refused (expired, revoked by an emergency stop) it stops and the client emits `control-lost`.
 * Network errors during renewal are reported as `error` and retried until the lease would expire.
 */
export class ControlLease implements AsyncDisposable {
  readonly id: string;
  readonly owner: string;
  readonly leaseMs: number;
  #expiresAtEpochMs: number;
  #expiresAtLocalMs: number;
  /** @internal When it was granted, the client's clock. */
  readonly acquiredAtLocalMs: number;
  #active = true;
  #held = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #client: BodylinkClient;
  readonly #renewEveryMs: number;
  readonly #now: () => number;

  constructor(client: BodylinkClient, a: LeaseAnswer, renewEveryMs: number, now: () => number) {
    this.#client = client;
    this.id = a.lease_id;
    this.owner = a.owner;
    this.leaseMs = a.lease_ms;
    this.#expiresAtEpochMs = a.expires_at_epoch_ms;
    this.#now = now;
    this.acquiredAtLocalMs = now();
    this.#expiresAtLocalMs = this.acquiredAtLocalMs + a.lease_ms;
    this.#renewEveryMs = renewEveryMs;
    this.#schedule();
  }

  /** True until released or lost. */
  get active(): boolean {
    return this.#active;
  }
  /** When the lease runs out unless renewed (server's wall clock), ms since the Unix epoch. */
  get expiresAtEpochMs(): number {
    return this.#expiresAtEpochMs;
  }

  /** Release control now (idempotent). */
  async release(): Promise<void> {
    if (!this.#active) return;
    this.#stop();
    try {
      await this.#client.request("DELETE", "/v1/control", undefined, this.id);
    } catch (e) {
      // Already gone (expired or revoked) is what release wanted; anything else is reported.
      if (!(e instanceof ApiError && e.status === 403)) throw e;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** @internal Send no renewal until resume() (an emergency stop is on its way). */
  hold(): void {
    this.#held = true;
  }
  /** @internal Renew again (the emergency stop did not go through). */
  resume(): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.#active && !this.#timer) this.#schedule();
  }
  /** @internal The server revoked it (an emergency stop): end it here, with no request. */
  revoked(reason: string): void {
    if (!this.#active) return;
    this.#stop();
    this.#client.leaseLost(this, reason);
  }

  #stop(): void {
    this.#client.leaseEnded(this);
    this.#active = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    const t = setTimeout(() => void this.#renew(), this.#renewEveryMs);
    // Renewal alone must not keep a Node process alive: a script that ends lets the lease expire.
    (t as { unref?: () => void }).unref?.();
    this.#timer = t;
  }

  async #renew(): Promise<void> {
    this.#timer = null;
    if (!this.#active || this.#held) return;
    try {
      const a = await this.#client.request<LeaseAnswer>("PUT", "/v1/control", { lease_ms: this.leaseMs }, this.id);
      this.#expiresAtEpochMs = a.expires_at_epoch_ms;
      this.#expiresAtLocalMs = this.#now() + a.lease_ms;
    } catch (e) {
      if (!this.#active) return;
      if (e instanceof ApiError && (e.status === 403 || e.status === 409)) {
        this.#stop();
        this.#client.leaseLost(this, e.message);
        return;
      }
      this.#client.reportError(e instanceof Error ? e : new Error(String(e)));
      if (this.#now() >= this.#expiresAtLocalMs) {
        this.#stop();
        this.#client.leaseLost(this, "could not renew before the lease expired (server unreachable)");
        return;
      }
    }
    if (this.#active && !this.#held) this.#schedule();
  }
}

function decodeUtf8(d: ArrayBuffer | ArrayBufferView): string {
  const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  return new TextDecoder().decode(bytes);
}

async function missingFetch(): Promise<never> {
  throw new TypeError("no fetch implementation: pass { fetch } to connect()");
}

export type { ControlHolder };
