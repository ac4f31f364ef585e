/**
 * The state stream's pacing and slow-client policy, on simulated time with stand-in sockets:
 * one message per 50 ms of runtime clock (20 Hz on a 12 ms or 4 ms cycle), a subscriber with
 * unsent bytes is skipped (latest state, never a backlog), the others are not held back.
 */
import type { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/runtime/clock.js";
import { adapterFor } from "../../src/serve/api/build.js";
import { StateStream } from "../../src/serve/api/stream.js";
import { type AnyRobot, StubSocket, simNao, simP7, simTny, step } from "./helpers.js";

const flush = () => new Promise<void>((r) => setImmediate(r));

async function run(robot: AnyRobot, clock: SimClock, ms: number): Promise<void> {
  const period = robot.loop.timing.nominalPeriodMs;
  for (let t = 0; t < ms; t += period) {
    await step(robot, clock, 1);
    await flush();
  }
}

describe("state stream", () => {
  it("sends hello, the current state at once, then one state per 50 ms of runtime clock (NAO, 12 ms cycle)", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    await step(robot, clock, 2);
    const stream = new StateStream(adapterFor(robot));
    const s = new StubSocket();
    stream.add(s as unknown as WebSocket);
    expect(s.sent[0]).toMatchObject({ type: "hello", body: "nao", rate_hz: 20 });
    expect(s.sent[1]).toMatchObject({ type: "state", seq: robot.state.seq });
    await run(robot, clock, 3000);
    const seqs = s.states().slice(1);
    expect(seqs.length).toBeGreaterThanOrEqual(59);
    expect(seqs.length).toBeLessThanOrEqual(61);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
    // 50 ms is 4.17 cycles: gaps of 4 or 5 cycles, never a burst.
    const gaps = new Set(seqs.slice(1).map((v, i) => v - seqs[i]!));
    expect([...gaps].sort()).toEqual([4, 5]);
    expect(stream.messagesSent).toBe(seqs.length);
    stream.close();
    expect(s.readyState).toBe(3);
    expect(stream.subscribers).toBe(0);
  });

  it("paces the P7 (4 ms cycle) at exactly 20 Hz", async () => {
    const clock = new SimClock();
    const robot = await simP7(clock);
    const adapter = adapterFor(robot);
    const stream = new StateStream(adapter);
    const s = new StubSocket();
    stream.add(s as unknown as WebSocket);
    expect(s.sent).toHaveLength(1); // hello only: no state yet
    await run(robot, clock, 1000);
    const seqs = s.states();
    expect(seqs.length).toBe(20);
    expect(new Set(seqs.slice(1).map((v, i) => v - seqs[i]!))).toEqual(new Set([12, 13]));
    stream.close();
    adapter.close();
  });

  it("paces the TNY-360 (5 ms cycle) at exactly 20 Hz", async () => {
    const clock = new SimClock();
    const robot = await simTny(clock);
    const stream = new StateStream(adapterFor(robot));
    const s = new StubSocket();
    stream.add(s as unknown as WebSocket);
    await run(robot, clock, 1000);
    const seqs = s.states().slice(1);
    expect(seqs.length).toBe(20);
    expect(new Set(seqs.slice(1).map((v, i) => v - seqs[i]!))).toEqual(new Set([10]));
    stream.close();
  });

  it("skips a subscriber that has not taken the previous message, without holding back the others", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    const stream = new StateStream(adapterFor(robot));
    const fast = new StubSocket();
    const slow = new StubSocket();
    stream.add(fast as unknown as WebSocket);
    stream.add(slow as unknown as WebSocket);
    await run(robot, clock, 500);
    slow.bufferedAmount = 3000; // its kernel buffer is full: bytes wait in user space
    const slowBefore = slow.states().length;
    await run(robot, clock, 1000);
    expect(slow.states().length).toBe(slowBefore);
    expect(stream.messagesSkipped).toBeGreaterThanOrEqual(19);
    slow.bufferedAmount = 0; // caught up: gets the newest state next, not the 20 it missed
    await run(robot, clock, 60);
    const resumed = slow.states().slice(slowBefore);
    expect(resumed.length).toBe(1);
    expect(resumed[0]).toBe(fast.states().at(-1));
    expect(fast.states().length).toBeGreaterThanOrEqual(30);
    stream.close();
  });

  it("sends to many subscribers in slices of at most 0.1 ms, yielding to the event loop between them", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    await step(robot, clock, 1);
    const stream = new StateStream(adapterFor(robot));
    // Each send takes 0.04 ms of runtime clock.
    const socks = Array.from({ length: 40 }, () => {
      const s = new StubSocket();
      const send = s.send.bind(s);
      s.send = (d) => {
        send(d);
        clock.set(clock.nowMs() + 0.04);
      };
      stream.add(s as unknown as WebSocket);
      return s;
    });
    const before = socks.map((s) => s.states().length);
    robot.loop.step(); // due: schedules one broadcast
    await flush(); // the encoding, a slice of its own
    const got = () => socks.filter((s, i) => s.states().length > before[i]!).length;
    expect(got()).toBe(0);
    await flush(); // first send slice: 3 sends (0.12 ms > 0.1 ms, checked after every send)
    expect(got()).toBe(3);
    await flush();
    expect(got()).toBe(6);
    for (let i = 0; i < 20; i++) await flush();
    expect(got()).toBe(40);
    expect(new Set(socks.map((s) => s.states().at(-1))).size).toBe(1); // the same state to all
    // The encoding (0 ms of this clock), 13 slices of 3 sends (0.12 ms each) and one of 1 (0.04 ms):
    // what /v1/health reports.
    const stats = stream.sliceStats();
    expect(stats.slices).toBe(15);
    expect(stats.maxMs).toBeCloseTo(0.12, 9);
    expect(stats.p99Ms).toBeCloseTo(0.12, 9);
    stream.resetSliceStats();
    expect(stream.sliceStats()).toEqual({ p99Ms: 0, maxMs: 0, slices: 0 });
    stream.close();
  });

  it("a broadcast that supersedes one in progress continues its chain of slices instead of starting a second", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    await step(robot, clock, 1);
    const stream = new StateStream(adapterFor(robot));
    let sends = 0;
    for (let i = 0; i < 60; i++) {
      const s = new StubSocket();
      stream.add(s as unknown as WebSocket);
      s.send = () => {
        sends++;
        clock.set(clock.nowMs() + 0.04); // each send takes 0.04 ms: 3 per 0.1 ms slice
      };
    }
    robot.loop.step(); // due: schedules a broadcast
    await flush(); // encoding
    await flush(); // 3 sends
    clock.set(clock.nowMs() + 60);
    robot.loop.step(); // due again while 57 sockets wait: a newer broadcast supersedes
    const perTurn: number[] = [];
    for (let i = 0; i < 8; i++) {
      const before = sends;
      await flush();
      perTurn.push(sends - before);
    }
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(3); // one chain: never two slices in one turn
    stream.close();
  });

  it("listens to the body's cycles only while it has subscribers (nothing per cycle for nobody, issue 26)", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    const adapter = adapterFor(robot);
    let listening = 0;
    const onCycle = adapter.onCycle.bind(adapter);
    adapter.onCycle = (l) => {
      listening++;
      const off = onCycle(l);
      return () => {
        listening--;
        off();
      };
    };
    const stream = new StateStream(adapter);
    await run(robot, clock, 100);
    expect(listening).toBe(0);
    const a = new StubSocket();
    const b = new StubSocket();
    stream.add(a as unknown as WebSocket);
    stream.add(b as unknown as WebSocket);
    expect(listening).toBe(1);
    await run(robot, clock, 200);
    a.close();
    expect(listening).toBe(1);
    b.close();
    expect(listening).toBe(0);
    const c = new StubSocket();
    stream.add(c as unknown as WebSocket);
    await run(robot, clock, 200);
    expect(c.states().length).toBeGreaterThanOrEqual(4); // paced again from the first cycle after it came
    stream.close();
    expect(listening).toBe(0);
  });

  it("sends nothing while nobody listens and after a subscriber closes", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    const stream = new StateStream(adapterFor(robot));
    await run(robot, clock, 200);
    expect(stream.messagesSent).toBe(0);
    const s = new StubSocket();
    stream.add(s as unknown as WebSocket);
    await run(robot, clock, 100);
    s.close();
    const n = stream.messagesSent;
    await run(robot, clock, 200);
    expect(stream.messagesSent).toBe(n);
    expect(() => new StateStream(adapterFor(robot), { rateHz: 0 })).toThrow(RangeError);
    stream.close();
  });
});
