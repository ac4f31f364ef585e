/**
 * bodylink client SDK (`bodylink/client`): the robot API from Node or a browser.
 *
 * ```ts
 * import WebSocket from "ws"; // Node 20 only; browsers and Node ≥ 22 have a global WebSocket
 * import { connect } from "bodylink/client";
 * const robot = await connect("http://127.0.0.1:8080", { WebSocket, expectBody: "nao" });
 * const state = await robot.waitForState(); // the first complete state (frozen), instead of once("state")
 * state.joints.angles;                      // in robot.jointNames order
 * await using control = await robot.acquireControl({ leaseMs: 2000 });
 * await robot.nao.setJointTargets({ positions: { HeadYaw: 0.5 } }); // by name; the rest hold
 * ```
 *
 * - Each body's own readings and commands are on its facet, `robot.nao`, `robot.p7`,
 *   `robot.tny360` (`facets/`, one file per body of the registry). `connect()` resolves a union
 *   discriminated by `body`: narrow on it (or pass `expectBody`) and only that body's facet
 *   type-checks. At run time a facet of another body fails with ApiError
 *   `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent.
 * - State arrives over one WebSocket at 20 Hz; getters read the newest message (never a queue,
 *   `newest.ts`). Each returns a deep-frozen snapshot with its source `seq`, `timestampMs` and
 *   `epochMs`, or `null` when there is no current data: before the first state, while
 *   disconnected, when the body link is not ok/degraded, when an array's length does not match the
 *   body, or when the newest state is older than `staleAfterMs` (default 250 ms, five stream
 *   periods). `waitForState()` waits for the first (or the first matching) complete state.
 * - Commands go over REST (fetch, `rest.ts`). `acquireControl` takes a lease (`lease.ts`) and
 *   renews it in the background (every third of its duration) until `release()`,
 *   `releaseControl()` or `close()`; a lease works with `await using` or try/finally.
 * - The stream reconnects by itself (backoff 100 ms → 2 s) and says so through events:
 *   `disconnected`, `reconnecting`, `reconnected`; `control-lost` when renewal fails.
 *
 * Browser-safe: no `node:` imports; WebSocket and fetch are injectable (`options.ts`).
 */
import { BODY_KINDS } from "../bodies/registry.js";
import { Emitter } from "./events.js";
import { type BodyFacets, FACETS, type FacetHost } from "./facets/index.js";
import { ControlLease } from "./lease.js";
import type {
  BodyKind,
  ControlHolder,
  ControlStatusAnswer,
  EstopResetAnswer,
  EstopStateAnswer,
  EstopStopAnswer,
  HealthAnswer,
  HelloMessage,
  InfoAnswer,
  LeaseAnswer,
  StateMessage,
} from "./messages.js";
import { NewestState } from "./newest.js";
import type { AcquireOptions, ClientEvents, ConnectOptions, FetchLike, WaitForStateOptions, WebSocketConstructor } from "./options.js";
import { localError, missingFetch, type RestTarget, restCall } from "./rest.js";
import type { ImuState, JointState, MotorState, RobotState } from "./snapshots.js";
import { StreamConnection } from "./stream.js";
import { waitFor } from "./wait.js";

export { ApiError } from "./errors.js";
/** Health's `safety_code` words and what each means. */
export { SAFETY_CODES, SAFETY_FAULT, SAFETY_TEXT } from "../bodies/safety.js";
export type * from "./messages.js";
export * from "./facets/index.js";
export { BODY_SHAPES, type BodyShape, type EffortUnit, type ImuState, type JointState, type MotorState, type RobotState, type SnapshotMeta } from "./snapshots.js";
export type { AcquireOptions, ClientEvents, ConnectOptions, FetchLike, WaitForStateOptions, WebSocketConstructor, WebSocketEventLike, WebSocketLike } from "./options.js";
export { ControlLease } from "./lease.js";

const DEFAULT_STALE_MS = 250;

/** A client connected to a `K` body: `body` is `K` and its facet is `client[K]` (and no other body's is). For a union of kinds, a union of clients (narrow on `body`). */
export type BodyClient<K extends BodyKind> = K extends BodyKind ? BodylinkClient & { readonly body: K } & { readonly [P in K]: BodyFacets[P] } : never;
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
  readonly #rest: RestTarget;
  readonly #WebSocket: WebSocketConstructor;
  readonly #now: () => number;
  readonly #expectBody: BodyKind | undefined;
  readonly #reconnect: { initialDelayMs: number; maxDelayMs: number } | false;
  readonly #owner: string;
  #ws: StreamConnection | null = null;
  #open = false;
  #closed = false;
  #everOpened = false;
  /** The HTTP probe after a first failed stream attempt ran (see #probeRuntime). */
  #probed = false;
  #attempts = 0;
  #downSinceMs = 0;
  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  #body: BodyKind | null = null;
  readonly #newest: NewestState;
  #lease: ControlLease | null = null;
  /** Aborts (with BL_ERR_CLIENT_CLOSED) on close(): pending waitForState() calls end. */
  readonly #closing = new AbortController();
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
      return mm?.meta ? { message: this.#newest.frozen(), meta: mm.meta } : null;
    },
    newest: () => (this.#open && this.#newest.message ? this.#newest.frozen() : null),
    jointNames: () => this.#newest.jointNames,
    leaseId: () => (this.#lease?.active ? this.#lease.id : null),
    request: (method, path, body) => restCall(this.#rest, method, path, body),
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
    this.#streamUrl = `${base.replace(/^http/, "ws")}/v1/stream${opts.token ? `?token=${encodeURIComponent(opts.token)}` : ""}`;
    const g = globalThis as { WebSocket?: WebSocketConstructor; fetch?: FetchLike; performance?: { now(): number } };
    const WS = opts.WebSocket ?? g.WebSocket;
    if (!WS) throw localError("BL_ERR_CLIENT_NO_WEBSOCKET");
    this.#WebSocket = WS;
    this.#rest = { url: base, token: opts.token, fetch: opts.fetch ?? (g.fetch ? (g.fetch.bind(globalThis) as FetchLike) : missingFetch) };
    this.#now = opts.now ?? (() => (g.performance ? g.performance.now() : Date.now()));
    this.#newest = new NewestState(this.#now, opts.staleAfterMs ?? DEFAULT_STALE_MS);
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
    return this.#newest.jointNames;
  }
  /** True while the stream is open. */
  get connected(): boolean {
    return this.#open;
  }
  /** The lease this client holds, or null. */
  get control(): ControlLease | null {
    return this.#lease?.active ? this.#lease : null;
  }

  /** How old the newest state is, ms, against the best delivery seen (`newest.ts`); Infinity when there is none. */
  ageMs(): number {
    return this.#newest.ageMs();
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
    return this.#current() ? this.#newest.robotState() : null;
  }
  /** The body's full message as sent (wire spelling), deep-frozen; or null. */
  getBodyState(): Readonly<StateMessage> | null {
    return this.#current() ? this.#newest.frozen() : null;
  }

  /**
   * Call `callback` with every new complete state (frozen, same as getState()). Returns an
   * unsubscribe function. Slow callbacks never queue: the stream keeps only the newest message.
   */
  subscribe(callback: (state: RobotState) => void): () => void {
    return this.on("state", callback);
  }

  /**
   * The first complete state (as getState() returns it) for which `until` holds (default: any):
   * the current one at once if it does, else the next that does, so a program need not write
   * `once("state")` itself. Waits through reconnects. Rejects with ApiError
   * `BL_ERR_CLIENT_NO_STATE` after `timeoutMs` (default 5000), `BL_ERR_CLIENT_CLOSED` when the
   * client closes, the signal's reason when it aborts, or what `until` throws.
   */
  waitForState(until?: (state: RobotState) => boolean, opts: WaitForStateOptions = {}): Promise<RobotState> {
    return waitFor({ url: this.url, what: "complete state", current: () => this.getState(), on: (l) => this.on("state", l) }, until, opts, this.#closing.signal);
  }
  /**
   * The same for any state message, complete or not (wire spelling, deep-frozen, as `message`
   * events carry it): for a body or source whose getState() cannot be complete (a real TNY-360).
   */
  waitForMessage(until?: (message: Readonly<StateMessage>) => boolean, opts: WaitForStateOptions = {}): Promise<Readonly<StateMessage>> {
    return waitFor({ url: this.url, what: "state message", current: () => this.getBodyState(), on: (l) => this.on("message", l) }, until, opts, this.#closing.signal);
  }

  // --- REST reads ---

  fetchInfo(): Promise<InfoAnswer> {
    return this.request("GET", "/v1/info");
  }
  /** The state over REST (REST units: the NAO's battery temperature in whole °C). */
  fetchState(): Promise<StateMessage> {
    return this.request("GET", "/v1/state");
  }
  /** Health; a latched `estop` in it ends this client's lease (see fetchEstop). */
  async fetchHealth(): Promise<HealthAnswer> {
    const sentAt = this.#now();
    const h = await this.request<HealthAnswer>("GET", "/v1/health");
    this.#sawLatch(h.estop, sentAt);
    return h;
  }
  fetchControl(): Promise<ControlStatusAnswer> {
    return this.request("GET", "/v1/control");
  }

  // --- control ---

  /**
   * Take control. Resolves with a lease that renews itself in the background until released;
   * rejects with ApiError BL_ERR_AUTH_HELD (409, `holder` says who and until when) if another
   * client holds control. Use `await using lease = await client.acquireControl()` or try/finally.
   */
  async acquireControl(opts: AcquireOptions = {}): Promise<ControlLease> {
    if (this.#closed) throw localError("BL_ERR_CLIENT_CLOSED");
    if (this.#lease?.active) return this.#lease;
    const body: Record<string, unknown> = { owner: opts.owner ?? this.#owner };
    if (opts.leaseMs !== undefined) body["lease_ms"] = opts.leaseMs;
    const a = await this.request<LeaseAnswer>("POST", "/v1/control", body);
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
      const a = await this.request<EstopStopAnswer>("POST", "/v1/estop", { ...(reason === undefined ? {} : { reason }), ...opts });
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
    const a = await this.request<EstopStateAnswer>("GET", "/v1/estop");
    this.#sawLatch(a, sentAt);
    return a;
  }

  /** Release the emergency-stop latch (a reason is required). Nothing moves until a client takes control and commands. */
  resetEstop(reason: string, opts: { source?: string } = {}): Promise<EstopResetAnswer> {
    return this.request("POST", "/v1/estop/reset", { reason, ...opts });
  }

  /** Any body command (POST /v1/commands/…) with this client's lease; resolves its `result`. */
  async command<T = Record<string, unknown>>(path: string, body: unknown): Promise<T> {
    const lease = this.#lease?.active ? this.#lease.id : undefined;
    const a = await this.request<{ ok: true; result: T }>("POST", path, body, lease);
    return a.result;
  }

  /** Stop reconnecting, release control, close the stream. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#rejectReady(localError("BL_ERR_CLIENT_CLOSED"));
    this.#closing.abort(localError("BL_ERR_CLIENT_CLOSED"));
    this.#shutdownStream();
    const l = this.#lease;
    this.#lease = null;
    if (l) await l.release().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal REST call; resolves the parsed answer or rejects with ApiError. */
  request<T>(method: string, path: string, body?: unknown, leaseId?: string): Promise<T> {
    return restCall(this.#rest, method, path, body, leaseId);
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

  /**
   * An answer sent after `sentAtLocalMs` says the latch is on: a lease this client took before
   * then was revoked by that stop (nobody gets a lease while latched), so end it here instead of
   * learning it from a refused renewal.
   */
  #sawLatch(e: { readonly latched: boolean; readonly reason: string | null } | null | undefined, sentAtLocalMs: number): void {
    const l = this.#lease;
    if (e?.latched && l?.active && l.acquiredAtLocalMs < sentAtLocalMs) l.revoked(`revoked by the emergency stop${e.reason ? ` (${e.reason})` : ""}`);
  }

  #openStream(): void {
    if (this.#closed) return;
    try {
      this.#ws = new StreamConnection(this.#streamUrl, this.#WebSocket, {
        hello: (h) => this.#onHello(h),
        state: (m) => this.#onState(m),
        closed: (code, reason) => this.#onClose(code, reason),
        error: (e) => this.emit("error", e),
      });
    } catch (e) {
      this.emit("error", e instanceof Error ? e : new Error(String(e)));
      this.#scheduleReconnect();
    }
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
    this.#newest.newConnection(Object.freeze(Array.isArray(h.joint_names) ? h.joint_names.map(String) : []));
    this.#open = true;
    const reconnected = this.#everOpened;
    this.#everOpened = true;
    if (reconnected) this.emit("reconnected", { attempts: this.#attempts, downtimeMs: this.#now() - this.#downSinceMs });
    this.#attempts = 0;
    this.#resolveReady();
    this.emit("open", { body: h.body, reconnected });
  }

  #onState(m: StateMessage): void {
    if (!this.#open || m.body !== this.#body) return;
    this.#newest.accept(m);
    if (this.listenerCount("message") > 0) this.emit("message", this.#newest.frozen());
    if (this.listenerCount("state") > 0) {
      const s = this.getState();
      if (s) this.emit("state", s);
    }
  }

  #onClose(code: number, reason: string): void {
    const wasOpen = this.#open;
    this.#open = false;
    this.#ws = null;
    this.#newest.clear();
    if (wasOpen) this.#downSinceMs = this.#now();
    const willReconnect = !this.#closed && this.#reconnect !== false;
    if (wasOpen) this.emit("disconnected", { code, reason, willReconnect });
    // (Not without fetch: its stand-in refuses every call, which would read as "nothing listens".)
    if (!this.#everOpened && !this.#probed && this.#rest.fetch !== missingFetch) this.#probeRuntime();
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
    this.#rest.fetch(`${this.url}/v1/health`, { method: "GET", headers: {} }).then(
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
    this.#ws?.close();
    this.#ws = null;
    this.#open = false;
    this.#newest.clear();
  }

  /** The newest message's models when it is current (connected, link ok, fresh), else null. */
  #current(): ReturnType<NewestState["current"]> {
    return this.#open ? this.#newest.current() : null;
  }

  /** This client's facet for `kind` (one per kind, built on first use). */
  #facet<K extends BodyKind>(kind: K): BodyFacets[K] {
    const have = this.#facets[kind];
    if (have) return have;
    const f = new FACETS[kind](this.#host) as BodyFacets[K];
    this.#facets[kind] = f;
    return f;
  }
}

export type { ControlHolder };
