/**
 * Bytes `fn` allocates on this thread's JS heap and in external memory (Buffers' backing stores),
 * exactly, whatever collections run meanwhile: the heap's used size before and after, plus what each
 * collection in between freed (V8's GC profiler records them in C++, nothing on the heap). `fn` must
 * be synchronous (nothing else runs meanwhile). The counters' own reads (~250 bytes) are taken off.
 */
import { GCProfiler } from "node:v8";

interface GcStats {
  beforeGC: { heapStatistics: { usedHeapSize: number; externalMemory: number } };
  afterGC: { heapStatistics: { usedHeapSize: number; externalMemory: number } };
}

export function allocatedDuring(fn: () => void): { heapBytes: number; externalBytes: number } {
  const profiler = new GCProfiler();
  profiler.start();
  const a = process.memoryUsage();
  const b = process.memoryUsage();
  const probe = b.heapUsed - a.heapUsed;
  fn();
  const c = process.memoryUsage();
  let freedHeap = 0;
  let freedExternal = 0;
  for (const s of (profiler.stop() as { statistics: GcStats[] }).statistics) {
    freedHeap += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
    freedExternal += s.beforeGC.heapStatistics.externalMemory - s.afterGC.heapStatistics.externalMemory;
  }
  return { heapBytes: c.heapUsed - b.heapUsed + freedHeap - probe, externalBytes: c.external - b.external + freedExternal };
}

/**
 * The least of `rounds` measurements of `fn` ({@link allocatedDuring}'s heap figure), after one
 * unmeasured call to warm the JIT: the test runner's own thread (its RPC to the main process, timers)
 * allocates beside a test now and then, and a single round can catch that; the least of five cannot
 * unless every round does.
 */
export function leastHeapAllocated(fn: () => void, rounds = 5): number {
  fn();
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) least = Math.min(least, allocatedDuring(fn).heapBytes);
  return least;
}
