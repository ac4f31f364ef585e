/** The NATS pieces the bridge and the client share: buckets, the event stream, lease headers. */
import { jetstreamManager } from "@nats-io/jetstream";
import type { KV, Kvm } from "@nats-io/kv";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { EVENTS_STREAM, FLEET_LEASE_HEADER, subject } from "./subjects.js";

/** Open the bucket, creating it (history 1, max age `ttlMs`) when it does not exist. */
export async function openBucket(kvm: Kvm, name: string, ttlMs: number): Promise<KV> {
  // create() opens a bucket that exists with the same settings; one made with other settings
  // (another TTL) is opened as it is: the first runtime's settings hold for the fleet.
  try {
    return await kvm.create(name, { history: 1, ttl: ttlMs });
  } catch (e) {
    if (!/already in use|exists/i.test((e as Error).message)) throw e;
    return kvm.open(name);
  }
}

/** The events stream (fleet-wide history): the last 24 h, at most 100,000 events. */
export async function ensureEventStream(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(EVENTS_STREAM);
  } catch {
    await jsm.streams
      .add({ name: EVENTS_STREAM, subjects: [subject.allEvents], max_age: 24 * 3600 * 1e9, max_msgs: 100_000 })
      .catch((e: unknown) => {
        if (!/already in use/.test((e as Error).message)) throw e;
      });
  }
}

/** Headers carrying a lease id, for a fleet client's command request. */
export function leaseHeaders(leaseId: string) {
  const h = natsHeaders();
  h.set(FLEET_LEASE_HEADER, leaseId);
  return h;
}
