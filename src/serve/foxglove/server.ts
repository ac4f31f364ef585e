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
 * the cycle. A slow client loses messages, never slows anything: a message is skipped for a client
 * whose socket still holds more than `maxBufferedBytes` unsent (counted in `dropped`).
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

export const FOXGLOVE_SUBPROTOCOL = "foxglove.websocket.v1";
export const DEFAULT_FOXGLOVE_PORT = 8765;
const MESSAGE_DATA = 0x01;

export interface FoxgloveServerOptions extends WebAccessOptions {
  host?: string;
  /** Defaults to 8765 (Foxglove's default); 0 picks a free port. */
  port?: number;
  /** A client with more than this many bytes unsent loses messages until it catches up. Defaults to 4 MiB. */
  maxBufferedBytes?: number;
  /** Most clients at once. Defaults to 8. */
  maxClients?: number;
}

export interface FoxgloveServer {
  readonly url: string;
  readonly port: number;
  /** Messages skipped for slow clients, refused upgrades. */
  stats(): { clients: number; sent: number; dropped: number; refused: number };
  close(): Promise<void>;
}

interface Client {
  readonly ws: WebSocket;
  /** channel id → subscription ids */
  readonly subs: Map<number, Set<number>>;
}

export async function startFoxgloveServer(recorder: Recorder, opts: FoxgloveServerOptions = {}): Promise<FoxgloveServer> {
  const host = opts.host ?? "127.0.0.1";
  requireTokenOffLoopback(host, opts.token);
  const access = new WebAccess(host, opts);
  const maxBuffered = opts.maxBufferedBytes ?? 4 * 1024 * 1024;
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
    const c: Client = { ws, subs: new Map() };
    clients.add(c);
    ws.on("error", () => ws.terminate());
    ws.on("close", () => clients.delete(c));
    ws.on("message", (raw, isBinary) => {
      if (isBinary) return; // clientPublish is not offered
      let msg: { op?: string; subscriptions?: Array<{ id?: unknown; channelId?: unknown }>; subscriptionIds?: unknown[] };
      try {
        msg = JSON.parse(String(raw));
      } catch {
        return status(ws, 2, "not JSON");
      }
      if (msg.op === "subscribe" && Array.isArray(msg.subscriptions)) {
        for (const s of msg.subscriptions.slice(0, 256)) {
          if (!Number.isInteger(s.id) || !Number.isInteger(s.channelId)) continue;
          const ch = channels.find((x) => x.id === s.channelId);
          if (!ch) {
            status(ws, 1, `no channel ${String(s.channelId)}`);
            continue;
          }
          const set = c.subs.get(ch.id) ?? new Set<number>();
          c.subs.set(ch.id, set);
          set.add(s.id as number);
        }
      } else if (msg.op === "unsubscribe" && Array.isArray(msg.subscriptionIds)) {
        for (const id of msg.subscriptionIds) for (const set of c.subs.values()) set.delete(id as number);
      } else {
        status(ws, 1, `unsupported op ${JSON.stringify(String(msg.op).slice(0, 40))}`);
      }
    });
    ws.send(JSON.stringify({ op: "serverInfo", name: "bodylink", capabilities: [], supportedEncodings: [], metadata: {}, sessionId: String(Date.now()) }));
    ws.send(JSON.stringify({ op: "advertise", channels }));
  }

  const unsubscribe = recorder.onMessage((channel, logTimeNs, data) => {
    for (const c of clients) {
      const subs = c.subs.get(channel);
      if (!subs || subs.size === 0) continue;
      if (c.ws.bufferedAmount > maxBuffered) {
        dropped += subs.size;
        continue;
      }
      for (const id of subs) {
        const frame = Buffer.allocUnsafe(13 + data.length);
        frame[0] = MESSAGE_DATA;
        frame.writeUInt32LE(id, 1);
        frame.writeBigUInt64LE(logTimeNs, 5);
        frame.set(data, 13);
        c.ws.send(frame);
        sent++;
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
    stats: () => ({ clients: clients.size, sent, dropped, refused }),
    async close() {
      unsubscribe();
      for (const c of clients) c.ws.terminate();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Protocol status message: level 0 info, 1 warning, 2 error. */
function status(ws: WebSocket, level: number, message: string): void {
  ws.send(JSON.stringify({ op: "status", level, message }));
}
