import foxglove from "@foxglove/ws-protocol";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { until } from "../lola/client.js";
import { singleTypeProblems } from "../support/single-type.js";

const { FoxgloveClient } = foxglove;
useRuntimeDir("bl-fx-worker-");

let rt: RunningRuntime | null = null;
let client: InstanceType<typeof FoxgloveClient> | null = null;
afterEach(async () => {
  client?.close();
  client = null;
  await rt?.close("test over");
  rt = null;
});

describe.each(["p7", "tny360"] as const)("serve --body %s --foxglove (core in its worker, no file)", (body) => {
  it("a Foxglove client receives every cycle's state and the e-stop event, live", async () => {
    rt = await startRuntime({ body, foxglove: 0, host: "127.0.0.1", apiPort: 0, lola: false, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [11], seed: 2, tny: true, tnyPort: 0, quiet: true });
    expect(rt.host).not.toBeNull();
    expect(rt.recorder?.files).toEqual([]);
    const url = /Foxglove: (ws:\/\/\S+)/.exec(rt.lines.join("\n"))?.[1];
    expect(url).toBeDefined();
    const ws = new WebSocket(url!, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
    const c = new FoxgloveClient({ ws: ws as unknown as ConstructorParameters<typeof FoxgloveClient>[0]["ws"] });
    client = c;
    const channels: Array<{ id: number; topic: string; encoding: string; schema: string; schemaName: string }> = [];
    c.on("advertise", (cs) => channels.push(...cs));
    const got = new Map<number, Array<Record<string, unknown>>>();
    c.on("message", (m) => {
      const list = got.get(m.subscriptionId) ?? [];
      list.push(JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>);
      got.set(m.subscriptionId, list);
    });
    await until(() => channels.some((ch) => ch.topic === `/${body}/state`), "the state channel advertised", 10_000);
    expect(channels.map((ch) => ch.topic)).not.toContain("/nao/state");
    const state = channels.find((ch) => ch.topic === `/${body}/state`)!;
    expect(state.schemaName).toBe(body === "p7" ? "bodylink.P7State" : "bodylink.Tny360State");
    const schema = JSON.parse(state.schema) as { properties: Record<string, unknown> };
    // Every advertised JSON schema (/api/state and the body's state included) passes Lichtblick's single-type rule.
    expect(channels.map((ch) => ch.topic)).toContain("/api/state");
    for (const ch of channels.filter((x) => x.encoding === "json")) expect(singleTypeProblems(JSON.parse(ch.schema), ch.topic)).toEqual([]);
    const stateSub = c.subscribe(state.id);
    const eventSub = c.subscribe(channels.find((ch) => ch.topic === "/events")!.id);
    await until(() => (got.get(stateSub)?.length ?? 0) >= 50, "50 live states", 15_000);
    // The e-stop, through the robot API, reaches the Foxglove client as an event.
    const r = await fetch(`${rt.record.apiUrl}/v1/estop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "live e-stop" }) });
    expect(r.status).toBe(200);
    await until(() => (got.get(eventSub) ?? []).some((e) => e.type === "estop"), "the e-stop event", 10_000);
    const states = got.get(stateSub)!;
    // Every cycle while subscribed: consecutive cycle numbers (nothing is skipped for a client that keeps up).
    for (let i = 1; i < states.length; i++) expect(states[i]!.cycle).toBe((states[i - 1]!.cycle as number) + 1);
    for (const s of states.slice(0, 5)) {
      expect(s).toMatchObject({ type: "state", body });
      for (const k of Object.keys(s)) expect(Object.keys(schema.properties)).toContain(k);
      expect(s.joint_positions).toHaveLength(body === "p7" ? 7 : 14);
    }
    expect(JSON.stringify((got.get(eventSub) ?? []).find((e) => e.type === "estop"))).toMatch(/live e-stop/);
  }, 60_000);
});
