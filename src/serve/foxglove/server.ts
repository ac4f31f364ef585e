/**
 * A live Foxglove WebSocket server (`serve --foxglove [PORT]`): Foxglove (or Lichtblick) connects
 * to `ws://host:port/` and sees the recording's channels live, with the same schemas.
 *
 * Protocol `foxglove.websocket.v1` (foxglove/ws-protocol docs/spec.md), the parts a viewer needs,
 * with its exact framing:
 * - on connect the server sends `serverInfo` and one `advertise` with every channel
 *   ({ id, topic, encoding, schemaName, schema, schemaEncoding });
 * - the client sends `subscribe` { subscriptions: [{ id, channelId }] } and `unsubscribe`
 *   { subscriptionIds };
 * - each message goes out as a binary frame: u8 opcode 0x01 | u32 subscription id | u64 log
 *   time, ns | payload (all little-endian).
 *
 * The data is the recorder's consumer output (recorder.ts `onMessage`), so nothing here runs in
 * the cycle. Every client is bounded (docs/security.md, "Bounded per client"):
 * - subscriptions: at most `maxSubscriptionsPerChannel` ids on one channel and `maxSubscriptions`
 *   in all; more are refused with one status per message. A subscription id names one channel:
 *   reusing an id that is bound (to any channel) is refused, so every frame's id says its channel;
 * - bytes queued: checked before every send (not once per message: one message fans out to every
 *   id), so a client never holds more than `maxBufferedBytes` + one frame unsent, and all clients
 *   together never more than `maxQueuedBytes` + one frame; what does not fit is skipped (`dropped`);
 * - a client that stays over its bound for `slowClientMs` is closed (`slowClosed`): it holds
 *   memory and a slot and reads nothing;
 * - a socket that is closing gets nothing (ws would count every send to a closed socket).
 * Binary client messages (client publish, service calls) are not offered: a service call is
 * answered `serviceCallFailure`, anything else a status.
 *
 * Access: loopback by default; the Host, token and Origin rules of the robot API (web-access.ts,
 * docs/security.md) apply to every upgrade; off loopback a token is required.
 */
import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { CHANNELS } from "../../record/channels.js";
import type { Recorder } from "../../record/recorder.js";
import { WebAccess, type WebAccessOptions, requireTokenOffLoopback } from "../web-access.js";

import { DEFAULT_FOXGLOVE_PORT, FOXGLOVE_SUBPROTOCOL } from "./constants.js";

export { DEFAULT_FOXGLOVE_PORT, FOXGLOVE_SUBPROTOCOL };
/** Server binary opcode: message data. */
const MESSAGE_DATA = 0x01;
/** Client binary opcode: service call request. */
const SERVICE_CALL_REQUEST = 0x02;

export interface FoxgloveServerOptions extends WebAccessOptions {
  host?: string;
  /** Defaults to 8765 (Foxglove's default); 0 picks a free port. */
  port?: number;
  /** A client with more than this many bytes unsent loses messages until it catches up (checked per send). Defaults to 4 MiB. */
  maxBufferedBytes?: number;
  /** All clients together: more than this many bytes unsent and every client loses messages. Defaults to 16 MiB. */
  maxQueuedBytes?: number;
  /** A client over `maxBufferedBytes` for this long is closed, ms. Defaults to 5000. */
  slowClientMs?: number;
  /** Most subscription ids one client holds on one channel. Defaults to 4 (a viewer takes one). */
  maxSubscriptionsPerChannel?: number;
  /** Most subscription ids one client holds in all. Defaults to 256. */
  maxSubscriptions?: number;
  /** Most clients at once. Defaults to 8. */
  maxClients?: number;
}

export interface FoxgloveServer {
  readonly url: string;
  readonly port: number;
  /** Frames sent; frames skipped for slow clients; refused upgrades; subscriptions refused; clients closed as too slow; bytes queued now, all clients. */
  stats(): { clients: number; sent: number; dropped: number; refused: number; subscriptionsRefused: number; slowClosed: number; queuedBytes: number };
  close(): Promise<void>;
}

interface Client {
  readonly ws: WebSocket;
  /** channel id → subscription ids */
  readonly subs: Map<number, number[]>;
  /** subscription id → channel id (an id names one channel) */
  readonly ids: Map<number, number>;
  /** When it went over its byte bound (performance.now()), or -1 while under it. */
  overSinceMs: number;
}

export async function startFoxgloveServer(recorder: Recorder, opts: FoxgloveServerOptions = {}): Promise<FoxgloveServer> {
  const host = opts.host ?? "127.0.0.1";
  requireTokenOffLoopback(host, opts.token);
  const access = new WebAccess(host, opts);
  const maxBuffered = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
  const maxQueued = opts.maxQueuedBytes ?? 16 * 1024 * 1024;
  const slowClientMs = opts.slowClientMs ?? 5000;
  const maxPerChannel = opts.maxSubscriptionsPerChannel ?? 4;
  const maxSubscriptions = opts.maxSubscriptions ?? 256;
  const maxClients = opts.maxClients ?? 8;
  const channels = CHANNELS.filter((c) => recorder.hasChannel(c.ring)).map((c) => ({
    id: c.ring,
    topic: c.topic,
    encoding: c.messageEncoding,
    schemaName: c.schemaName ?? "",
    schema: c.schemaName ? JSON.stringify(recorder.schemaFor(c.ring)) : "",
    ...(c.schemaName ? { schemaEncoding: "jsonschema" } : {}),
  }));
  const clients = new Set<Client>();
  let sent = 0;
  let dropped = 0;
  let refused = 0;
  let subscriptionsRefused = 0;
  let slowClosed = 0;

  const http = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end(`Foxglove WebSocket server (${FOXGLOVE_SUBPROTOCOL}): open it in Foxglove, "Open connection", Foxglove WebSocket\n`);
  });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(FOXGLOVE_SUBPROTOCOL) ? FOXGLOVE_SUBPROTOCOL : false),
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const no = access.check(req, { upgrade: true });
    const full = clients.size >= maxClients;
    if (no || full) {
      refused++;
      const status = no ? no.status : 503;
      const body = `${no ? no.message : `at most ${maxClients} Foxglove clients`}\n`;
      socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws));
  });

  function onConnection(ws: WebSocket): void {
    const c: Client = { ws, subs: new Map(), ids: new Map(), overSinceMs: -1 };
    clients.add(c);
    ws.on("error", () => ws.terminate());
    ws.on("close", () => clients.delete(c));
    ws.on("message", (raw, isBinary) => {
      if (isBinary) return binary(ws, raw as Buffer);
      let msg: { op?: string; subscriptions?: Array<{ id?: unknown; channelId?: unknown }>; subscriptionIds?: unknown[] };
      try {
        msg = JSON.parse(String(raw));
      } catch {
        return status(ws, 2, "not JSON");
      }
      if (msg.op === "subscribe" && Array.isArray(msg.subscriptions)) subscribe(c, msg.subscriptions);
      else if (msg.op === "unsubscribe" && Array.isArray(msg.subscriptionIds)) {
        for (const id of msg.subscriptionIds) {
          const ch = typeof id === "number" ? c.ids.get(id) : undefined;
          if (ch === undefined) continue;
          c.ids.delete(id as number);
          const list = c.subs.get(ch)!;
          list.splice(list.indexOf(id as number), 1);
          if (list.length === 0) c.subs.delete(ch);
        }
      } else {
        status(ws, 1, `unsupported op ${JSON.stringify(String(msg.op).slice(0, 40))}`);
      }
    });
    ws.send(JSON.stringify({ op: "serverInfo", name: "bodylink", capabilities: [], supportedEncodings: [], metadata: {}, sessionId: String(Date.now()) }));
    ws.send(JSON.stringify({ op: "advertise", channels }));
  }

  /** Bind each id to its channel within the client's bounds; every refusal of one message is summed in one status. */
  function subscribe(c: Client, list: Array<{ id?: unknown; channelId?: unknown }>): void {
    const refusals = new Map<string, number>();
    const refuse = (why: string) => {
      refusals.set(why, (refusals.get(why) ?? 0) + 1);
      subscriptionsRefused++;
    };
    for (const s of list) {
      const id = s?.id;
      const channelId = s?.channelId;
      if (!Number.isInteger(id) || !Number.isInteger(channelId) || (id as number) < 0 || (id as number) > 0xffffffff) {
        refuse("id and channelId must be integers, id a u32");
        continue;
      }
      const ch = channels.find((x) => x.id === channelId);
      if (!ch) refuse(`no channel ${String(channelId)}`);
      else if (c.ids.has(id as number)) refuse(c.ids.get(id as number) === ch.id ? "subscription id already subscribed" : "subscription id already bound to another channel (unsubscribe it first)");
      else if (c.ids.size >= maxSubscriptions) refuse(`at most ${maxSubscriptions} subscriptions per client`);
      else if ((c.subs.get(ch.id)?.length ?? 0) >= maxPerChannel) refuse(`at most ${maxPerChannel} subscriptions per channel`);
      else {
        c.ids.set(id as number, ch.id);
        const ids = c.subs.get(ch.id);
        if (ids) ids.push(id as number);
        else c.subs.set(ch.id, [id as number]);
      }
    }
    if (refusals.size > 0) status(c.ws, 2, `subscriptions refused: ${[...refusals].map(([why, n]) => `${n} × ${why}`).join("; ")}`);
  }

  const unsubscribe = recorder.onMessage((channel, logTimeNs, data) => {
    // Bytes queued by every client, updated as this message goes out (maxQueuedBytes).
    let queued = 0;
    for (const c of clients) queued += c.ws.bufferedAmount;
    const now = performance.now();
    for (const c of clients) {
      const ids = c.subs.get(channel);
      if (!ids || c.ws.readyState !== c.ws.OPEN) continue;
      let i = 0;
      for (; i < ids.length; i++) {
        const before = c.ws.bufferedAmount;
        if (before > maxBuffered || queued > maxQueued) break;
        const frame = Buffer.allocUnsafe(13 + data.length);
        frame[0] = MESSAGE_DATA;
        frame.writeUInt32LE(ids[i]!, 1);
        frame.writeBigUInt64LE(logTimeNs, 5);
        frame.set(data, 13);
        c.ws.send(frame);
        queued += c.ws.bufferedAmount - before;
        sent++;
      }
      dropped += ids.length - i;
      if (c.ws.bufferedAmount <= maxBuffered) c.overSinceMs = -1;
      else if (c.overSinceMs < 0) c.overSinceMs = now;
      else if (now - c.overSinceMs > slowClientMs) {
        slowClosed++;
        c.ws.terminate(); // reads nothing: its memory and its slot go to someone who does
      }
    }
  });

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(opts.port ?? DEFAULT_FOXGLOVE_PORT, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  return {
    url: `ws://${host.includes(":") ? `[${host}]` : host}:${port}/`,
    port,
    stats: () => {
      let queuedBytes = 0;
      for (const c of clients) queuedBytes += c.ws.bufferedAmount;
      return { clients: clients.size, sent, dropped, refused, subscriptionsRefused, slowClosed, queuedBytes };
    },
    async close() {
      unsubscribe();
      for (const c of clients) c.ws.terminate();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A binary client message: this server offers neither client publish (opcode 0x01) nor services
 * (0x02). A service call is answered `serviceCallFailure` with its ids (u8 op | u32 service id |
 * u32 call id | …), so the caller's promise ends; anything else gets a status.
 */
function binary(ws: WebSocket, raw: Buffer): void {
  if (raw.length >= 9 && raw[0] === SERVICE_CALL_REQUEST) {
    ws.send(JSON.stringify({ op: "serviceCallFailure", serviceId: raw.readUInt32LE(1), callId: raw.readUInt32LE(5), message: "bodylink offers no services" }));
  } else {
    status(ws, 2, `binary message ${raw.length ? `opcode 0x${raw[0]!.toString(16).padStart(2, "0")}` : "(empty)"} not supported: bodylink offers no client publish and no services`);
  }
}

/** Protocol status message: level 0 info, 1 warning, 2 error. */
function status(ws: WebSocket, level: number, message: string): void {
  ws.send(JSON.stringify({ op: "status", level, message }));
}
