/**
 * SeqLock's notify modes (src/shm/seqlock.ts): "always" wakes a reader waiting on the sequence,
 * "never" does not, and a followers word makes end() notify exactly while it is nonzero. A wake-up
 * is told from a timeout by Atomics.waitAsync's result ("ok" against "timed-out").
 */
import { describe, expect, it } from "vitest";
import { SeqLock } from "../../src/shm/seqlock.js";

const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t?: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

/** Whether one write (begin, end) wakes a reader waiting on the sequence's value before it (within 2 s). */
async function wakes(lock: SeqLock): Promise<boolean> {
  const w = waitAsync(lock.words, lock.index, Atomics.load(lock.words, lock.index), 2000);
  expect(w.async).toBe(true);
  // from another macrotask, as the core's thread would: the waiter is registered by now
  await new Promise((r) => setTimeout(r, 5));
  lock.begin();
  lock.end();
  return (await w.value) === "ok";
}

describe("SeqLock notify modes", () => {
  const words = () => new Int32Array(new SharedArrayBuffer(16));

  it("always (the default) wakes a waiting reader", async () => {
    expect(await wakes(new SeqLock(words(), 0))).toBe(true);
  });

  it("never does not (the reader times out), and the sequence still moves by two per write", async () => {
    const lock = new SeqLock(words(), 0, "never");
    const w = waitAsync(lock.words, 0, 0, 50);
    lock.begin();
    lock.end();
    expect(lock.sequence).toBe(2);
    expect(await w.value).toBe("timed-out");
  });

  it("with a followers word: wakes only while the word is nonzero", async () => {
    const ws = words();
    const lock = new SeqLock(ws, 0, { followersIndex: 3 });
    const idle = waitAsync(ws, 0, 0, 50);
    lock.begin();
    lock.end();
    expect(await idle.value).toBe("timed-out");
    Atomics.store(ws, 3, 1);
    expect(await wakes(lock)).toBe(true);
    Atomics.store(ws, 3, 0);
    const again = waitAsync(ws, 0, Atomics.load(ws, 0), 50);
    lock.begin();
    lock.end();
    expect(await again.value).toBe("timed-out");
  });

  it("refuses a followers word outside the array", () => {
    expect(() => new SeqLock(words(), 0, { followersIndex: 4 })).toThrow(RangeError);
    expect(() => new SeqLock(words(), 0, { followersIndex: -3 })).toThrow(RangeError);
    expect(() => new SeqLock(words(), 0, { followersIndex: 1.5 })).toThrow(RangeError);
  });
});
