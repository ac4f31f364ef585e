/**
 * One runtime's seat in the fleet (`serve --fleet nats://HOST:PORT`): it publishes the robot's
 * state, health and events, keeps its presence record, answers commands by request/reply, grants
 * fleet leases through the runtime's one Authority, and obeys fleet e-stops through the runtime's
 * one latch. Names and messages: subjects.ts; the reference: docs/fleet.md.
 *
 * The body never waits for the broker. Everything here runs on the host's main thread, on timers
 * and NATS callbacks, outside the cycle; it reads the body only through the API adapter's
 * snapshots (`source()`, `read()`), the Authority and the latch. Losing the broker costs nothing
 * but messages: the client reconnects with backoff (100 ms doubling to 2 s), publishing pauses
 * while disconnected (no backlog of stale states), and `/v1/health` (`fleet`) and the log say so.
 *
 * A stop no queue can hold: e-stops (`bodylink.estop`, `bodylink.NAME.estop`) ride a NATS
 * connection of their own, opened at start and subscribed to nothing else. nats.js reads each
 * connection's socket through one parser and calls the subscriptions' callbacks in the order the
 * bytes arrived, and the broker queues each connection's messages in one outbound buffer: an
 * e-stop on the connection that carries `cmd.*` would wait behind every request of a flood, and be
 * lost with them when the broker cuts that connection as a slow consumer. On its own connection it
 * waits behind nothing but other e-stops. Every other request passes the {@link RequestGate}
 * (a token bucket per sender and for all, a bound on requests in flight; gate.ts), so a flood costs
 * a lookup per message. Both connections reconnect at once after a cut (then back off).
 *
 * One authority: a fleet lease is `authority.acquire(owner, "fleet", ms)`, so it and every local
 * lease (API, LoLA, TNY-360) exclude each other and the refusal names the holder. The granted
 * lease is also written to the `bodylink_leases` bucket with compare-and-set on the revision
 * (create when absent, update at the revision read), so the fleet sees who holds each robot, two
 * instances claiming one name cannot both grant, and a record of a holder that vanished expires
 * with the bucket's max age. Presence (`bodylink_robots`) is claimed the same way.
 *
 * Signatures (sign.ts, docs/security.md "The fleet"): what moves the robot or releases its latch
 * (reset, acquire, renew, release, every body command) must be signed by an operator key in
 * `operators`; reads and e-stops need nothing (a signed e-stop records the operator as its source).
 * Every answer and the presence record are signed with the robot's own key, so fleet clients can
 * tell this robot from anyone claiming its name.
 *
 * Prepare side throughout (allocates).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import Type, { type TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { BodylinkError } from "../errors.js";
import { type ControlAuthority, type LeaseInfo, MIN_LEASE_MS } from "../runtime/authority.js";
import { describeEstop, type EstopState } from "../runtime/estop.js";
import type { BodyRuntime } from "../runtime/robot.js";
import type { BodyAdapter, CommandRoute } from "../serve/api/adapter.js";
import { estopAnswer, heldError, holderAnswer } from "../serve/api/answers.js";
import { unknownLease } from "../serve/api/guard.js";
import { type FleetConnectOptions, natsOptions, redactUrl } from "./connect.js";
import type { FleetGateway, FleetRobotView, FleetScatterAnswer } from "../serve/api/fleet-gateway.js";
import { FleetClient, type FleetTrust, type ScatterResult } from "./client.js";
import { type GateCounters, type RequestLimits, RequestGate, senderOf } from "./gate.js";
import { ensureEventStream, headerGetter, headersOf, openBucket, paceReads } from "./nats.js";
import { isSignedPresence, RequestVerifier, SIG_HEADERS, type SigningKey, signPresence, signReply, type TrustedKeys, trustedKeys, verifyPresence } from "./sign.js";
import {
  CONTROL_COMMANDS,
  type ErrorAnswer,
  type EstopReply,
  FLEET_LEASE_HEADER,
  FLEET_MAX_LEASE_MS,
  type FleetEvent,
  type FleetHealth,
  type FleetLeaseRecord,
  LEASES_BUCKET,
  PRESENCE_TTL_MS,
  type PresenceRecord,
  READ_COMMANDS,
  ROBOTS_BUCKET,
  subject,
} from "./subjects.js";

/** What the bridge uses of the body: any body's runtime (or the fleet bench's light robot: a latch, no cycle). */
export type FleetRobot = Pick<BodyRuntime, "kind" | "authority" | "health" | "estop" | "resetEstop" | "estopState">;
/** What the bridge uses of the robot API's adapter: the state it publishes and the commands it answers. */
export type FleetAdapter = Pick<BodyAdapter, "kind" | "jointNames" | "source" | "read" | "commands">;

export interface FleetBridgeOptions {
  readonly name: string;
  readonly robot: FleetRobot;
  readonly connect: FleetConnectOptions;
  /** State messages per second (default 10). */
  readonly stateRateHz?: number;
  /** Presence TTL (default 5000 ms); refreshed every third of it. Every runtime of a fleet must use the same. */
  readonly presenceTtlMs?: number;
  readonly version: string;
  readonly log?: (level: "info" | "warn" | "error", line: string) => void;
  /** Admission limits for requests (not e-stops); defaults: gate.ts's DEFAULT_REQUEST_LIMITS. */
  readonly requestLimits?: Partial<RequestLimits>;
  /** This robot's key: signs its answers and presence. Null (an insecure fleet): nothing it says can be verified. */
  readonly signingKey?: SigningKey | null;
  /** Operator keys whose signatures this robot obeys; none: it can be seen and stopped, never commanded or reset. */
  readonly operators?: TrustedKeys;
  /** The fleet's robot keys: the /fleet page counts only presence and answers they sign. */
  readonly robots?: TrustedKeys;
  /** Count unverifiable presence and answers on the /fleet page (marked unverified): `--fleet-insecure`. */
  readonly insecure?: boolean;
  /** An operator key for the /fleet page's resets (else they are unsigned, and robots refuse them). */
  readonly operatorKey?: SigningKey | null;
}

export type FleetConnectionState = "connecting" | "connected" | "disconnected" | "closed";

/** What `/v1/health` says under `fleet`. */
export interface FleetStatus {
  readonly url: string;
  readonly name: string;
  readonly connection: FleetConnectionState;
  /** Presence claimed ("ok"), not yet, or refused because another runtime holds the name. */
  readonly presence: "pending" | "ok" | "name-taken";
  readonly since_epoch_ms: number;
  readonly disconnects: number;
  readonly last_error: string | null;
  readonly published: { readonly state: number; readonly health: number; readonly events: number };
  /** The e-stop connection (its own socket, subscribed to e-stops only). */
  readonly estop: { readonly connection: FleetConnectionState; readonly disconnects: number; readonly received: number };
  /** Requests (commands, resets) admitted, refused with an answer (429/503), and dropped unanswered. */
  readonly requests: Readonly<GateCounters> & {
    readonly in_flight: number;
    readonly senders: number;
    /** Floods shed: times the bridge stopped taking requests and dropped the broker's backlog for it. */
    readonly sheds: number;
    readonly shedding: boolean;
  };
}

const MAX_REQUEST_BYTES = 64 * 1024;
/** Signature checks on the e-stop path per second (each names the stop's operator; none is needed to stop). */
const ESTOP_CHECKS_PER_S = 20;
const STATE_RATE_MAX_HZ = 50;
/** How long an e-stop's reply waits for the core to take the latch (a cycle or two); past it, it answers with the latch as requested. */
const ESTOP_ACK_WAIT_MS = 250;
/** How long a flood makes the bridge take no requests: 1 s, doubling while floods follow each other, at most 8 s. */
const SHED_MIN_MS = 1000;
const SHED_MAX_MS = 8000;

const AcquireSchema = Type.Object(
  {
    owner: Type.String({ minLength: 1, maxLength: 64 }),
    lease_ms: Type.Optional(Type.Integer({ minimum: MIN_LEASE_MS, maximum: FLEET_MAX_LEASE_MS })),
  },
  { additionalProperties: false },
);
const RenewSchema = Type.Object({ lease_ms: Type.Optional(Type.Integer({ minimum: MIN_LEASE_MS, maximum: FLEET_MAX_LEASE_MS })) }, { additionalProperties: false });
const EstopSchema = Type.Object(
  {
    category: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
    by: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
const ResetSchema = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 200 }), by: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });

type Validator = ReturnType<typeof Compile>;
const compiled = new WeakMap<TSchema, Validator>();
function validatorOf(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (!v) {
    v = Compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** The body as JSON, validated against `schema`; or the robot API's 400 naming the field. */
function parseBody<T>(msg: Msg, schema: TSchema): T | BodylinkError {
  if (msg.data.length > MAX_REQUEST_BYTES) return new BodylinkError("BL_ERR_API_BODY_TOO_LARGE", String(MAX_REQUEST_BYTES));
  let body: unknown = {};
  if (msg.data.length > 0) {
    try {
      body = JSON.parse(msg.string());
    } catch (e) {
      return new BodylinkError("BL_ERR_API_BAD_REQUEST", `the body is not JSON: ${(e as Error).message}`);
    }
  }
  const v = validatorOf(schema);
  if (!v.Check(body)) {
    const first = v.Errors(body)[0];
    const where = first?.instancePath ? `body${first.instancePath.replace(/\//g, ".")}` : "body";
    const finite = first?.message.includes("number") ? " (a finite number: NaN and Infinity are refused)" : "";
    return new BodylinkError("BL_ERR_API_BAD_REQUEST", `${where} ${first?.message ?? "is invalid"}${finite}`);
  }
  return body as T;
}

const isError = (v: unknown): v is ErrorAnswer => typeof v === "object" && v !== null && typeof (v as ErrorAnswer).code === "string" && typeof (v as ErrorAnswer).status === "number";

export function errorAnswer(e: BodylinkError): ErrorAnswer {
  const x = e as BodylinkError & { holder?: unknown; problems?: unknown };
  return { code: e.code, status: e.status, message: e.message, ...(x.holder ? { holder: x.holder } : {}), ...(x.problems ? { problems: x.problems } : {}) };
}

export class FleetBridge implements FleetGateway {
  readonly name: string;
  readonly instance = randomUUID();
  readonly #o: FleetBridgeOptions;
  readonly #robot: FleetRobot;
  #adapter!: FleetAdapter;
  #urls: PresenceRecord["urls"] = { api: null, lola: null, tny: null };
  readonly #log: NonNullable<FleetBridgeOptions["log"]>;
  readonly #ttlMs: number;
  readonly #startedAt = new Date().toISOString();
  readonly #commands = new Map<string, CommandRoute>();
  #nc: NatsConnection | null = null;
  /** The e-stop connection: subscribed to e-stops only, so nothing queues ahead of them. */
  #estopNc: NatsConnection | null = null;
  #estopConnection: FleetConnectionState = "connecting";
  #estopDisconnects = 0;
  #estopsReceived = 0;
  #estopClient: FleetClient | null = null;
  readonly #gate: RequestGate;
  /** The request subscriptions (commands, resets): dropped while a flood is shed. */
  #requestSubs: Subscription[] = [];
  #shedding = false;
  #sheds = 0;
  #shedMs = SHED_MIN_MS;
  #shedEndedAt = -Infinity;
  #shedTimer: NodeJS.Timeout | undefined;
  #paceWarned = false;
  #robots: KV | null = null;
  #leases: KV | null = null;
  #subs: Subscription[] = [];
  #timers: NodeJS.Timeout[] = [];
  #connection: FleetConnectionState = "connecting";
  #presence: FleetStatus["presence"] = "pending";
  #presenceRevision = 0;
  #since = Date.now();
  #disconnects = 0;
  #lastError: string | null = null;
  #published = { state: 0, health: 0, events: 0 };
  #lastStateSeq = -1;
  #lastLink = "";
  /** Fleet leases this runtime granted: lease id → the leases bucket's revision of its record. */
  readonly #fleetLeases = new Map<string, number>();
  #closed = false;
  #fleetClient: FleetClient | null = null;
  #healthSub: Subscription | null = null;
  readonly #healthCache = new Map<string, { h: FleetHealth; at: number }>();
  #joined: Promise<void>;
  #resolveJoined!: () => void;
  readonly #offAuthority: Array<() => void> = [];
  readonly #signer: SigningKey | null;
  readonly #verifier: RequestVerifier;
  #estopChecks = { since: 0, n: 0 };
  /** Only this robot's own key: a presence record under our name that it did not sign is not a claim. */
  readonly #self: TrustedKeys;

  constructor(o: FleetBridgeOptions) {
    this.#o = o;
    this.name = o.name;
    this.#signer = o.signingKey ?? null;
    if (this.#signer && this.#signer.name !== o.name)
      throw new BodylinkError("BL_ERR_FLEET_CONFIG", `the fleet identity is ${this.#signer.name}, but this runtime is named ${o.name}; start it with --name ${this.#signer.name}`);
    this.#verifier = new RequestVerifier(o.operators ?? new Map());
    this.#self = this.#signer ? trustedKeys([{ name: o.name, key: this.#signer.publicKey }]) : new Map();
    this.#robot = o.robot;
    this.#log = o.log ?? (() => undefined);
    this.#ttlMs = o.presenceTtlMs ?? PRESENCE_TTL_MS;
    this.#gate = new RequestGate(o.requestLimits);
    this.#joined = new Promise((r) => {
      this.#resolveJoined = r;
    });
    // Validate the options now, so `serve` refuses bad ones with one clear line before it runs.
    natsOptions(o.connect);
  }

  /** Resolves once the bridge has joined the fleet (connected, buckets open, presence claimed). */
  joined(): Promise<void> {
    return this.#joined;
  }

  /**
   * Connect in the background (the runtime does not wait for the broker) and keep trying. `adapter`
   * is the robot API's (one set of per-cycle listeners); `urls` go into the presence record.
   */
  start(adapter: FleetAdapter, urls: PresenceRecord["urls"]): void {
    this.#adapter = adapter;
    this.#urls = urls;
    for (const c of adapter.commands) {
      const name = c.path.split("/").pop()!;
      if (!(CONTROL_COMMANDS as readonly string[]).includes(name)) this.#commands.set(name, c);
    }
    void this.#runEstop().catch((e: unknown) => {
      this.#lastError = `e-stop connection: ${(e as Error).message}`;
      this.#log("error", `fleet: ${this.#lastError}`);
    });
    void this.#run().catch((e: unknown) => {
      this.#lastError = (e as Error).message;
      this.#log("error", `fleet: ${this.#lastError}`);
    });
  }

  status(): FleetStatus {
    return {
      url: redactUrl(this.#o.connect.url),
      name: this.name,
      connection: this.#connection,
      presence: this.#presence,
      since_epoch_ms: this.#since,
      disconnects: this.#disconnects,
      last_error: this.#lastError,
      published: { ...this.#published },
      estop: { connection: this.#estopConnection, disconnects: this.#estopDisconnects, received: this.#estopsReceived },
      requests: { ...this.#gate.counters, in_flight: this.#gate.inFlight, senders: this.#gate.senders, sheds: this.#sheds, shedding: this.#shedding },
    };
  }

  /** The open connection (the dashboard's gateway reuses it), or null before the first connect. */
  get connection(): NatsConnection | null {
    return this.#nc;
  }

  /**
   * A connection that keeps trying: the first dial after a cut (the broker going away, or cutting
   * us as a slow consumer) is at once, since nats.js waits only when the last dial is more recent
   * than the delay; failed dials then back off, 100 ms doubling to 2 s, until one succeeds.
   */
  async #dial(what: string, on: { disconnect: () => void; reconnect: () => void; closed: () => void }): Promise<NatsConnection | null> {
    let delayMs = 100;
    const nc = await connect({
      ...natsOptions(this.#o.connect),
      name: `bodylink ${this.name}${what}`,
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => {
        const d = delayMs;
        delayMs = Math.min(2000, delayMs * 2);
        return d + Math.random() * 50;
      },
      pingInterval: 2000,
      maxPingOut: 2,
    });
    if (this.#closed) {
      await nc.close();
      return null;
    }
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect") on.disconnect();
        else if (s.type === "reconnect") {
          delayMs = 100;
          on.reconnect();
        } else if (s.type === "error") this.#lastError = `${what ? `${what.trim()}: ` : ""}${s.error.message}`;
      }
    })();
    void nc.closed().then((err) => {
      on.closed();
      if (err) this.#lastError = err.message;
    });
    return nc;
  }

  /** The main connection reads at most one chunk per event-loop turn, so the e-stop connection's socket is never behind a flood's backlog (nats.ts). */
  #pace(): void {
    if (this.#nc && !paceReads(this.#nc) && !this.#paceWarned) {
      this.#paceWarned = true;
      this.#log("warn", "fleet: cannot pace the NATS connection's reads (nats.js internals changed); a request flood may delay e-stops");
    }
  }

  /** The e-stop connection: subscribed at once, before presence (stopping is always safe, even under a name another runtime holds). */
  async #runEstop(): Promise<void> {
    const url = redactUrl(this.#o.connect.url);
    const nc = await this.#dial(" e-stop", {
      disconnect: () => {
        this.#estopDisconnects++;
        this.#estopConnection = "disconnected";
        this.#log("warn", `fleet: the e-stop connection to ${url} was cut; reconnecting`);
      },
      reconnect: () => {
        this.#estopConnection = "connected";
        this.#log("info", `fleet: the e-stop connection to ${url} is back`);
      },
      closed: () => {
        this.#estopConnection = "closed";
      },
    });
    if (!nc) return;
    this.#estopNc = nc;
    this.#estopConnection = "connected";
    for (const s of [subject.estop(this.name), subject.estopAll])
      this.#subs.push(
        nc.subscribe(s, {
          callback: (err, m) => {
            if (!err) this.#onEstop(m);
          },
        }),
      );
  }

  async #run(): Promise<void> {
    const url = redactUrl(this.#o.connect.url);
    const nc = await this.#dial("", {
      disconnect: () => {
        this.#disconnects++;
        this.#setConnection("disconnected");
        if (!this.#shedding) this.#log("warn", `fleet: lost the broker at ${url}; the body keeps running, reconnecting with backoff`);
      },
      reconnect: () => {
        this.#setConnection("connected");
        this.#pace();
        if (!this.#shedding) this.#log("info", `fleet: reconnected to ${url}`);
        void this.#refreshPresence();
      },
      closed: () => this.#setConnection("closed"),
    });
    if (!nc) return;
    this.#nc = nc;
    this.#setConnection("connected");
    this.#pace();

    const kvm = new Kvm(nc);
    this.#robots = await openBucket(kvm, ROBOTS_BUCKET, this.#ttlMs);
    this.#leases = await openBucket(kvm, LEASES_BUCKET, FLEET_MAX_LEASE_MS);
    await ensureEventStream(nc);
    // Presence first: a name another runtime holds is not ours to answer for.
    while (!this.#closed && !(await this.#refreshPresence())) await sleep(this.#ttlMs / 3);
    if (this.#closed) return;

    this.#subscribeRequests();

    const a: ControlAuthority = this.#robot.authority;
    const onAcquired = (h: LeaseInfo) => this.#event("lease-acquired", { owner: h.owner, source: h.source, expires_at_epoch_ms: h.expiresAtEpochMs });
    const onReleased = (h: LeaseInfo, why: "released" | "expired" | "revoked") => {
      this.#event(why === "released" ? "lease-released" : why === "expired" ? "lease-expired" : "lease-revoked", { owner: h.owner, source: h.source });
      const rev = this.#fleetLeases.get(h.id);
      if (rev !== undefined) {
        this.#fleetLeases.delete(h.id);
        void this.#leases?.delete(this.name, { previousSeq: rev }).catch(() => undefined); // a newer record (or none) stays
      }
    };
    a.on("acquired", onAcquired);
    a.on("released", onReleased);
    this.#offAuthority.push(
      () => a.off("acquired", onAcquired),
      () => a.off("released", onReleased),
    );
    // The latch's own events, whoever pulled it (fleet, API, dashboard, LoLA, a shutdown).
    const onEstopEvent = (e: EstopState) => this.#event("estop", { ...estopAnswer(e) });
    const onResetEvent = (_e: EstopState, req: { source: string; reason: string }) => this.#event("reset", { source: req.source, reason: req.reason });
    a.on("estop", onEstopEvent);
    a.on("reset", onResetEvent);
    this.#offAuthority.push(
      () => a.off("estop", onEstopEvent),
      () => a.off("reset", onResetEvent),
    );

    const rate = Math.min(STATE_RATE_MAX_HZ, Math.max(0.1, this.#o.stateRateHz ?? 10));
    this.#every(1000 / rate, () => this.#publishState());
    this.#every(1000, () => void this.#publishHealth());
    this.#every(this.#ttlMs / 3, () => void this.#refreshPresence());
    void this.#publishHealth();
    this.#event("joined", { body: this.#robot.kind, urls: this.#urls });
    this.#log("info", `fleet: joined ${redactUrl(this.#o.connect.url)} as ${this.name}`);
    this.#resolveJoined();
  }

  #setConnection(c: FleetConnectionState): void {
    if (c === this.#connection) return;
    this.#connection = c;
    this.#since = Date.now();
  }

  #every(ms: number, f: () => void): void {
    const t = setInterval(() => {
      if (this.#connection === "connected") f();
    }, ms);
    t.unref();
    this.#timers.push(t);
  }

  #publish(subj: string, body: unknown): boolean {
    const nc = this.#nc;
    if (!nc || this.#connection !== "connected") return false;
    try {
      nc.publish(subj, JSON.stringify(body));
      return true;
    } catch (e) {
      this.#lastError = (e as Error).message;
      return false;
    }
  }

  /** The robot API's state message (stream units) plus the robot's name; null before the first cycle. */
  stateMessage(view: "stream" | "rest" = "stream"): Record<string, unknown> | null {
    const src = this.#adapter.source();
    const fields = src && this.#adapter.read(view);
    if (!src || !fields) return null;
    return { type: "state", name: this.name, body: this.#adapter.kind, seq: src.seq, timestamp_ms: src.timestampMs, epoch_ms: src.epochMs, link: src.link, ...fields };
  }

  #publishState(): void {
    const src = this.#adapter.source();
    if (!src || src.seq === this.#lastStateSeq) return; // nothing new since the last message
    const m = this.stateMessage("stream");
    if (m && this.#publish(subject.state(this.name), m)) {
      this.#lastStateSeq = src.seq;
      this.#published.state++;
    }
  }

  async health(): Promise<FleetHealth> {
    const h = await this.#robot.health();
    const c = h.cycle;
    const fields = this.#adapter.source() ? this.#adapter.read("rest") : null;
    const battery = (fields?.battery as { charge?: unknown } | undefined)?.charge;
    return {
      type: "health",
      name: this.name,
      body: h.body,
      epoch_ms: Date.now(),
      link: h.link,
      safety_code: h.safety,
      safety_reason: h.safetyReason,
      cycle: { cycles: c.cycles, late_cycles: c.lateCycles, nominal_period_ms: c.nominalPeriodMs, period_p99_ms: c.periodMs.p99, jitter_p99_ms: c.jitterP99Ms },
      control: h.control ? { owner: h.control.owner, source: h.control.source, expires_at_epoch_ms: h.control.expiresAtEpochMs } : null,
      estop: estopAnswer(this.#robot.estopState()),
      battery_charge: typeof battery === "number" ? battery : null,
      urls: this.#urls,
    };
  }

  async #publishHealth(): Promise<void> {
    let h: FleetHealth;
    try {
      h = await this.health();
    } catch {
      return; // the body did not answer (a core in a worker that stalled): the next second tries again
    }
    if (this.#publish(subject.health(this.name), h)) this.#published.health++;
    if (h.link !== this.#lastLink) {
      if (this.#lastLink) this.#event("link", { from: this.#lastLink, to: h.link, safety_reason: h.safety_reason });
      this.#lastLink = h.link;
    }
  }

  #event(event: FleetEvent["event"], detail: Record<string, unknown>): void {
    const e: FleetEvent = { type: "event", name: this.name, epoch_ms: Date.now(), event, detail };
    if (this.#publish(subject.events(this.name), e)) this.#published.events++;
  }

  #presenceRecord(): PresenceRecord {
    return {
      name: this.name,
      body: this.#robot.kind,
      version: this.#o.version,
      host: hostname(),
      pid: process.pid,
      instance: this.instance,
      urls: this.#urls,
      started_at: this.#startedAt,
      refreshed_at_epoch_ms: Date.now(),
      ttl_ms: this.#ttlMs,
    };
  }

  /** Claim or refresh `bodylink_robots/NAME` with compare-and-set; false while another runtime holds the name. */
  async #refreshPresence(): Promise<boolean> {
    const kv = this.#robots;
    if (!kv || this.#closed) return false;
    const text = JSON.stringify(this.#presenceRecord());
    const rec = JSON.stringify(this.#signer ? signPresence(this.#signer, text) : { v: 1, record: text, key: "", sig: "" });
    try {
      if (this.#presenceRevision > 0) {
        try {
          this.#presenceRevision = await kv.update(this.name, rec, this.#presenceRevision);
          this.#presence = "ok";
          return true;
        } catch {
          // someone else wrote it, or it expired while we were away: look again
        }
      }
      const cur = await kv.get(this.name);
      if (cur?.operation !== "PUT") {
        this.#presenceRevision = await kv.create(this.name, rec);
      } else {
        const value: unknown = cur.json();
        // With a key, only a record signed by it is a claim on the name (another instance of this
        // robot); anything else under our name is forged, and overwritten. Without one, any record is.
        const claim = this.#signer ? verifyPresence(this.#self, this.name, value) : isSignedPresence(value) ? value.record : null;
        const other = claim ? (JSON.parse(claim) as PresenceRecord) : null;
        if (!other && this.#signer) this.#log("warn", `fleet: a presence record under ${this.name} that this robot did not sign was replaced (forged, or a runtime without this robot's key)`);
        const fresh = other !== null && Date.now() - other.refreshed_at_epoch_ms < other.ttl_ms;
        if (other && other.instance !== this.instance && fresh) {
          if (this.#presence !== "name-taken") this.#log("error", `fleet: the name ${this.name} is taken by ${other.body} on ${other.host} (pid ${other.pid}); not joining until it leaves`);
          this.#presence = "name-taken";
          return false;
        }
        this.#presenceRevision = await kv.update(this.name, rec, cur.revision);
      }
      this.#presence = "ok";
      return true;
    } catch (e) {
      this.#lastError = `presence: ${(e as Error).message}`;
      return false;
    }
  }

  /**
   * Answer `m`, signed with this robot's key over the request's subject and nonce. The gate's
   * refusals go unsigned (`sign` false): they claim nothing about the robot, and signing each would
   * make a flood buy an ed25519 signature (0.05-0.25 ms) per request with no key at all.
   */
  #reply(m: Msg, body: unknown, sign = true): void {
    if (!m.reply) return;
    try {
      const data = new TextEncoder().encode(JSON.stringify(body));
      const signed = sign && this.#signer ? signReply(this.#signer, m.subject, headerGetter(m.headers)(SIG_HEADERS.nonce), data) : null;
      m.respond(data, signed ? { headers: headersOf(signed) } : undefined);
    } catch (e) {
      this.#lastError = (e as Error).message;
    }
  }

  /** Commands and resets, on the main connection; each request passes the gate before any work (or promise) is made for it. */
  #subscribeRequests(): void {
    const nc = this.#nc;
    if (!nc || this.#closed) return;
    const sub = (s: string, f: (m: Msg) => Promise<void>) =>
      this.#requestSubs.push(
        nc.subscribe(s, {
          callback: (err, m) => {
            if (err || !this.#admit(m)) return;
            f(m)
              .catch((e: unknown) => this.#log("error", `fleet: ${s}: ${(e as Error).message}`))
              .finally(() => this.#gate.done());
          },
        }),
      );
    sub(subject.reset(this.name), (m) => this.#onReset(m));
    sub(subject.resetAll, (m) => this.#onReset(m));
    sub(subject.cmd(this.name, "*"), (m) => this.#onCommand(m));
  }

  /** A request past the gate, or refused: answered 429/503 while the refusal budget lasts, else dropped (counted). */
  #admit(m: Msg): boolean {
    const a = this.#gate.admit(senderOf(m.reply));
    if (a === "ok") return true;
    if (this.#gate.answerRefusal(Boolean(m.reply))) {
      const l = this.#gate.limits;
      const e =
        a === "busy"
          ? new BodylinkError("BL_ERR_FLEET_BUSY", this.name, l.maxInFlight)
          : new BodylinkError("BL_ERR_FLEET_RATE_LIMITED", this.name, `at most ${l.perSenderHz}/s from one sender, ${l.totalHz}/s from all`);
      this.#reply(m, errorAnswer(e), false);
    }
    if (this.#gate.flooded) this.#shed();
    return false;
  }

  /**
   * A flood: parsing it alone would keep this thread (and so the e-stop connection's socket, which
   * shares its event loop) busy, and the broker queues megabytes of it for us. So stop taking
   * requests (unsubscribe: the broker routes no more to us), cut the main connection (the broker
   * drops what it queued for it, and so does our socket) and reconnect at once; take requests
   * again after 1 s (doubling while floods follow each other, at most 8 s). Meanwhile a request
   * gets the broker's "no responders"; e-stops ride their own connection and are unaffected.
   */
  #shed(): void {
    if (this.#shedding || this.#closed) return;
    this.#shedding = true;
    this.#sheds++;
    if (performance.now() - this.#shedEndedAt > 2 * SHED_MAX_MS) this.#shedMs = SHED_MIN_MS;
    const ms = this.#shedMs;
    this.#shedMs = Math.min(SHED_MAX_MS, ms * 2);
    for (const s of this.#requestSubs.splice(0)) s.unsubscribe();
    this.#gate.calm();
    this.#log(
      "warn",
      `fleet: a request flood (${this.#gate.limits.floodRefusals} refused within 250 ms): taking no requests for ${ms} ms and dropping what the broker queued for us; e-stops ride their own connection`,
    );
    void this.#nc?.reconnect().catch(() => undefined);
    this.#shedTimer = setTimeout(() => {
      this.#shedTimer = undefined;
      this.#shedding = false;
      this.#shedEndedAt = performance.now();
      this.#subscribeRequests();
    }, ms);
    this.#shedTimer.unref();
  }

  /** True while this second's budget of e-stop signature checks lasts. */
  #estopCheckBudget(): boolean {
    const now = Date.now();
    if (now - this.#estopChecks.since >= 1000) this.#estopChecks = { since: now, n: 0 };
    return this.#estopChecks.n++ < ESTOP_CHECKS_PER_S;
  }

  #onEstop(m: Msg): void {
    this.#estopsReceived++;
    // Latch first, whatever the request says: an unreadable e-stop is still an e-stop.
    const body = parseBody<{ category?: 0 | 1; reason?: string; by?: string }>(m, EstopSchema);
    const ok = !(body instanceof BodylinkError);
    // Never refused for its signature; a valid one names the operator, else the claimed name is marked
    // unverified. At most ESTOP_CHECKS_PER_S checks a second (0.05-0.7 ms each): a flood of signed-looking
    // e-stops costs the e-stop path a bounded few ms, and past the budget the stop still latches, unnamed.
    const get = headerGetter(m.headers);
    const signed = this.#verifier.trustedCount > 0 && get(SIG_HEADERS.signature) && this.#estopCheckBudget() ? this.#verifier.check(m.subject, m.data, get) : null;
    const by = signed && !(signed instanceof BodylinkError) ? signed.operator : `unverified:${ok && body.by ? body.by : "fleet"}`;
    const reason = ok && body.reason ? body.reason : `fleet emergency stop (${m.subject === subject.estopAll ? "all robots" : this.name})`;
    // Requested (in shared memory, for a core in a worker) before this returns; the reply waits
    // until the core took it (a cycle or two) so it shows the latch that holds, or says it did not.
    const taken = Promise.resolve(this.#robot.estop({ ...(ok && body.category !== undefined ? { category: body.category } : {}), source: sourceOf(by), reason }));
    const answer = (e: EstopState, late?: BodylinkError) => {
      const err = ok ? late : body;
      this.#reply(m, { name: this.name, ok: true, estop: estopAnswer(e), ...(err ? { error: errorAnswer(err) } : {}) } satisfies EstopReply);
    };
    let timer: NodeJS.Timeout | undefined;
    void Promise.race([
      taken.then((e) => () => answer(e)),
      new Promise<() => void>((r) => {
        timer = setTimeout(
          () => r(() => answer(this.#robot.estopState(), new BodylinkError("BL_ERR_CORE_UNRESPONSIVE", `the core did not take the e-stop within ${ESTOP_ACK_WAIT_MS} ms; it stays requested`))),
          ESTOP_ACK_WAIT_MS,
        );
      }),
    ])
      .catch((e: unknown) => () => answer(this.#robot.estopState(), e instanceof BodylinkError ? e : new BodylinkError("BL_ERR_API_INTERNAL", (e as Error).message)))
      .then((f) => {
        clearTimeout(timer);
        f();
      });
  }

  async #onReset(m: Msg): Promise<void> {
    const refuse = (e: BodylinkError) => this.#reply(m, { name: this.name, ok: false, estop: estopAnswer(this.#robot.estopState()), error: errorAnswer(e) } satisfies EstopReply);
    const signed = this.#verifier.check(m.subject, m.data, headerGetter(m.headers));
    if (signed instanceof BodylinkError) {
      this.#log("warn", `fleet: refused a reset on ${m.subject}: ${signed.message} [${signed.code}]`);
      return refuse(signed);
    }
    const body = parseBody<{ reason: string; by?: string }>(m, ResetSchema);
    if (body instanceof BodylinkError) return refuse(body);
    try {
      await this.#robot.resetEstop({ source: sourceOf(signed.operator), reason: body.reason });
    } catch (e) {
      const err = e instanceof BodylinkError ? e : new BodylinkError("BL_ERR_API_INTERNAL", (e as Error).message);
      this.#reply(m, { name: this.name, ok: false, estop: estopAnswer(this.#robot.estopState()), error: errorAnswer(err) } satisfies EstopReply);
      return;
    }
    this.#reply(m, { name: this.name, ok: true, estop: estopAnswer(this.#robot.estopState()) } satisfies EstopReply);
  }

  async #onCommand(m: Msg): Promise<void> {
    const command = m.subject.split(".")[3] ?? "";
    let answer: unknown;
    try {
      answer = await this.#command(command, m);
    } catch (e) {
      answer = errorAnswer(e instanceof BodylinkError ? e : new BodylinkError("BL_ERR_API_INTERNAL", (e as Error).message));
    }
    this.#reply(m, answer instanceof BodylinkError ? errorAnswer(answer) : answer);
  }

  /** Same rules as the robot API: reads need nothing, commands need the held lease's id (header) and, over the fleet, an operator's signature. */
  async #command(command: string, m: Msg): Promise<unknown> {
    const a: ControlAuthority = this.#robot.authority;
    if (!(READ_COMMANDS as readonly string[]).includes(command) && (command === "acquire" || command === "renew" || command === "release" || this.#commands.has(command))) {
      const signed = this.#verifier.check(m.subject, m.data, headerGetter(m.headers));
      if (signed instanceof BodylinkError) {
        this.#log("warn", `fleet: refused ${command}: ${signed.message} [${signed.code}]`);
        return signed;
      }
    }
    switch (command) {
      case "info":
        return { name: this.name, body: this.#adapter.kind, joint_names: [...this.#adapter.jointNames], commands: [...CONTROL_COMMANDS, ...this.#commands.keys()], urls: this.#urls };
      case "state":
        return this.stateMessage("rest") ?? new BodylinkError("BL_ERR_STATE_NONE");
      case "health":
        return this.health();
      case "control": {
        const h = a.holder();
        return { held: h !== null, holder: h ? holderAnswer(h) : null };
      }
      case "acquire": {
        const body = parseBody<{ owner: string; lease_ms?: number }>(m, AcquireSchema);
        if (body instanceof BodylinkError) return body;
        return this.#acquire(body.owner, body.lease_ms ?? 2000);
      }
      case "renew": {
        const id = this.#leaseOf(m);
        if (id instanceof BodylinkError) return id;
        const body = parseBody<{ lease_ms?: number }>(m, RenewSchema);
        if (body instanceof BodylinkError) return body;
        const ms = body.lease_ms ?? 2000;
        if (!(await a.renew(id, ms))) return unknownLease(a, id);
        const h = a.holder()!;
        await this.#recordLease(h, id);
        return this.#leaseAnswer(h, ms);
      }
      case "release": {
        const id = this.#leaseOf(m);
        if (id instanceof BodylinkError) return id;
        if (!(await a.release(id))) return unknownLease(a, id);
        return { released: true };
      }
      default: {
        const cmd = this.#commands.get(command);
        if (!cmd) return new BodylinkError("BL_ERR_API_NO_ROUTE", "request", subject.cmd(this.name, command));
        const id = this.#leaseOf(m);
        if (id instanceof BodylinkError) return id;
        const body = parseBody(m, cmd.request);
        if (body instanceof BodylinkError) return body;
        const out = await cmd.handle(id, body);
        return out.ok ? { ok: true, result: out.result } : out.error;
      }
    }
  }

  /** The API's lease hook, for a request: latched first, then the header, then the holder. */
  #leaseOf(m: Msg): string | BodylinkError {
    const a: ControlAuthority = this.#robot.authority;
    if (a.latched) return new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(a.estop));
    const id = m.headers?.get(FLEET_LEASE_HEADER) ?? "";
    if (!id) return new BodylinkError("BL_ERR_AUTH_REQUIRED");
    if (!a.isHeld(id)) return unknownLease(a, id);
    return id;
  }

  #leaseAnswer(h: LeaseInfo, ms: number) {
    return { lease_id: h.id, owner: h.owner, source: "fleet" as const, lease_ms: ms, expires_at_epoch_ms: h.expiresAtEpochMs, expires_at: new Date(h.expiresAtEpochMs).toISOString() };
  }

  /** A fleet lease: the runtime's Authority decides (one authority); the bucket records it with compare-and-set. */
  async #acquire(owner: string, ms: number): Promise<unknown> {
    const a: ControlAuthority = this.#robot.authority;
    const got = await a.acquire(owner, "fleet", ms);
    if (!got.ok) return got.latched ? new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(got.estop)) : heldError(got.holder);
    const h = got.lease.info!;
    try {
      await this.#recordLease(h, h.id);
    } catch (e) {
      await got.lease.release();
      return e instanceof BodylinkError ? e : new BodylinkError("BL_ERR_FLEET_LEASE_STORE", LEASES_BUCKET, (e as Error).message);
    }
    return this.#leaseAnswer(h, ms);
  }

  /** Write (or rewrite) the lease's record at the revision last seen: create when absent, else update. */
  async #recordLease(h: LeaseInfo, id: string): Promise<void> {
    const kv = this.#leases;
    if (!kv) throw new BodylinkError("BL_ERR_FLEET_LEASE_STORE", LEASES_BUCKET, "not connected");
    const rec: FleetLeaseRecord = { owner: h.owner, instance: this.instance, acquired_at_epoch_ms: h.expiresAtEpochMs - (h.expiresAtMs - h.acquiredAtMs), expires_at_epoch_ms: h.expiresAtEpochMs };
    const data = JSON.stringify(rec);
    const known = this.#fleetLeases.get(id);
    if (known !== undefined) {
      try {
        this.#fleetLeases.set(id, await kv.update(this.name, data, known));
        return;
      } catch {
        // expired from the bucket meanwhile, or rewritten: read it again below
      }
    }
    const cur = await kv.get(this.name);
    if (cur && cur.operation === "PUT") {
      const other = cur.json<FleetLeaseRecord>();
      // Only another instance's unexpired record blocks: this runtime's Authority just granted the lease.
      if (other.instance !== this.instance && other.expires_at_epoch_ms > Date.now()) {
        throw Object.assign(new BodylinkError("BL_ERR_AUTH_HELD", `${other.owner} (fleet, another runtime named ${this.name})`, new Date(other.expires_at_epoch_ms).toISOString()), {
          holder: { owner: other.owner, source: "fleet", expires_at_epoch_ms: other.expires_at_epoch_ms, expires_at: new Date(other.expires_at_epoch_ms).toISOString() },
        });
      }
      this.#fleetLeases.set(id, await kv.update(this.name, data, cur.revision));
    } else {
      this.#fleetLeases.set(id, await kv.create(this.name, data));
    }
  }

  // --- the fleet page's gateway (FleetGateway): answered from this runtime's own connection ---

  /** What the /fleet page's client signs with and trusts: the operator key it was given, the fleet's robot keys. */
  #trust(): FleetTrust {
    return {
      signer: this.#o.operatorKey ?? null,
      robots: this.#o.robots ?? this.#self,
      insecure: this.#o.insecure ?? false,
      ...(this.#o.connect.inboxPrefix ? { inboxPrefix: this.#o.connect.inboxPrefix } : {}),
    };
  }

  #client(): FleetClient {
    if (!this.#nc) throw new BodylinkError("BL_ERR_FLEET_UNREACHABLE", redactUrl(this.#o.connect.url), "not connected yet");
    this.#fleetClient ??= new FleetClient(this.#nc, redactUrl(this.#o.connect.url), this.#trust());
    return this.#fleetClient;
  }

  async robots(): Promise<FleetRobotView[]> {
    const c = this.#client();
    // Subscribed on the first call only: a runtime nobody asks for the fleet page never receives the fleet's health.
    this.#healthSub ??= c.subscribe(subject.allHealth, (name, body) => this.#healthCache.set(name, { h: body as FleetHealth, at: Date.now() }));
    const present = await c.robots();
    await Promise.all(
      present
        .filter((p) => !this.#healthCache.has(p.name))
        .map(async (p) => {
          const h = await c.health(p.name, 500).catch(() => null);
          if (h && !isError(h)) this.#healthCache.set(p.name, { h, at: Date.now() });
        }),
    );
    const now = Date.now();
    return present.map((p) => {
      const cached = this.#healthCache.get(p.name);
      return {
        name: p.name,
        body: p.body,
        host: p.host,
        version: p.version,
        started_at: p.started_at,
        urls: p.urls,
        health: cached ? { ...cached.h } : null,
        health_age_ms: cached ? now - cached.at : null,
      };
    });
  }

  /** The fleet page's Stop all: sent on the e-stop connection, so it does not wait behind this runtime's requests either. */
  async estop(names: readonly string[] | null, req: { category?: 0 | 1; reason?: string }): Promise<FleetScatterAnswer> {
    const nc = this.#estopNc;
    if (!nc) throw new BodylinkError("BL_ERR_FLEET_UNREACHABLE", redactUrl(this.#o.connect.url), "not connected yet");
    this.#estopClient ??= new FleetClient(nc, redactUrl(this.#o.connect.url), this.#trust());
    return scatterAnswer(await this.#estopClient.estop(names, { ...req, by: `dashboard@${this.name}` }));
  }

  async reset(names: readonly string[] | null, req: { reason: string }): Promise<FleetScatterAnswer> {
    return scatterAnswer(await this.#client().reset(names, { ...req, by: `dashboard@${this.name}` }));
  }

  /** Leave the fleet: stop publishing, drop our presence and fleet lease records, close the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const t of this.#timers.splice(0)) clearInterval(t);
    clearTimeout(this.#shedTimer);
    for (const off of this.#offAuthority.splice(0)) off();
    const nc = this.#nc;
    if (nc && this.#connection === "connected") {
      this.#event("left", {});
      await Promise.race([
        Promise.all([
          this.#presenceRevision > 0 ? this.#robots?.delete(this.name, { previousSeq: this.#presenceRevision }).catch(() => undefined) : undefined,
          ...[...this.#fleetLeases.values()].map((rev) => this.#leases?.delete(this.name, { previousSeq: rev }).catch(() => undefined)),
        ]),
        sleep(1000),
      ]);
    }
    for (const s of [...this.#subs.splice(0), ...this.#requestSubs.splice(0)]) s.unsubscribe();
    this.#healthSub?.unsubscribe();
    await Promise.race([Promise.all([nc?.close(), this.#estopNc?.close()]), sleep(1000)]);
  }
}

function scatterAnswer(r: ScatterResult): FleetScatterAnswer {
  return {
    replies: r.replies.map((x) => ({ name: x.name, ok: x.ok, estop: { ...x.estop }, ...(x.error ? { error: { ...x.error } } : {}) })),
    missing: r.missing,
    unverified: r.unverified,
    elapsed_ms: r.elapsedMs,
  };
}

/** The latch's source: "fleet:WHO", client text kept to a safe alphabet (it goes into logs). */
function sourceOf(by: string): string {
  return `fleet:${by.replace(/[^A-Za-z0-9_@.:-]/g, "_").slice(0, 64)}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
