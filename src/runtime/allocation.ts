/**
 * What the thread running a cycle allocates per cycle, measured on that thread (a core's worker
 * has its own isolate: everything on its heap is the core's). Two tools:
 *
 * - {@link measureAllocation}: exact totals over N cycles. The JS heap's used size and the external
 *   memory (Node Buffers' backing stores: V8 counts them, and they drive collections too) are read
 *   at the start of a cycle and N cycles later; V8's GC profiler (`v8.GCProfiler`, recorded in C++,
 *   nothing on the heap) gives each collection's before/after sizes in between, so what they freed
 *   is added back and the figure holds with scheduled collections on. The reads themselves
 *   allocate (~250 bytes each): measured back to back at the start and taken off.
 * - {@link sampleAllocationSites}: where it comes from. V8's sampling heap profiler through this
 *   thread's own inspector session (no port), keeping the samples collections freed, summed per
 *   function; sizes are estimates (one sample per `intervalBytes` on average).
 *
 * Prepare side: both allocate while they run (the profiler's bookkeeping, the answer) and are
 * meant for benchmarks, tests and diagnosis, not for a running robot's steady state.
 */
import { Session } from "node:inspector";
import { GCProfiler } from "node:v8";

export interface AllocationSample {
  /** Cycles measured (each starts after the previous one's listeners ran). */
  readonly cycles: number;
  /** Bytes allocated on this thread's JS heap over those cycles (what fills the young generation). */
  readonly heapBytes: number;
  /** Bytes of external memory allocated (ArrayBuffer backing stores: Node Buffers, socket reads). */
  readonly externalBytes: number;
  /** Collections during the window, by V8's type ("Scavenge", "MarkSweepCompact", …), scheduled ones included. */
  readonly collections: Readonly<Record<string, number>>;
  /** Bytes the window's collections moved into the old generation (what survived: it grows until V8 runs a major collection). */
  readonly promotedBytes: number;
  /** What one read of the counters allocated (already taken off), bytes. */
  readonly probeBytes: number;
}

/** Subscribe to the cycles of the runtime measured: `NaoRobot.onCycle`, `P7Robot.onCycle`, … */
export type OnCycle = (listener: (seq: number, nowMs: number) => void) => () => void;

interface SpaceStats {
  spaceName: string;
  spaceUsedSize: number;
}
interface GcStats {
  gcType: string;
  beforeGC: { heapStatistics: { usedHeapSize: number; externalMemory: number }; heapSpaceStatistics: SpaceStats[] };
  afterGC: { heapStatistics: { usedHeapSize: number; externalMemory: number }; heapSpaceStatistics: SpaceStats[] };
}

const oldUsed = (spaces: SpaceStats[]): number => {
  let n = 0;
  for (const x of spaces) if (x.spaceName === "old_space" || x.spaceName === "large_object_space") n += x.spaceUsedSize;
  return n;
};

/** Heap used and external memory now; one object of two numbers (the same allocation every read). */
function counters(): { heap: number; external: number } {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
}

/**
 * Bytes allocated on this thread over `cycles` cycles from the next one. Call it on the thread
 * that runs the cycle (in a core's worker: the core's "allocation" request).
 */
export function measureAllocation(onCycle: OnCycle, cycles: number): Promise<AllocationSample> {
  if (!Number.isInteger(cycles) || cycles < 1 || cycles > 1_000_000) throw new RangeError(`cycles must be an integer 1..1000000, got ${cycles}`);
  return new Promise((resolve, reject) => {
    const profiler = new GCProfiler();
    let seen = -1;
    let start = { heap: 0, external: 0 };
    let probeBytes = 0;
    const stop = onCycle(() => {
      if (seen < 0) {
        profiler.start();
        // Two reads back to back: the second's heap figure includes the first's object only.
        const a = counters();
        start = counters();
        probeBytes = Math.max(0, start.heap - a.heap);
        seen = 0;
        return;
      }
      if (++seen < cycles) return;
      const end = counters();
      stop();
      try {
        const stats = (profiler.stop() as { statistics: GcStats[] }).statistics;
        let freedHeap = 0;
        let freedExternal = 0;
        let promotedBytes = 0;
        const collections: Record<string, number> = {};
        for (const s of stats) {
          freedHeap += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
          freedExternal += s.beforeGC.heapStatistics.externalMemory - s.afterGC.heapStatistics.externalMemory;
          if (s.gcType === "Scavenge") promotedBytes += Math.max(0, oldUsed(s.afterGC.heapSpaceStatistics) - oldUsed(s.beforeGC.heapSpaceStatistics));
          collections[s.gcType] = (collections[s.gcType] ?? 0) + 1;
        }
        resolve({
          cycles,
          // The end read's own object is counted once: take one probe off.
          heapBytes: Math.max(0, end.heap - start.heap + freedHeap - probeBytes),
          externalBytes: Math.max(0, end.external - start.external + freedExternal),
          collections,
          promotedBytes,
          probeBytes,
        });
      } catch (e) {
        reject(e);
      }
    });
  });
}

export interface AllocationSite {
  /** "function (file:line)" as V8 names it; "(anonymous)" for unnamed functions, "(root)" and "(V8 API)" for V8's own. */
  readonly site: string;
  /** Estimated bytes allocated there over the window. */
  readonly bytes: number;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Where this thread allocates over `cycles` cycles: the sites with the most bytes first (at most `top`). */
export async function sampleAllocationSites(onCycle: OnCycle, cycles: number, intervalBytes = 256, top = 12): Promise<{ cycles: number; sites: AllocationSite[]; totalBytes: number }> {
  if (!Number.isInteger(cycles) || cycles < 1 || cycles > 1_000_000) throw new RangeError(`cycles must be an integer 1..1000000, got ${cycles}`);
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> => new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  try {
    await post("HeapProfiler.enable");
    await new Promise<void>((resolve) => {
      let n = -1;
      let started: Promise<unknown> | null = null;
      const stop = onCycle(() => {
        if (n < 0) {
          n = 0;
          started = post("HeapProfiler.startSampling", { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
          return;
        }
        if (++n < cycles) return;
        stop();
        void started!.then(() => resolve());
      });
    });
    const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: { head: ProfileNode } };
    const bySite = new Map<string, number>();
    const walk = (node: ProfileNode): void => {
      const f = node.callFrame;
      // The profiler's own session (the request and its answer) is not the core's.
      if (f.url === "node:inspector") return;
      if (node.selfSize > 0) {
        const file = f.url ? f.url.replace(/^.*\/(src|node_modules)\//, "$1/").replace(/^node:/, "node:") : "";
        const site = `${f.functionName || "(anonymous)"}${file ? ` (${file}:${f.lineNumber + 1})` : ""}`;
        bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      }
      for (const c of node.children) walk(c);
    };
    walk(profile.head);
    const sites = [...bySite].map(([site, bytes]) => ({ site, bytes })).sort((a, b) => b.bytes - a.bytes);
    return { cycles, sites: sites.slice(0, top), totalBytes: sites.reduce((a, s) => a + s.bytes, 0) };
  } finally {
    await post("HeapProfiler.disable").catch(() => {});
    session.disconnect();
  }
}
