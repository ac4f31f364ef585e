/**
 * CoreLink's bounds: a stalled core (here a worker that never answers) cannot make the host queue
 * requests, pending answers or ordered requests without end; past the bounds a request is refused
 * at once with BL_ERR_CORE_UNRESPONSIVE, and an answer frees its place.
 */
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { CORE_MAX_ORDERED, CORE_MAX_PENDING, CoreChannel, CoreLink } from "../../src/host/core-host.js";
import { CTL } from "../../src/rt/core-shm.js";

let worker: Worker | null = null;
afterEach(async () => {
  await worker?.terminate();
  worker = null;
});

/** A request table for the test: the link types each call by it. */
interface TestRequests {
  smooth(): string;
  health(): string;
}

function silentCore(): CoreLink<TestRequests> {
  // A core that takes every message and answers none.
  worker = new Worker("require('node:worker_threads').parentPort.on('message', () => {});", { eval: true });
  return new CoreLink<TestRequests>(new CoreChannel(worker, new SharedArrayBuffer(CTL.words * 4), 500));
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "answered",
    (e: { code?: string }) => e.code ?? String(e),
  );

describe("CoreLink and its CoreChannel (src/host/core-host.ts)", () => {
  it(`refuses the ordered request past ${CORE_MAX_ORDERED} unanswered, even after they timed out; an answer frees a place`, async () => {
    const link = silentCore();
    const first = Array.from({ length: CORE_MAX_ORDERED }, () => codeOf(link.callOrdered("smooth", 50)));
    expect(await codeOf(link.callOrdered("smooth", 50))).toBe("BL_ERR_CORE_UNRESPONSIVE"); // at once
    expect(new Set(await Promise.all(first))).toEqual(new Set(["BL_ERR_CORE_UNRESPONSIVE"])); // timed out
    expect(link.ordering).toBe(true); // the core may still run them: the mailbox stays held back
    expect(await codeOf(link.callOrdered("smooth", 50))).toBe("BL_ERR_CORE_UNRESPONSIVE");
    let done = 0;
    link.channel.onOrderedDone = () => done++;
    for (let id = 1; id <= CORE_MAX_ORDERED; id++) link.channel.settle(id, { ok: true, value: null });
    expect(done).toBe(1);
    expect(link.ordering).toBe(false);
    const next = link.callOrdered("smooth", 5_000);
    link.channel.settle(CORE_MAX_ORDERED + 1, { ok: true, value: "ran" });
    expect(await next).toBe("ran");
  });

  it(`refuses any request past ${CORE_MAX_PENDING} pending answers, and takes requests again once they time out`, async () => {
    const link = silentCore();
    const pending = Array.from({ length: CORE_MAX_PENDING }, () => codeOf(link.call("health", 100)));
    const refused = await codeOf(link.call("health", 100));
    expect(refused).toBe("BL_ERR_CORE_UNRESPONSIVE");
    await Promise.all(pending);
    const again = link.call("health", 5_000);
    link.channel.settle(CORE_MAX_PENDING + 1, { ok: true, value: "ok" });
    expect(await again).toBe("ok");
  });
});
