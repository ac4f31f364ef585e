/**
 * The Foxglove server is bounded per client (issue 25, Build 5; issue 22's live-server nits):
 * subscription ids per channel and per client, bytes queued per client checked before every send,
 * bytes queued by all clients, a client that reads nothing closed; one id names one channel; a
 * binary service call gets an answer. The last test reproduces the reported wedge against a real
 * `bodylink serve --foxglove` (2,000 ids on each channel, then disconnect): `/v1/health` must keep
 * answering within 1 s and RSS stay under 400 MB.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type FoxgloveServer, FOXGLOVE_SUBPROTOCOL, startFoxgloveServer } from "../../src/serve/foxglove/server.js";
import { until } from "../lola/client.js";
import { type RecordedSim, recordedSim, tmpDir } from "../record/helpers.js";
import { type ServeRig, startServe } from "../rt/serve-rig.js";

let sim: RecordedSim | null = null;
let server: FoxgloveServer | null = null;
let rig: ServeRig | null = null;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await server?.close();
  await sim?.close();
  await rig?.close();
  server = null;
  sim = null;
  rig = null;
});

interface Channel {
  id: number;
  topic: string;
}

/** A raw protocol client: JSON messages in `json`, binary frames' subscription ids in `ids`. */
async function rawClient(url: string): Promise<{ ws: WebSocket; json: Array<Record<string, unknown>>; ids: number[]; channels: Channel[] }> {
  const ws = new WebSocket(url, [FOXGLOVE_SUBPROTOCOL]);
  sockets.push(ws);
  const json: Array<Record<string, unknown>> = [];
  const ids: number[] = [];
  let channels: Channel[] = [];
  ws.on("message", (raw, isBinary) => {
    const b = raw as Buffer;
    if (isBinary) ids.push(b.readUInt32LE(1));
    else {
      const m = JSON.parse(String(b)) as Record<string, unknown>;
      if (m.op === "advertise") channels = m.channels as Channel[];
      json.push(m);
    }
  });
  await until(() => channels.length > 0, "advertise");
  return {
    ws,
    json,
    ids,
    get channels() {
      return channels;
    },
  };
}

const send = (ws: WebSocket, m: unknown) => new Promise<void>((resolve, reject) => ws.send(JSON.stringify(m), (e) => (e ? reject(e) : resolve())));
const statuses = (json: Array<Record<string, unknown>>) => json.filter((m) => m.op === "status").map((m) => String(m.message));

describe("Foxglove server bounds", () => {
  it("caps subscription ids per channel and per client, refusing the rest in one status per message", async () => {
    sim = await recordedSim(join(tmpDir(), "fxb1.mcap"));
    server = await startFoxgloveServer(sim.recorder, { port: 0, maxSubscriptionsPerChannel: 3, maxSubscriptions: 5 });
    const c = await rawClient(server.url);
    const [a, b] = c.channels;
    // 2,000 ids on one channel: 3 taken, 1,997 refused, one status
    await send(c.ws, { op: "subscribe", subscriptions: Array.from({ length: 2000 }, (_, i) => ({ id: i, channelId: a!.id })) });
    await until(() => statuses(c.json).length === 1, "one status");
    expect(statuses(c.json)[0]).toMatch(/1997 × at most 3 subscriptions per channel/);
    // the client's total: 2 more fit (5), the third does not
    await send(c.ws, { op: "subscribe", subscriptions: [10_000, 10_001, 10_002].map((id) => ({ id, channelId: b!.id })) });
    await until(() => statuses(c.json).length === 2, "second status");
    expect(statuses(c.json)[1]).toMatch(/1 × at most 5 subscriptions per client/);
    expect(server.stats().subscriptionsRefused).toBe(1998);
    await sim.cycles(3);
    await until(() => c.ids.length > 0, "frames");
    expect(new Set(c.ids)).toEqual(new Set([0, 1, 2, 10_000, 10_001].filter((id) => c.ids.includes(id))));
    expect(c.ids.every((id) => [0, 1, 2, 10_000, 10_001].includes(id))).toBe(true);
  });

  it("refuses one subscription id bound to two channels (issue 22); after unsubscribe the id is free again", async () => {
    sim = await recordedSim(join(tmpDir(), "fxb2.mcap"));
    server = await startFoxgloveServer(sim.recorder, { port: 0 });
    const c = await rawClient(server.url);
    const state = c.channels.find((x) => x.topic === "/nao/state")!;
    const other = c.channels.find((x) => x.topic !== "/nao/state")!;
    await send(c.ws, {
      op: "subscribe",
      subscriptions: [
        { id: 7, channelId: state.id },
        { id: 7, channelId: other.id },
      ],
    });
    await until(() => statuses(c.json).length === 1, "status");
    expect(statuses(c.json)[0]).toMatch(/1 × subscription id already bound to another channel/);
    await send(c.ws, { op: "unsubscribe", subscriptionIds: [7] });
    await send(c.ws, { op: "subscribe", subscriptions: [{ id: 7, channelId: other.id }] });
    await new Promise((r) => setTimeout(r, 50));
    expect(statuses(c.json)).toHaveLength(1); // taken this time
    expect(server.stats().subscriptionsRefused).toBe(1);
  });

  it("answers a binary service call with serviceCallFailure and any other binary message with a status (issue 22)", async () => {
    sim = await recordedSim(join(tmpDir(), "fxb3.mcap"));
    server = await startFoxgloveServer(sim.recorder, { port: 0 });
    const c = await rawClient(server.url);
    const call = Buffer.alloc(9 + 4 + 4);
    call[0] = 0x02; // service call request
    call.writeUInt32LE(5, 1); // service id
    call.writeUInt32LE(42, 5); // call id
    call.writeUInt32LE(4, 9); // encoding length
    call.write("json", 13);
    c.ws.send(call);
    c.ws.send(Buffer.from([0x01, 0, 0, 0, 0])); // client message data
    await until(() => c.json.filter((m) => m.op === "serviceCallFailure" || m.op === "status").length === 2, "two answers");
    expect(c.json.find((m) => m.op === "serviceCallFailure")).toMatchObject({ serviceId: 5, callId: 42, message: expect.stringMatching(/no services/) });
    expect(statuses(c.json)[0]).toMatch(/opcode 0x01 not supported/);
  });

  it("checks the queued bytes before every send: a client that reads nothing holds at most its bound plus one frame, then is closed", async () => {
    sim = await recordedSim(join(tmpDir(), "fxb4.mcap"));
    const maxBufferedBytes = 64 * 1024;
    server = await startFoxgloveServer(sim.recorder, { port: 0, maxBufferedBytes, slowClientMs: 300, maxSubscriptionsPerChannel: 64 });
    const c = await rawClient(server.url);
    const state = c.channels.find((x) => x.topic === "/nao/state")!;
    await send(c.ws, { op: "subscribe", subscriptions: Array.from({ length: 64 }, (_, i) => ({ id: i, channelId: state.id })) });
    await new Promise((r) => setTimeout(r, 50));
    // The client stops reading: its socket's receive side fills, the server's send buffer grows.
    (c.ws as unknown as { _socket: import("node:net").Socket })._socket.pause();
    // after every message the server sent (its listener runs first): what it holds for the client
    let frameBytes = 0;
    let maxQueued = 0;
    const off = sim.recorder.onMessage((ch, _t, data) => {
      if (ch === state.id) frameBytes = Math.max(frameBytes, 13 + data.length);
      maxQueued = Math.max(maxQueued, server!.stats().queuedBytes);
    });
    for (let i = 0; i < 40; i++) await sim.cycles(5);
    off();
    expect(server.stats().dropped).toBeGreaterThan(0);
    // the bound was reached and held before every send (the kernel's socket buffers aside)
    expect(maxQueued).toBeGreaterThan(maxBufferedBytes);
    expect(maxQueued).toBeLessThanOrEqual(maxBufferedBytes + frameBytes);
    // over the bound for slowClientMs: closed
    await new Promise((r) => setTimeout(r, 350));
    await sim.cycles(2);
    await until(() => server!.stats().slowClosed === 1 && server!.stats().clients === 0, "the slow client closed");
  });

  it("serve --foxglove: 2,000 ids on every channel, then disconnect: /v1/health answers within 1 s, RSS stays under 400 MB", async () => {
    rig = await startServe(["--foxglove", "0"]);
    const url = /Foxglove: (ws:\/\/\S+)/.exec(rig.stdout())![1]!;
    const pid = rig.child.pid!;
    const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
    for (let round = 0; round < 2; round++) {
      const c = await rawClient(url);
      let id = 0;
      // in messages of 250 ids (the server once took 256 per message, and none per client)
      for (const ch of c.channels) for (let k = 0; k < 8; k++) await send(c.ws, { op: "subscribe", subscriptions: Array.from({ length: 250 }, () => ({ id: id++, channelId: ch.id })) });
      await new Promise((r) => setTimeout(r, 200));
      c.ws.terminate();
    }
    let worstMs = 0;
    let worstRss = 0;
    let ok = 0;
    let asked = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < 4000) {
      const s = performance.now();
      const res = await fetch(`${rig.apiUrl}/v1/health`, { signal: AbortSignal.timeout(1000) });
      // The main thread answers every time; the core's part may time out (503 BL_ERR_CORE_UNRESPONSIVE)
      // when other work loads this machine's 2 cores, which says nothing about the main thread.
      const body = (await res.json()) as { code?: string };
      if (res.status !== 200) expect(body.code).toBe("BL_ERR_CORE_UNRESPONSIVE");
      asked++;
      if (res.status === 200) ok++;
      worstMs = Math.max(worstMs, performance.now() - s);
      worstRss = Math.max(worstRss, rssMb());
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(worstMs).toBeLessThan(1000);
    expect(ok).toBeGreaterThanOrEqual(asked / 2);
    expect(worstRss).toBeLessThan(400);
  }, 60_000);
});
