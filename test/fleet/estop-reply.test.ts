/**
 * The fleet e-stop's reply describes the latch just set (issue 24 item 1, issue 25 item 6): after a
 * first stop and a reset, a second stop with another reason answers with the second one's source
 * and reason, as the robot latched it, for two bodies' cores in their own threads (serve's one path).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { FleetClient } from "../../src/fleet/client.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

useRuntimeDir("bodylink-estop-reply-");

describe.skipIf(!hasNats)("the fleet e-stop's reply", { timeout: 60_000 }, () => {
  let nats: NatsServer;
  let client: FleetClient;
  const rts: RunningRuntime[] = [];

  beforeAll(async () => {
    nats = await startNats();
    for (const [body, name] of [
      ["nao", "nao-w"],
      ["p7", "arm-w"],
    ] as const) {
      const rt = await startRuntime({ body, name, host: "127.0.0.1", apiPort: 0, lola: false, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [11], seed: 1, tny: false, fleet: nats.url, quiet: true });
      rts.push(rt);
      await rt.fleet!.joined();
    }
    client = await FleetClient.connect({ url: nats.url });
  }, 60_000);

  afterEach(async () => {
    await client.reset(rts.map((r) => r.name), { reason: "area clear" });
  });

  afterAll(async () => {
    await client?.close();
    for (const r of rts) await r.close();
    await nats?.close();
  });

  it("after a stop and a reset, the next stop's reply (and the robot's latch) carry the new source and reason", async () => {
    const names = rts.map((r) => r.name);
    const first = await client.estop(names, { reason: "first stop", by: "alice" });
    expect(first.missing).toEqual([]);
    for (const r of first.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:alice", reason: "first stop" });
    const reset = await client.reset(names, { reason: "area clear", by: "alice" });
    expect(reset.replies.map((r) => r.estop.latched)).toEqual([false, false]);

    const second = await client.estop(names, { reason: "second stop", by: "bob" });
    expect(second.missing).toEqual([]);
    for (const r of second.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:bob", reason: "second stop" });
    for (const rt of rts) expect(rt.robot.estopState(), rt.name).toMatchObject({ latched: true, source: "fleet:bob", reason: "second stop" });
  });

  it("a stop on a robot already latched answers with the latch that holds (the first one), as the robot keeps it", async () => {
    const names = rts.map((r) => r.name);
    await client.estop(names, { reason: "holding", by: "carol" });
    const again = await client.estop(names, { reason: "late second", by: "dave" });
    for (const r of again.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:carol", reason: "holding" });
    for (const rt of rts) expect(rt.robot.estopState(), rt.name).toMatchObject({ source: "fleet:carol", reason: "holding" });
  });
});

if (!hasNats) describe("fleet e-stop reply", () => it.skip(NATS_SKIP, () => undefined));
