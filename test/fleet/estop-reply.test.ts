/**
 * The fleet e-stop's reply describes the latch just set (issue 24 item 1, issue 25 item 6): after a
 * first stop and a reset, a second stop with another reason answers with the second one's source
 * and reason, as the robot latched it, for two bodies' cores in their own threads (serve's one path).
 * A closed fleet (test/support/fleet.ts): each stop is signed by its operator, whose name the latch records.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import type { FleetClient } from "../../src/fleet/client.js";
import { type ClosedFleet, startClosedFleet } from "../support/fleet.js";
import { hasNats, NATS_SKIP } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

useRuntimeDir("bodylink-estop-reply-");

describe.skipIf(!hasNats)("the fleet e-stop's reply", { timeout: 60_000 }, () => {
  let fleet: ClosedFleet;
  const as = new Map<string, FleetClient>();
  const rts: RunningRuntime[] = [];
  const op = (name: string) => as.get(name)!;

  beforeAll(async () => {
    fleet = await startClosedFleet({ robots: ["nao-w", "arm-w"], operators: ["alice", "bob", "carol", "dave"] });
    for (const [body, name] of [
      ["nao", "nao-w"],
      ["p7", "arm-w"],
    ] as const) {
      const rt = await startRuntime({
        body,
        name,
        ...SIM_RUNTIME_OPTIONS,
        seed: 1,
        tny: false,
        fleet: fleet.url,
        fleetDir: fleet.bundle(name),
      });
      rts.push(rt);
      await rt.fleet!.joined();
    }
    for (const n of ["alice", "bob", "carol", "dave"]) as.set(n, await fleet.client(n));
  }, 60_000);

  afterEach(async () => {
    await op("alice").reset(
      rts.map((r) => r.name),
      { reason: "area clear" },
    );
  });

  afterAll(async () => {
    for (const c of as.values()) await c.close();
    for (const r of rts) await r.close();
    await fleet?.close();
  });

  it("after a stop and a reset, the next stop's reply (and the robot's latch) carry the new source and reason", async () => {
    const names = rts.map((r) => r.name);
    const first = await op("alice").estop(names, { reason: "first stop" });
    expect(first.missing).toEqual([]);
    for (const r of first.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:alice", reason: "first stop" });
    const reset = await op("alice").reset(names, { reason: "area clear" });
    expect(reset.replies.map((r) => r.estop.latched)).toEqual([false, false]);

    const second = await op("bob").estop(names, { reason: "second stop" });
    expect(second.missing).toEqual([]);
    for (const r of second.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:bob", reason: "second stop" });
    for (const rt of rts) expect(rt.robot.estopState(), rt.name).toMatchObject({ latched: true, source: "fleet:bob", reason: "second stop" });
  });

  it("a stop on a robot already latched answers with the latch that holds (the first one), as the robot keeps it", async () => {
    const names = rts.map((r) => r.name);
    await op("carol").estop(names, { reason: "holding" });
    const again = await op("dave").estop(names, { reason: "late second" });
    for (const r of again.replies) expect(r.estop, r.name).toMatchObject({ latched: true, source: "fleet:carol", reason: "holding" });
    for (const rt of rts) expect(rt.robot.estopState(), rt.name).toMatchObject({ source: "fleet:carol", reason: "holding" });
  });
});

if (!hasNats) describe("fleet e-stop reply", () => it.skip(NATS_SKIP, () => undefined));
