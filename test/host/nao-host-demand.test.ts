/**
 * Nothing runs on the main thread per cycle for nobody (issue 26): the NAO's host copies the core's
 * state when it is read, wakes per cycle only while a cycle listener asks for it, samples at a
 * consumer's own rate (the 20 Hz stream), and its one idle timer keeps the heartbeat beating when
 * nothing else runs. And the joints' velocity, which the robot API's adapter used to estimate from
 * every cycle on the main thread, comes from the core's cycle.
 */
import type { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NaoHost } from "../../src/host/nao-host.js";
import { SimClock } from "../../src/runtime/clock.js";
import { adapterFor } from "../../src/serve/api/build.js";
import { StateStream } from "../../src/serve/api/stream.js";
import { simNao, StubSocket, step } from "../api/helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(ok: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe("the NAO's host on demand (its core in a worker)", { timeout: 60_000 }, () => {
  let host: NaoHost;
  beforeAll(async () => {
    host = await NaoHost.start({ seed: 2, usb: false, acceptBoardVersions: [11], gcEveryMs: 100, lola: null });
    await eventually(() => host.state.valid, "the first state", 20_000);
  }, 60_000);
  afterAll(async () => {
    await host?.shutdown();
  });

  it("follows no cycle while nobody listens, yet every read sees the newest state (one state per synchronous stretch)", async () => {
    expect(host.following).toBe(false);
    const a = host.state.seq;
    expect(host.state.seq).toBe(a); // the same stretch: the copy holds
    await sleep(100);
    const b = host.state.seq;
    expect(b).toBeGreaterThan(a + 3); // ~8 cycles in 100 ms, read without following any
    expect(b).toBeLessThanOrEqual(host.cycles);
    expect(host.following).toBe(false);
  });

  it("wakes per cycle only while a cycle listener is there, with the state copied for it", async () => {
    const seen: Array<{ seq: number; stateSeq: number }> = [];
    const off = host.onCycle((seq) => seen.push({ seq, stateSeq: host.state.seq }));
    expect(host.following).toBe(true);
    await sleep(600); // ~50 cycles; a loaded machine runs fewer
    off();
    expect(seen.length).toBeGreaterThan(10);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.seq).toBeGreaterThan(seen[i - 1]!.seq);
    for (const s of seen) expect(s.stateSeq).toBeGreaterThan(0);
    await eventually(() => !host.following, "the host to stop following once nobody listens", 3000);
  });

  it("samples at the consumer's rate (onSample), not the body's: about 20 times a second for a 50 ms period", async () => {
    const seqs: number[] = [];
    const off = host.onSample(50, () => seqs.push(host.state.seq));
    await sleep(1000);
    off();
    expect(host.following).toBe(false);
    // 20 samples a second nominally; timers on a loaded machine come late, never early
    expect(seqs.length).toBeGreaterThanOrEqual(8);
    expect(seqs.length).toBeLessThanOrEqual(21);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
    expect(() => host.onSample(0, () => {})).toThrow(RangeError);
  });

  it("the robot API's stream listens to nothing without subscribers; with one it samples the host at 20 Hz", async () => {
    const stream = new StateStream(adapterFor(host));
    await sleep(100);
    expect(host.following).toBe(false);
    const s = new StubSocket();
    stream.add(s as unknown as WebSocket);
    await sleep(1000);
    expect(host.following).toBe(false); // sampled, not followed
    const states = s.sent.filter((m) => m.type === "state").map((m) => m.seq!);
    expect(states.length).toBeGreaterThanOrEqual(8);
    expect(states.length).toBeLessThanOrEqual(22);
    for (let i = 1; i < states.length; i++) expect(states[i]!).toBeGreaterThan(states[i - 1]!);
    s.close();
    const n = stream.messagesSent;
    await sleep(200);
    expect(stream.messagesSent).toBe(n);
    stream.close();
  });

  it("the heartbeat keeps beating on the one idle timer while nothing else runs: a 300 ms bound never latches", async () => {
    host.watchHost(300);
    await sleep(1500);
    expect(host.following).toBe(false);
    expect(host.estopState().latched).toBe(false);
    host.watchHost(1000);
  });

  it("the safety log's counters cross in the control words, no request: late cycles as health counts them, link changes as they happen", async () => {
    // health is a request the core answers while it runs: a late cycle (a loaded machine) may land
    // between it and the read of the words. Between two reads that agree, health's count is theirs.
    let c0 = host.safetyCounters();
    for (let quiet = false, tries = 0; !quiet; tries++) {
      const before = host.safetyCounters();
      const h0 = await host.health();
      c0 = host.safetyCounters();
      expect(h0.cycle.lateCycles).toBeGreaterThanOrEqual(before.lateCycles);
      expect(h0.cycle.lateCycles).toBeLessThanOrEqual(c0.lateCycles);
      quiet = before.lateCycles === c0.lateCycles;
      if (quiet) expect(c0.lateCycles).toBe(h0.cycle.lateCycles);
      else expect(tries, "a health request with no late cycle around it").toBeLessThan(50);
    }
    await host.stop(); // the link goes "stopped"
    // the core's own count (the low bit is the host's stall verdict, folded in)
    await eventually(() => host.safetyCounters().linkChanges >> 1 !== c0.linkChanges >> 1, "the link change in the control words");
    expect((await host.health()).link).not.toBe("ok"); // "stopped", or "lost" once the host's watchdog sees no cycles
    const c1 = host.safetyCounters();
    await host.start();
    await eventually(() => host.safetyCounters().linkChanges >> 1 !== c1.linkChanges >> 1, "the link's change back");
    await eventually(() => host.state.link === "ok", "the link back to ok");
  });
});

describe("the joints' velocity comes from the core's cycle (NaoState.velocity)", () => {
  it("is the finite difference of the last two fresh states' positions, rad/s; 0 before there are two", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    expect(Array.from(robot.state.velocity)).toEqual(new Array(25).fill(0));
    await step(robot, clock, 3);
    for (let k = 0; k < 5; k++) {
      const p0 = Float32Array.from(robot.state.position);
      const t0 = robot.state.timestampMs;
      await step(robot, clock, 1);
      const dtS = (robot.state.timestampMs - t0) / 1000;
      expect(dtS).toBeGreaterThan(0);
      for (let i = 0; i < 25; i++) expect(robot.state.velocity[i]!).toBeCloseTo((robot.state.position[i]! - p0[i]!) / dtS, 3);
    }
    // The API serves it in its order (the adapter no longer listens to any cycle).
    const fields = adapterFor(robot).read("rest") as { joint_velocities: number[] } | null;
    expect(fields?.joint_velocities).toHaveLength(26);
  });
});
