/**
 * bodylink client SDK (`bodylink/client`): the robot API from Node or a browser.
 *
 * ```ts
 * import WebSocket from "ws"; // Node 20 only; browsers and Node ≥ 22 have a global WebSocket
 * import { connect } from "bodylink/client";
 * const robot = await connect("http://127.0.0.1:8080", { WebSocket });
 * robot.getJointState();            // frozen { seq, timestampMs, epochMs, angles, velocities, efforts } or null
 * await using control = await robot.acquireControl({ leaseMs: 2000 });
 * await robot.setJointTargets({ stiffness: new Array(26).fill(0.5) });
 * ```
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
  NaoFields,
  StateMessage,
} from "./messages.js";
import { BODY_SHAPES, buildModels, deepFreeze, finiteArray, type ImuState, type JointState, type MotorState, type RobotState, type SnapshotMeta } from "./snapshots.js";

export { ApiError } from "./errors.js";
export type * from "./messages.js";
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
  /** connect() fails if no hello arrives within this. Defaults to 5000 ms. */
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

/** Joint targets in the API's joint order (`client.jointNames`): NAO 26 values each, TNY-360 14 positions. */
export interface NaoJointTargets {
  positions?: readonly number[];
  stiffness?: readonly number[];
}
export type NaoLedGroup = "chest" | "left_ear" | "right_ear" | "left_eye" | "right_eye" | "left_foot" | "right_foot" | "skull";

export interface BatteryState extends SnapshotMeta {
  /** 0..1 */
  readonly charge: number;
  /** A, negative while discharging. */
  readonly currentA: number;
  /** LoLA's scale (0.1 applied twice: 28.5 °C reads 2.8); `fetchState()` gives whole °C. */
  readonly temperatureLola: number;
  readonly charging: boolean;
  /** Battery status register, raw bit field. */
  readonly status: number;
}
export interface TouchState extends SnapshotMeta {
  readonly chestButton: boolean;
  readonly headFront: boolean;
  readonly headMiddle: boolean;
  readonly headRear: boolean;
  readonly leftHand: boolean;
  readonly rightHand: boolean;
  readonly leftFoot: boolean;
  readonly rightFoot: boolean;
}
export interface FootState extends SnapshotMeta {
  /** kg: front left, front right, rear left, rear right. */
  readonly leftPressureKg: readonly number[];
  readonly rightPressureKg: readonly number[];
  readonly leftWeightKg: number;
  readonly rightWeightKg: number;
  /** m, x y in each ankle frame; 0 when unloaded. */
  readonly leftCenterOfPressureM: readonly number[];
  readonly rightCenterOfPressureM: readonly number[];
}
export interface SonarState extends SnapshotMeta {
  readonly leftM: number;
  readonly rightM: number;
}
export interface HeadState extends SnapshotMeta {
  readonly voltageV: number;
  readonly powerW: number;
  readonly currentA: number;
  readonly faceTemperatureC: number;
}

const DEFAULT_STALE_MS = 250;
const DRIFT_MS_PER_MS = 0.001; // how fast the best-case delay may rise (clock drift allowance)

function localError(code: ErrorCode, ...args: Array<string | number>): ApiError {
  const e = new BodylinkError(code, ...args);
  return new ApiError({ code: e.code, status: e.status, message: e.message });
}

/** Connect to a robot API at `url` (http://host:port); resolves once the stream's hello arrived. */
export async function connect(url: string, opts: ConnectOptions = {}): Promise<BodylinkClient> {
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

  /** NAO: battery. null on other bodies. */
  getBatteryState(): BatteryState | null {
    const n = this.#nao();
    if (!n) return null;
    const b = n.f.battery;
    if (!b || !allFinite(b.charge, b.current, b.temperature, b.status) || typeof b.charging !== "boolean") return null;
    return Object.freeze({ ...n.meta, charge: b.charge, currentA: b.current, temperatureLola: b.temperature, charging: b.charging, status: b.status });
  }
  /** NAO: touch, one value per hand and foot. null on other bodies. */
  getTouchState(): TouchState | null {
    const n = this.#nao();
    const t = n?.f.touch;
    if (!n || !t) return null;
    const v = [t.chest_button, t.head_front, t.head_middle, t.head_rear, t.left_hand, t.right_hand, t.left_foot, t.right_foot];
    if (!v.every((x) => typeof x === "boolean")) return null;
    return Object.freeze({
      ...n.meta,
      chestButton: t.chest_button,
      headFront: t.head_front,
      headMiddle: t.head_middle,
      headRear: t.head_rear,
      leftHand: t.left_hand,
      rightHand: t.right_hand,
      leftFoot: t.left_foot,
      rightFoot: t.right_foot,
    });
  }
  /** NAO: foot pressure sensors, weights, centres of pressure. null on other bodies. */
  getFootState(): FootState | null {
    const n = this.#nao();
    if (!n) return null;
    const f = n.f;
    const l = finiteArray(f.left_foot_pressure, 4);
    const r = finiteArray(f.right_foot_pressure, 4);
    const lc = finiteArray(f.center_of_pressure?.left, 2);
    const rc = finiteArray(f.center_of_pressure?.right, 2);
    if (!l || !r || !lc || !rc || !f.foot_weight || !allFinite(f.foot_weight.left, f.foot_weight.right)) return null;
    return Object.freeze({
      ...n.meta,
      leftPressureKg: l,
      rightPressureKg: r,
      leftWeightKg: f.foot_weight.left,
      rightWeightKg: f.foot_weight.right,
      leftCenterOfPressureM: lc,
      rightCenterOfPressureM: rc,
    });
  }
  /** NAO: sonar distances. null on other bodies. */
  getSonarState(): SonarState | null {
    const n = this.#nao();
    const s = n && finiteArray(n.f.sonar, 2);
    if (!n || !s) return null;
    return Object.freeze({ ...n.meta, leftM: s[0]!, rightM: s[1]! });
  }
  /** NAO: head power monitor and face temperature. null on other bodies. */
  getHeadState(): HeadState | null {
    const n = this.#nao();
    const h = n?.f.head;
    if (!n || !h || !allFinite(h.voltage, h.power, h.current, h.face_temperature)) return null;
    return Object.freeze({ ...n.meta, voltageV: h.voltage, powerW: h.power, currentA: h.current, faceTemperatureC: h.face_temperature });
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
  fetchHealth(): Promise<HealthAnswer> {
    return this.#request("GET", "/v1/health");
  }
  fetchControl(): Promise<ControlStatusAnswer> {
    return this.#request("GET", "/v1/control");
  }
  /** NAO: the chest board's decoded preferences. */
  fetchPreferences(): Promise<unknown> {
    return this.#request("GET", "/v1/preferences");
  }
  /** NAO: motor-board handshake results. */
  fetchBoards(): Promise<unknown[]> {
    return this.#request("GET", "/v1/boards");
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
  emergencyStop(reason?: string, opts: { category?: 0 | 1; source?: string } = {}): Promise<EstopStopAnswer> {
    return this.#request("POST", "/v1/estop", { ...(reason === undefined ? {} : { reason }), ...opts });
  }

  /** The emergency-stop latch. */
  fetchEstop(): Promise<EstopStateAnswer> {
    return this.#request("GET", "/v1/estop");
  }

  /** Release the emergency-stop latch (a reason is required). Nothing moves until a client takes control and commands. */
  resetEstop(reason: string, opts: { source?: string } = {}): Promise<EstopResetAnswer> {
    return this.#request("POST", "/v1/estop/reset", { reason, ...opts });
  }

  // --- NAO commands (need control) ---

  /**
   * Joint targets in `jointNames` order. NAO: positions and/or stiffness (26 each); out-of-limit
   * positions are clamped and listed. TNY-360: positions (14); out-of-limit values are refused.
   */
  setJointTargets(targets: NaoJointTargets): Promise<AppliedAnswer> {
    return this.command("/v1/commands/joints", targets);
  }
  /** NAO: LED intensities 0..1 per group, LoLA's index order within each group. */
  setLeds(groups: Partial<Record<NaoLedGroup, readonly number[]>>): Promise<AppliedAnswer> {
    return this.command("/v1/commands/leds", groups);
  }
  /** NAO: sonar transmitters on/off. */
  setSonar(on: { left: boolean; right: boolean }): Promise<AppliedAnswer> {
    return this.command("/v1/commands/sonar", on);
  }
  /** NAO and TNY-360: stiffness up into the stand posture; resolves the estimated seconds. */
  async smoothEnable(): Promise<{ estimatedS: number }> {
    const r = await this.command<{ estimated_s: number }>("/v1/commands/smooth-enable", {});
    return { estimatedS: r.estimated_s };
  }
  /** NAO and TNY-360: into the rest posture, then stiffness off; resolves the estimated seconds. */
  async smoothDisable(): Promise<{ estimatedS: number }> {
    const r = await this.command<{ estimated_s: number }>("/v1/commands/smooth-disable", {});
    return { estimatedS: r.estimated_s };
  }

  // --- P7 commands (need control) ---

  /**
   * P7: move all 7 joints to `positionsRad` under a speed limit (rad/s: one number or 7; default
   * π/3); joints arrive together. Targets outside the command limits are refused (ApiError 400).
   */
  async moveJoints(positionsRad: readonly number[], opts: { speedRadS?: number | readonly number[] } = {}): Promise<{ etaS: number; speedRadS: readonly number[] }> {
    const body = opts.speedRadS === undefined ? { positions: positionsRad } : { positions: positionsRad, speed: opts.speedRadS };
    const r = await this.command<{ eta_s: number; speed_rad_s: number[] }>("/v1/commands/move-joints", body);
    return { etaS: r.eta_s, speedRadS: Object.freeze(r.speed_rad_s) };
  }
  /** P7: each joint tracks `positionsRad` at full speed; each call replaces the previous targets. */
  async servoJoints(positionsRad: readonly number[]): Promise<void> {
    await this.command("/v1/commands/servo-joints", { positions: positionsRad });
  }
  /** P7: clear the error id of `joint` (0..6) or of every joint; resolves the joints cleared. */
  async clearError(joint?: number): Promise<{ clearedJoints: readonly number[] }> {
    const r = await this.command<{ cleared_joints: number[] }>("/v1/commands/clear-error", joint === undefined ? {} : { joint });
    return { clearedJoints: Object.freeze(r.cleared_joints) };
  }

  // --- TNY-360 commands (need control; joint targets: setJointTargets({ positions }) with 14 values) ---

  /** TNY-360: walk at x, y (m/s) and yaw (rad/s). Renew within 500 ms or the velocity decays to zero. */
  setVelocity(v: { xMS: number; yMS: number; yawRadS: number; clearOverrides?: boolean }): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/velocity", { x: v.xMS, y: v.yMS, yaw: v.yawRadS, ...(v.clearOverrides === undefined ? {} : { clear_overrides: v.clearOverrides }) });
  }
  /** TNY-360: body posture, position m (z = height) and rotation rad (Euler XYZ). */
  setPosture(p: { xM: number; yM: number; zM: number; rxRad: number; ryRad: number; rzRad: number; clearOverrides?: boolean }): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/posture", {
      x: p.xM,
      y: p.yM,
      z: p.zM,
      rx: p.rxRad,
      ry: p.ryRad,
      rz: p.rzRad,
      ...(p.clearOverrides === undefined ? {} : { clear_overrides: p.clearOverrides }),
    });
  }
  /** TNY-360: power joints, bit i = joint i (0x0FFF = the 12 leg joints). */
  setEnabledMask(mask: number): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/enabled", { mask });
  }
  /** TNY-360: gait. */
  setGait(gait: "Creep" | "Walk" | "Run"): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/gait", { gait });
  }
  /** TNY-360: one joint's target, rad (outside its limits: refused). */
  setJointTarget(joint: number, positionRad: number): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/joint", { joint, position: positionRad });
  }
  /** TNY-360: a leg's foot position in the planner frame, m (leg 0 FL, 1 BL, 2 BR, 3 FR). */
  setLegPosition(leg: number, xM: number, yM: number, zM: number): Promise<{ forwarded: boolean }> {
    return this.command("/v1/commands/leg", { leg, x: xM, y: yM, z: zM });
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
    if (this.#expectBody && h.body !== this.#expectBody) {
      const err = localError("BL_ERR_CLIENT_WRONG_BODY", this.url, String(h.body), this.#expectBody);
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
    if (willReconnect) this.#scheduleReconnect();
    else if (!this.#everOpened) this.#rejectReady(localError("BL_ERR_CLI_NO_RUNTIME", this.url));
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

  #nao(): { f: Partial<NaoFields>; meta: SnapshotMeta } | null {
    const mm = this.#current();
    if (!mm?.meta || this.#latest?.body !== "nao") return null;
    return { f: this.#latest as Partial<NaoFields>, meta: mm.meta };
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
  #active = true;
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
    this.#expiresAtLocalMs = now() + a.lease_ms;
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
    if (!this.#active) return;
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
    if (this.#active) this.#schedule();
  }
}

function allFinite(...v: unknown[]): boolean {
  for (const x of v) if (typeof x !== "number" || !Number.isFinite(x)) return false;
  return true;
}

function decodeUtf8(d: ArrayBuffer | ArrayBufferView): string {
  const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  return new TextDecoder().decode(bytes);
}

async function missingFetch(): Promise<never> {
  throw new TypeError("no fetch implementation: pass { fetch } to connect()");
}

export type { ControlHolder };
