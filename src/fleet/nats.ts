/** The NATS pieces the bridge and the client share: buckets, the event stream, lease headers, read pacing. */
import { Socket } from "node:net";
import { jetstreamManager } from "@nats-io/jetstream";
import type { KV, Kvm } from "@nats-io/kv";
import { Match, type MsgHdrs, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
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
    await jsm.streams.add({ name: EVENTS_STREAM, subjects: [subject.allEvents], max_age: 24 * 3600 * 1e9, max_msgs: 100_000 }).catch((e: unknown) => {
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

const paced = new WeakSet<Socket>();

/**
 * At most one socket read (about 64 KiB) of this connection per event-loop turn. libuv reads a
 * readable socket up to 32 times in a row before it looks at the next one, and nats.js parses each
 * read and calls the subscriptions' callbacks before returning: under a flood that is ~45,000
 * requests (200 ms of a quiet core, seconds of a loaded one) ahead of any other socket of this
 * thread, the e-stop connection's among them. Pausing after each read and resuming on the next
 * turn (setImmediate) puts the other sockets between two reads; throughput is unchanged while the
 * thread keeps up. Re-apply after a reconnect (a new socket).
 *
 * NOTE: reaches into nats.js 3.3.1's internals (`protocol.transport.socket`, pinned exactly in
 * package.json); returns false and does nothing when they are not there, which
 * test/fleet/flood.test.ts would show as a late e-stop.
 */
export function paceReads(nc: NatsConnection): boolean {
  const socket = (nc as unknown as { protocol?: { transport?: { socket?: unknown } } }).protocol?.transport?.socket;
  if (!(socket instanceof Socket)) return false;
  if (paced.has(socket)) return true;
  paced.add(socket);
  const resume = () => socket.resume();
  socket.on("data", () => {
    if (socket.isPaused()) return;
    socket.pause();
    setImmediate(resume);
  });
  return true;
}

/** NATS headers holding these values (signature headers from sign.ts, the lease header). */
export function headersOf(values: Readonly<Record<string, string>>): MsgHdrs {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(values)) h.set(k, v);
  return h;
}

/** A header's value ("" when absent), its name matched without regard to case. */
export function headerGetter(h: MsgHdrs | undefined): (name: string) => string {
  return (name) => h?.get(name, Match.IgnoreCase) ?? "";
}
