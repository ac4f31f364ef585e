/** The live Foxglove server, tested with @foxglove/ws-protocol's own client. */
import { join } from "node:path";
import foxglove from "@foxglove/ws-protocol";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type FoxgloveServer, startFoxgloveServer } from "../../src/serve/foxglove/server.js";
import { until } from "../lola/client.js";
import { type RecordedSim, recordedSim, tmpDir } from "../record/helpers.js";
import { singleTypeProblems } from "../support/single-type.js";

const { FoxgloveClient } = foxglove;

let sim: RecordedSim | null = null;
let server: FoxgloveServer | null = null;
afterEach(async () => {
  await server?.close();
  await sim?.close();
  server = null;
  sim = null;
});

describe("serve --foxglove", () => {
  it("advertises the channels with their schemas; a subscriber receives decodable messages", async () => {
    sim = await recordedSim(join(tmpDir(), "fx.mcap"));
    server = await startFoxgloveServer(sim.recorder, { port: 0 });
    const ws = new WebSocket(server.url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
    const client = new FoxgloveClient({ ws: ws as unknown as ConstructorParameters<typeof FoxgloveClient>[0]["ws"] });
    const channels: Array<{ id: number; topic: string; encoding: string; schema: string; schemaName: string }> = [];
    client.on("advertise", (cs) => channels.push(...cs));
    const got: unknown[] = [];
    let subscription = -1;
    client.on("message", (m) => {
      if (m.subscriptionId === subscription) got.push(JSON.parse(new TextDecoder().decode(m.data)));
    });
    await until(() => channels.length > 0, "advertise");
    expect(channels.map((c) => c.topic)).toContain("/nao/state");
    const state = channels.find((c) => c.topic === "/nao/state")!;
    expect(state.encoding).toBe("json");
    expect(JSON.parse(state.schema).properties.position.maxItems).toBe(25);
    // Every advertised JSON schema (/api/state included) passes Lichtblick's single-type rule.
    expect(channels.map((c) => c.topic)).toContain("/api/state");
    for (const c of channels.filter((x) => x.encoding === "json")) expect(singleTypeProblems(JSON.parse(c.schema), c.topic)).toEqual([]);
    subscription = client.subscribe(state.id);
    await until(() => server!.stats().clients === 1, "the client");
    await new Promise((r) => setTimeout(r, 50)); // the subscribe message reaches the server
    for (let i = 0; i < 10 && got.length < 5; i++) {
      await sim.cycles(2);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(got.length).toBeGreaterThanOrEqual(5);
    const s = got[0] as { position: number[]; seq: number };
    expect(s.position).toHaveLength(25);
    expect((got[1] as { seq: number }).seq).toBeGreaterThan(s.seq);
    client.close();
  });

  it("refuses an upgrade from another origin, and binding off loopback without a token", async () => {
    sim = await recordedSim(join(tmpDir(), "fx2.mcap"));
    server = await startFoxgloveServer(sim.recorder, { port: 0 });
    const ws = new WebSocket(server.url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], { headers: { origin: "http://evil.example" } });
    const status = await new Promise<number>((resolve) => {
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
    });
    expect(status).toBe(403);
    expect(server.stats().refused).toBe(1);
    await expect(startFoxgloveServer(sim.recorder, { port: 0, host: "0.0.0.0" })).rejects.toThrow(/token/);
  });
});
