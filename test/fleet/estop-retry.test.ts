/**
 * `bodylink fleet estop` sends an unanswered e-stop again until every robot answers or the wait
 * ends, and names the robots that never did (issue 25, Build item 3). On a real nats-server, with
 * stand-ins for robots at the NATS level: one that loses the first two e-stops it is sent (as a
 * robot whose connection was cut would), one that answers at once, one that never answers.
 * Resets are never resent (a second reset could release a stop made after the first). A closed
 * fleet (test/support/fleet.ts): each stand-in logs in as its robot and signs its answers with the
 * robot's key, as a runtime does; the client is the operator `test`.
 */
import type { Subscription } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FleetClient } from "../../src/fleet/client.js";
import { headerGetter, headersOf } from "../../src/fleet/nats.js";
import { loadBundle } from "../../src/fleet/roster.js";
import { SIG_HEADERS, signReply } from "../../src/fleet/sign.js";
import { type EstopReply, subject } from "../../src/fleet/subjects.js";
import { cli } from "../support/cli.js";
import { type ClosedFleet, startClosedFleet } from "../support/fleet.js";
import { hasNats, NATS_SKIP } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

const dir = useRuntimeDir("bodylink-estop-retry-");

describe.skipIf(!hasNats)("the fleet e-stop is sent again until answered", { timeout: 60_000 }, () => {
  let fleet: ClosedFleet;
  const robots: FleetClient[] = [];
  let client: FleetClient;
  const subs: Subscription[] = [];
  /** Requests each stand-in received, by subject. */
  const received = new Map<string, string[]>();

  /** A stand-in that drops its first `lose` requests and answers the rest as a latched robot. */
  async function standIn(name: string, lose: number): Promise<void> {
    let seen = 0;
    const robot = await fleet.client(name);
    robots.push(robot);
    const key = loadBundle(fleet.bundle(name)).signingKey!;
    for (const s of [subject.estop(name), subject.estopAll, subject.reset(name), subject.resetAll])
      subs.push(
        robot.nc.subscribe(s, {
          callback: (_e, m) => {
            received.set(name, [...(received.get(name) ?? []), m.subject]);
            if (seen++ < lose || !m.reply) return;
            const latched = !m.subject.endsWith(".reset");
            const reply: EstopReply = {
              name,
              ok: true,
              estop: {
                latched,
                reason: latched ? "retried" : null,
                source: latched ? "fleet:test" : null,
                since_ms: latched ? Date.now() : null,
                category: latched ? 0 : null,
                phase: latched ? "cut" : "none",
              },
            };
            const data = new TextEncoder().encode(JSON.stringify(reply));
            m.respond(data, { headers: headersOf(signReply(key, m.subject, headerGetter(m.headers)(SIG_HEADERS.nonce), data)) });
          },
        }),
      );
  }

  beforeAll(async () => {
    fleet = await startClosedFleet({ robots: ["lossy-1", "fine-1", "ghost-1"], operators: ["test"] });
    client = await fleet.client("test");
    await standIn("lossy-1", 2);
    await standIn("fine-1", 0);
    for (const r of robots) await r.nc.flush();
  });

  afterAll(async () => {
    for (const s of subs) s.unsubscribe();
    for (const r of robots) await r.close();
    await client?.close();
    await fleet?.close();
  });

  it("the client resends to each robot that has not answered, every 250 ms, and counts one reply per robot", async () => {
    received.clear();
    const r = await client.estop(null, { reason: "retried" }, { expect: ["lossy-1", "fine-1"], maxWaitMs: 3000 });
    expect(r.missing).toEqual([]);
    expect(r.replies.map((x) => x.name).sort()).toEqual(["fine-1", "lossy-1"]);
    // The first went to bodylink.estop; the retries only to lossy-1, on its own subject (two lost
    // and one answered; one more if the machine delayed that answer past the next 250 ms).
    expect(received.get("lossy-1")!.slice(0, 3)).toEqual([subject.estopAll, subject.estop("lossy-1"), subject.estop("lossy-1")]);
    expect(received.get("fine-1")).toEqual([subject.estopAll]);
    expect(r.resent).toBe(received.get("lossy-1")!.length - 1);
    expect(r.resent).toBeGreaterThanOrEqual(2);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(400);
  });

  it("`bodylink fleet estop` names the robot that never answered, after resending to it until --wait-ms", async () => {
    received.clear();
    const r = await cli({ ...process.env, BODYLINK_RUNTIME_DIR: dir }, "fleet", "estop", "fine-1", "ghost-1", "--fleet", fleet.url, "--fleet-dir", fleet.bundle("test"), "--wait-ms", "1000");
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim()).toBe("bodylink: estop: no answer from ghost-1 [BL_ERR_FLEET_NO_ANSWER]");
    expect(r.stdout).toMatch(/^fine-1\s+ok\s+LATCHED \(fleet:test: retried\)$/m);
    expect(r.stdout).toMatch(/^ghost-1\s+NO ANSWER\s+\?$/m);
    // Sent again every 250 ms for 1 s: 3 times (fewer when the machine delays the timer), to ghost-1 only.
    expect(r.stdout).toMatch(/^1 answered in [\d.]+ ms \(sent again [1-4] times? to robots that had not answered\); 1 did not answer: ghost-1$/m);
    // Only on its own subject; twice when its signed answer took longer than 250 ms on a loaded machine.
    expect(new Set(received.get("fine-1"))).toEqual(new Set([subject.estop("fine-1")]));
  });

  it("a reset is never sent twice", async () => {
    received.clear();
    const r = await client.reset(["lossy-1", "ghost-1"], { reason: "area clear" }, { maxWaitMs: 700 });
    expect(r.resent).toBe(0);
    expect(r.missing).toEqual(["ghost-1"]);
    expect(received.get("lossy-1")).toEqual([subject.reset("lossy-1")]);
  });
});

if (!hasNats) describe("fleet e-stop retry", () => it.skip(NATS_SKIP, () => undefined));
