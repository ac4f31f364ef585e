/**
 * A fleet client over NATS: who is in the fleet (presence bucket), each robot's health and state,
 * fleet-wide or per-robot e-stop and reset (scatter-gather: every robot answers), fleet leases and
 * commands. The CLI (`bodylink fleet …`), the dashboard's gateway, the bench and the tests use it.
 */
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { BodylinkError } from "../errors.js";
import { leaseHeaders, openBucket } from "./nats.js";
import { type FleetConnectOptions, natsOptions, redactUrl } from "./connect.js";
import {
  type ErrorAnswer,
  type EstopReply,
  type EstopRequest,
  FLEET_MAX_LEASE_MS,
  type FleetHealth,
  LEASES_BUCKET,
  PRESENCE_TTL_MS,
  type PresenceRecord,
  type ResetRequest,
  ROBOTS_BUCKET,
  subject,
} from "./subjects.js";

/** What the fleet-wide e-stop or reset got back: every reply, and who was expected but did not answer. */
export interface ScatterResult {
  /** One per robot (the first, when a resent e-stop was answered twice). */
  readonly replies: EstopReply[];
  readonly missing: string[];
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

/** The bucket's keys, each once: a key updated while the listing runs can be listed twice. */
async function keysOf(kv: KV): Promise<string[]> {
  const keys = new Set<string>();
  for await (const k of await kv.keys()) keys.add(k);
  return [...keys].sort();
}

export class FleetClient {
  readonly nc: NatsConnection;
  readonly url: string;
  constructor(nc: NatsConnection, url: string) {
    this.nc = nc;
    this.url = url;
  }

  /** Connect once (no waiting for a broker that is not there: a clear error instead). */
  static async connect(o: FleetConnectOptions, name = "bodylink fleet client"): Promise<FleetClient> {
    try {
      const nc = await connect({ ...natsOptions(o), name, timeout: 3000, maxReconnectAttempts: 5, reconnectTimeWait: 250 });
      return new FleetClient(nc, redactUrl(o.url));
    } catch (e) {
      if (e instanceof BodylinkError) throw e;
      throw new BodylinkError("BL_ERR_FLEET_UNREACHABLE", redactUrl(o.url), (e as Error).message);
    }
  }

  /** The robots present now: records refreshed within their TTL, by name. */
  async robots(): Promise<PresenceRecord[]> {
    const kv = await openBucket(new Kvm(this.nc), ROBOTS_BUCKET, PRESENCE_TTL_MS);
    const out: PresenceRecord[] = [];
    const now = Date.now();
    for (const key of await keysOf(kv)) {
      const e = await kv.get(key);
      if (e?.operation !== "PUT") continue;
      try {
        const r = e.json<PresenceRecord>();
        if (now - r.refreshed_at_epoch_ms < r.ttl_ms) out.push(r);
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
    for (const key of await keysOf(kv)) {
      const e = await kv.get(key);
      if (e?.operation !== "PUT") continue;
      const r = e.json<{ owner: string; expires_at_epoch_ms: number }>();
      if (r.expires_at_epoch_ms > Date.now()) out.set(key, r);
    }
    return out;
  }

  /** One request/reply; a BodylinkError when nobody answers in time, the answer (maybe an error answer) otherwise. */
  async request<T = unknown>(name: string, command: string, body: unknown = {}, opts: { leaseId?: string; timeoutMs?: number } = {}): Promise<T | ErrorAnswer> {
    const timeout = opts.timeoutMs ?? 2000;
    try {
      const m = await this.nc.request(subject.cmd(name, command), JSON.stringify(body), { timeout, ...(opts.leaseId ? { headers: leaseHeaders(opts.leaseId) } : {}) });
      return m.json<T | ErrorAnswer>();
    } catch (e) {
      const msg = (e as Error).message;
      if (/no responders|503/i.test(msg)) throw new BodylinkError("BL_ERR_FLEET_NO_ROBOT", name, "see `bodylink fleet ls`");
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
    const expect = new Set(opts.expect ?? names ?? (await this.robots()).map((r) => r.name));
    const maxWait = opts.maxWaitMs ?? 2000;
    const payload = JSON.stringify(req);
    const t0 = performance.now();
    const replies = new Map<string, EstopReply>();
    let last = t0;
    let resent = 0;
    const inbox = this.nc.subscribe(`_INBOX.bodylink.${Math.random().toString(36).slice(2)}`);
    const reply = { reply: inbox.getSubject() };
    const done = (async () => {
      for await (const m of inbox) {
        try {
          const r = m.json<EstopReply>();
          if (typeof r.name !== "string" || replies.has(r.name)) continue; // a resent stop's second answer
          replies.set(r.name, r);
          last = performance.now();
          expect.delete(r.name);
          if (expect.size === 0) break;
        } catch {
          // not a reply of ours
        }
      }
    })();
    if (names === null) this.nc.publish(all, payload, reply);
    else for (const n of names) this.nc.publish(one(n), payload, reply);
    const timer = setTimeout(() => inbox.unsubscribe(), maxWait);
    const retry =
      opts.retryMs === null
        ? undefined
        : setInterval(() => {
            for (const n of expect) {
              this.nc.publish(one(n), payload, reply);
              resent++;
            }
          }, opts.retryMs);
    if (expect.size === 0) inbox.unsubscribe();
    await done;
    clearTimeout(timer);
    clearInterval(retry);
    inbox.unsubscribe();
    return { replies: [...replies.values()], missing: [...expect].sort(), elapsedMs: last - t0, resent };
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
