/**
 * The fleet's request gate (src/fleet/gate.ts) on a clock the test moves: per-sender and total
 * token buckets, the in-flight bound, the bounded table of senders (and its overflow bucket), the
 * refusals' own budget, and the sender key taken from the reply subject.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RequestGate, senderOf } from "../../src/fleet/gate.js";

const limits = { perSenderHz: 10, perSenderBurst: 5, totalHz: 100, totalBurst: 20, maxInFlight: 1000, maxSenders: 4, refusalsHz: 3, floodRefusals: 1000 };

/** Admit `n` requests from `sender` at `t`, each done at once; how many were "ok". */
function burst(g: RequestGate, sender: string, n: number, t: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++)
    if (g.admit(sender, t) === "ok") {
      ok++;
      g.done();
    }
  return ok;
}

describe("senderOf", () => {
  it("is the reply subject without its last token: one key per nats.js connection, or per user inbox prefix", () => {
    expect(senderOf("_INBOX.ABC123.7")).toBe("_INBOX.ABC123");
    expect(senderOf("_INBOX.ABC123.8")).toBe("_INBOX.ABC123");
    expect(senderOf("_INBOX_alice.XYZ.1")).toBe("_INBOX_alice.XYZ");
    expect(senderOf("_INBOX.only")).toBe("_INBOX");
    expect(senderOf("noDots")).toBe("noDots");
    expect(senderOf(undefined)).toBe("-");
    expect(senderOf("")).toBe("-");
    expect(senderOf(`${"x".repeat(500)}.1`)).toHaveLength(128);
  });
});

describe("RequestGate", () => {
  it("a sender gets its burst, then its rate; another sender is not starved by it", () => {
    const g = new RequestGate(limits, 0);
    expect(burst(g, "a", 50, 0)).toBe(5);
    expect(g.admit("a", 0)).toBe("rate");
    expect(burst(g, "b", 5, 0)).toBe(5);
    // 10/s: one more every 100 ms
    expect(burst(g, "a", 50, 100)).toBe(1);
    expect(burst(g, "a", 50, 1000)).toBe(5); // capped at the burst
  });

  it("the total bucket holds against a client that invents a key per request", () => {
    const g = new RequestGate({ ...limits, maxSenders: 10_000 }, 0);
    let ok = 0;
    for (let i = 0; i < 1000; i++) ok += burst(g, `_INBOX.k${i}`, 1, 0);
    expect(ok).toBe(20);
    // A second later: at most the total rate's worth (100), whatever the keys.
    ok = 0;
    for (let i = 0; i < 1000; i++) ok += burst(g, `_INBOX.n${i}`, 1, 1000);
    expect(ok).toBe(20); // the burst refilled from 0 to its cap of 20
  });

  it("the table of senders is bounded: past maxSenders new keys share one bucket until idle ones are swept", () => {
    const g = new RequestGate(limits, 0);
    for (const k of ["a", "b", "c", "d"]) expect(burst(g, k, 1, 0)).toBe(1);
    expect(g.senders).toBe(4);
    // e, f, g share the overflow bucket (burst 5) at t = 0
    expect(burst(g, "e", 3, 0) + burst(g, "f", 3, 0) + burst(g, "g", 3, 0)).toBe(5);
    expect(g.senders).toBe(4);
    // One second later a, b, c, d are full again (idle): the sweep drops them and e gets its own bucket.
    expect(burst(g, "e", 10, 1000)).toBe(5);
    expect(g.senders).toBe(1);
  });

  it("past maxInFlight a request is refused as busy until one is done", () => {
    const g = new RequestGate({ ...limits, maxInFlight: 2 }, 0);
    expect(g.admit("a", 0)).toBe("ok");
    expect(g.admit("b", 0)).toBe("ok");
    expect(g.admit("c", 0)).toBe("busy");
    expect(g.inFlight).toBe(2);
    g.done();
    expect(g.admit("c", 0)).toBe("ok");
  });

  it("refusals have their own budget: answered while it lasts, then dropped, and counted either way", () => {
    const g = new RequestGate(limits, 0);
    const answered = Array.from({ length: 10 }, () => g.answerRefusal(true, 0)).filter(Boolean).length;
    expect(answered).toBe(3);
    expect(g.answerRefusal(false, 5000)).toBe(false); // no reply subject: nothing to answer
    expect(g.counters).toEqual({ admitted: 0, refused: 3, dropped: 8 });
  });

  it("a flood is floodRefusals refusals within one 250 ms window; calm() starts counting afresh", () => {
    const g = new RequestGate({ ...limits, refusalsHz: 1, floodRefusals: 10 }, 0);
    for (let i = 0; i < 9; i++) g.answerRefusal(true, 0);
    expect(g.flooded).toBe(false);
    g.answerRefusal(false, 249);
    expect(g.flooded).toBe(true);
    g.calm();
    expect(g.flooded).toBe(false);
    // Spread over windows, the same count is no flood.
    for (let i = 0; i < 20; i++) g.answerRefusal(true, 1000 + i * 30);
    expect(g.flooded).toBe(false);
  });

  it("property: over any schedule, one sender never gets more than its burst plus its rate times the time", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 60 }), (steps) => {
        const g = new RequestGate({ ...limits, totalHz: 1e6, totalBurst: 1e6 }, 0);
        let t = 0;
        let ok = 0;
        for (const [dt, n] of steps) {
          t += dt;
          ok += burst(g, "s", n, t);
        }
        return ok <= limits.perSenderBurst + (t * limits.perSenderHz) / 1000 + 1e-9;
      }),
    );
  });
});
