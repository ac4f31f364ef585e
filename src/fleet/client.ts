/**
 * A fleet client over NATS: who is in the fleet (presence bucket), each robot's health and state,
 * fleet-wide or per-robot e-stop and reset (scatter-gather: every robot answers), fleet leases and
 * commands. The CLI (`bodylink fleet …`), the dashboard's gateway, the bench and the tests use it.
 *
 * Trust (sign.ts): with an operator key it signs what moves a robot or releases its latch; with
 * the fleet's robot keys it counts only presence records and answers those robots signed. An
 * answer that does not verify is no answer (`unverified`), unless the client was made `insecure`
 * (then it is kept, marked `verified: false`).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, createInbox, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { BodylinkError } from "../errors.js";
import { headerGetter, headersOf, openBucket } from "./nats.js";
import { type FleetConnectOptions, natsOptions, redactUrl } from "./connect.js";
import { isSignedPresence, newNonce, SIG_HEADERS, type SigningKey, signRequest, type TrustedKeys, verifyPresence, verifyReply } from "./sign.js";
import {
  type ErrorAnswer,
  type EstopReply,
  type EstopRequest,
  FLEET_MAX_LEASE_MS,
  type FleetHealth,
  LEASES_BUCKET,
  PRESENCE_TTL_MS,
  type PresenceRecord,
  READ_COMMANDS,
  type ResetRequest,
  ROBOTS_BUCKET,
  subject,
} from "./subjects.js";

/** What the fleet-wide e-stop or reset got back: every reply, and who was expected but did not answer. */
export interface ScatterResult {
  /** One per robot (the first, when a resent e-stop was answered twice), signed by the robot it names (with an insecure client, also the others, `verified: false`). */
  readonly replies: Array<EstopReply & { readonly verified: boolean }>;
  readonly missing: string[];
  /** Of `missing`, the robots this client knows a key for that have no (verified, fresh) presence record. */
  readonly notPresent: string[];
  /** Names claimed by answers that did not verify (forged, or from a robot this client has no key for); ignored. */
  readonly unverified: string[];
  /** From the request to the last reply, ms. */
  readonly elapsedMs: number;
  /** E-stops sent again, one per robot and retry, to robots that had not answered (0 for resets: they are never resent). */
  readonly resent: number;
}

/** How often an unanswered e-stop is sent again to each robot that has not answered (until the wait ends). */
export const ESTOP_RETRY_MS = 250;

export function isErrorAnswer(v: unknown): v is ErrorAnswer {
  return typeof v === "object" && v !== null && typeof (v as ErrorAnswer).code === "string" && typeof (v as ErrorAnswer).status === "number" && typeof (v as ErrorAnswer).message === "string";
}

/**
 * The bucket's keys, from the stream's per-subject counts (STREAM.INFO with a subject filter):
 * a read-only call, so readers need no consumer, and no consumer's deliver subject (which the
 * broker publishes to on the reader's behalf, past its publish permissions) is ever created.
 */
async function keysOf(nc: NatsConnection, bucket: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const prefix = `$KV.${bucket}.`;
  const info = await jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}>` });
  return Object.keys(info.state.subjects ?? {})
    .map((s) => s.slice(prefix.length))
    .sort();
}

/** What a client trusts and signs with. */
export interface FleetTrust {
  /** An operator's key: signs resets, leases and commands. Without one those are refused by the robots. */
  readonly signer?: SigningKey | null;
  /** The fleet's robot keys (a bundle's trust.json): only presence and answers they sign count. */
  readonly robots?: TrustedKeys;
  /** Count what cannot be verified too (marked unverified): `--fleet-insecure`. */
  readonly insecure?: boolean;
  /** The connection's inbox prefix (replies to us arrive under it; `_INBOX` by default). */
  readonly inboxPrefix?: string;
}

const READS: ReadonlySet<string> = new Set(READ_COMMANDS);

/** Refusals a robot's request gate sends unsigned (bridge.ts): they say "not now", nothing about the robot, so they are taken as they are. */
const UNSIGNED_REFUSALS: ReadonlySet<string> = new Set(["BL_ERR_FLEET_RATE_LIMITED", "BL_ERR_FLEET_BUSY"]);
const isUnsignedRefusal = (v: unknown): boolean => isErrorAnswer(v) && UNSIGNED_REFUSALS.has(v.code);

export class FleetClient {
  readonly nc: NatsConnection;
  readonly url: string;
  readonly #trust: FleetTrust;
  readonly #robots: TrustedKeys;
  constructor(nc: NatsConnection, url: string, trust: FleetTrust = {}) {
    this.nc = nc;
    this.url = url;
    this.#trust = trust;
    this.#robots = trust.robots ?? new Map();
  }

  /** Connect once (no waiting for a broker that is not there: a clear error instead). */
  static async connect(o: FleetConnectOptions, name = "bodylink fleet client", trust: FleetTrust = {}): Promise<FleetClient> {
    try {
      const nc = await connect({ ...natsOptions(o), name, timeout: 10_000, maxReconnectAttempts: 5, reconnectTimeWait: 250 });
      return new FleetClient(nc, redactUrl(o.url), { ...(o.inboxPrefix ? { inboxPrefix: o.inboxPrefix } : {}), ...trust });
    } catch (e) {
      if (e instanceof BodylinkError) throw e;
      throw new BodylinkError("BL_ERR_FLEET_UNREACHABLE", redactUrl(o.url), (e as Error).message);
    }
  }

  /**
   * The robots present now: records refreshed within their TTL, signed by the robot they name, by
   * name. A record that does not verify is left out (an insecure client keeps it, `verified: false`).
   */
  async robots(): Promise<Array<PresenceRecord & { readonly verified: boolean }>> {
    const kv = await openBucket(new Kvm(this.nc), ROBOTS_BUCKET, PRESENCE_TTL_MS);
    const out: Array<PresenceRecord & { verified: boolean }> = [];
    const now = Date.now();
    for (const key of await keysOf(this.nc, ROBOTS_BUCKET)) {
      const e = await kv.get(key);
      if (e?.operation !== "PUT") continue;
      try {
        const value: unknown = e.json();
        const signed = verifyPresence(this.#robots, key, value);
        const text = signed ?? (this.#trust.insecure && isSignedPresence(value) ? value.record : null);
        if (text === null) continue;
        const r = JSON.parse(text) as PresenceRecord;
        if (r.name === key && now - r.refreshed_at_epoch_ms < r.ttl_ms) out.push({ ...r, verified: signed !== null });
      } catch {
        // not ours: skip
      }
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The fleet lease records, by robot name (expired ones left out). */
  async leases(): Promise<Map<string, { owner: string; expires_at_epoch_ms: number }>> {
    const kv = await openBucket(new Kvm(this.nc), LEASES_BUCKET, FLEET_MAX_LEASE_MS);
    const out = new Map<string, { owner: string; expires_at_epoch_ms: number }>();
    for (const key of await keysOf(this.nc, LEASES_BUCKET)) {
      const e = await kv.get(key);
      if (e?.operation !== "PUT") continue;
      const r = e.json<{ owner: string; expires_at_epoch_ms: number }>();
      if (r.expires_at_epoch_ms > Date.now()) out.set(key, r);
    }
    return out;
  }

  /** Headers for a request on `subj`: a nonce always (the robot's signed answer names it), a signature when `sign` and this client has a key. */
  #requestHeaders(subj: string, data: Uint8Array, sign: boolean, leaseId?: string): { nonce: string; headers: Record<string, string> } {
    const nonce = newNonce();
    if (sign && this.#trust.signer) return { nonce, headers: signRequest(this.#trust.signer, subj, data, { nonce, ...(leaseId ? { leaseId } : {}) }) };
    return { nonce, headers: { [SIG_HEADERS.nonce]: nonce, ...(leaseId ? { [SIG_HEADERS.lease]: leaseId } : {}) } };
  }

  /**
   * One request/reply; a BodylinkError when nobody answers in time, the answer (maybe an error
   * answer) otherwise. Commands other than reads are signed with the operator key; the answer must
   * be signed by the robot (else a `BL_ERR_FLEET_UNVERIFIED` error answer).
   */
  async request<T = unknown>(name: string, command: string, body: unknown = {}, opts: { leaseId?: string; timeoutMs?: number } = {}): Promise<T | ErrorAnswer> {
    const timeout = opts.timeoutMs ?? 2000;
    const subj = subject.cmd(name, command);
    const data = new TextEncoder().encode(JSON.stringify(body));
    const { nonce, headers } = this.#requestHeaders(subj, data, !READS.has(command), opts.leaseId);
    try {
      const m = await this.nc.request(subj, data, { timeout, headers: headersOf(headers) });
      const answer = m.json<T | ErrorAnswer>();
      if (!verifyReply(this.#robots, name, subj, nonce, m.data, headerGetter(m.headers)) && !this.#trust.insecure && !isUnsignedRefusal(answer)) {
        const e = new BodylinkError("BL_ERR_FLEET_UNVERIFIED", name, this.#robots.size ? "its signature does not match its key" : "this client knows no robot keys: pass --fleet-dir");
        return { code: e.code, status: e.status, message: e.message };
      }
      return answer;
    } catch (e) {
      const msg = (e as Error).message;
      if (/no responders|503/i.test(msg)) {
        const present = await this.robots().then(
          (rs) => rs.map((r) => r.name).sort(),
          () => [],
        );
        throw new BodylinkError("BL_ERR_FLEET_NO_ROBOT", name, present.length ? present.join(", ") : "none");
      }
      if (/timeout/i.test(msg)) throw new BodylinkError("BL_ERR_FLEET_NO_ANSWER", name, timeout);
      throw e;
    }
  }

  health(name: string, timeoutMs?: number): Promise<FleetHealth | ErrorAnswer> {
    return this.request<FleetHealth>(name, "health", {}, { ...(timeoutMs ? { timeoutMs } : {}) });
  }

  /**
   * E-stop every robot (`names` null) or the named ones. Every robot replies; this waits until the
   * expected ones have (default: everyone present) or `maxWaitMs` passes, and says who is missing.
   * A robot that has not answered is sent the e-stop again (on `bodylink.NAME.estop`) every
   * `retryMs` (250) until it answers or the wait ends: a stop lost with a cut connection, or a
   * broker that restarted, is not the end of it. Stopping twice is harmless (the latch holds).
   */
  async estop(names: readonly string[] | null, req: EstopRequest = {}, opts: { expect?: readonly string[]; maxWaitMs?: number; retryMs?: number } = {}): Promise<ScatterResult> {
    return this.#scatter(names, req, subject.estopAll, subject.estop, { ...opts, retryMs: opts.retryMs ?? ESTOP_RETRY_MS });
  }

  /** Reset every robot or the named ones; never resent (a second reset could release a stop made after the first). */
  async reset(names: readonly string[] | null, req: ResetRequest, opts: { expect?: readonly string[]; maxWaitMs?: number } = {}): Promise<ScatterResult> {
    return this.#scatter(names, req, subject.resetAll, subject.reset, { ...opts, retryMs: null });
  }

  async #scatter(
    names: readonly string[] | null,
    req: unknown,
    all: string,
    one: (n: string) => string,
    opts: { expect?: readonly string[]; maxWaitMs?: number; retryMs: number | null },
  ): Promise<ScatterResult> {
    // Everyone: every robot present and every robot whose key this client knows (one that froze or
    // left is named as not answering, not forgotten because its presence expired).
    const present = names === null && !opts.expect ? (await this.robots()).map((r) => r.name) : [];
    const known = names === null && !opts.expect ? [...this.#robots.values()].map((k) => k.name) : [];
    const expect = new Set(opts.expect ?? names ?? [...present, ...known]);
    const maxWait = opts.maxWaitMs ?? 2000;
    const data = new TextEncoder().encode(JSON.stringify(req));
    // Resets are signed (a robot obeys only a trusted operator); e-stops too when we have a key (the latch then records who).
    const sign = this.#trust.signer != null;
    const sent = new Map<string, string[]>(); // subject → the nonces sent on it (a resent stop has its own)
    const t0 = performance.now();
    const replies = new Map<string, EstopReply & { verified: boolean }>();
    const unverified = new Set<string>();
    let last = t0;
    let resent = 0;
    const inbox = this.nc.subscribe(createInbox(this.#trust.inboxPrefix));
    const send = (subj: string) => {
      const { nonce, headers } = this.#requestHeaders(subj, data, sign);
      sent.set(subj, [...(sent.get(subj) ?? []), nonce]);
      this.nc.publish(subj, data, { reply: inbox.getSubject(), headers: headersOf(headers) });
    };
    /** Signed by `name`'s key over one of our requests it heard (fleet-wide or its own subject). */
    const verified = (name: string, m: Msg) => [all, one(name)].some((subj) => (sent.get(subj) ?? []).some((nonce) => verifyReply(this.#robots, name, subj, nonce, m.data, headerGetter(m.headers))));
    const done = (async () => {
      for await (const m of inbox) {
        let r: EstopReply;
        try {
          r = m.json<EstopReply>();
        } catch {
          continue; // not a reply of ours
        }
        if (typeof r.name !== "string" || replies.get(r.name)?.verified) continue; // a resent stop's second answer
        const ok = verified(r.name, m);
        if (!ok && !this.#trust.insecure) {
          unverified.add(r.name);
          continue;
        }
        if (replies.has(r.name) && !ok) continue;
        replies.set(r.name, { ...r, verified: ok });
        last = performance.now();
        expect.delete(r.name);
        if (expect.size === 0) break;
      }
    })();
    for (const subj of names === null ? [all] : names.map(one)) send(subj);
    const timer = setTimeout(() => inbox.unsubscribe(), maxWait);
    const retry =
      opts.retryMs === null
        ? undefined
        : setInterval(() => {
            for (const n of expect) {
              send(one(n));
              resent++;
            }
          }, opts.retryMs);
    if (expect.size === 0) inbox.unsubscribe();
    await done;
    clearTimeout(timer);
    clearInterval(retry);
    inbox.unsubscribe();
    for (const r of replies.keys()) unverified.delete(r);
    const missing = [...expect].sort();
    return { replies: [...replies.values()], missing, notPresent: missing.filter((n) => known.includes(n) && !present.includes(n)), unverified: [...unverified].sort(), elapsedMs: last - t0, resent };
  }

  /** Every robot's messages on `subj` (e.g. subject.allState), until the returned subscription is unsubscribed. */
  subscribe(subj: string, f: (name: string, body: unknown, subject: string) => void): Subscription {
    return this.nc.subscribe(subj, {
      callback: (err, m) => {
        if (err) return;
        try {
          f(m.subject.split(".")[1] ?? "", m.json(), m.subject);
        } catch {
          // not JSON: ignore
        }
      },
    });
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
