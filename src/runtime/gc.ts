/**
 * Scheduled young-generation collection. V8 collects its young generation (a scavenge, 1–5 ms on
 * the machines here) whenever that space fills, which is at a random moment: when it lands on a
 * cycle's deadline, the cycle starts late. The robot API's sockets and the pacing's own timers
 * allocate steadily, so without this about one cycle in a hundred paid for a collection, which is
 * the whole of the 99th-percentile jitter (measured: `npm run bench -- api`, gc column).
 *
 * The loop instead asks for the collection itself, right after a cycle, in the slack before the next
 * deadline, and often enough (every 100 ms by default) that the space never fills between two of
 * them. A collection costs ~0.1 ms on a nearly empty young generation and 0.6–0.8 ms at p50 under
 * the API's load here; its cost follows what survives, not what was allocated. This is V8's "idle-time GC" (how Chrome collects between
 * frames), done by the embedder that knows when it is idle.
 *
 * The collector is V8's own `gc` function: `--expose-gc` when node was started with it, otherwise
 * the flag is set at run time and the function taken from a fresh context (which is when V8 installs
 * it). Node-only, like the rest of src/runtime.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type GcFunction = (options?: { type?: "minor" | "major"; execution?: "sync" | "async" }) => void;

const MINOR = { type: "minor", execution: "sync" } as const;
let cached: (() => void) | null | undefined;

/** A function that collects the young generation now (synchronously), or null where V8 refuses. */
export function youngGenerationCollector(): (() => void) | null {
  if (cached !== undefined) return cached;
  let gc = (globalThis as { gc?: GcFunction }).gc;
  if (typeof gc !== "function") {
    try {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as GcFunction | undefined;
    } catch {
      gc = undefined;
    }
  }
  const fn = gc;
  cached = typeof fn === "function" ? () => fn(MINOR) : null;
  return cached;
}

/**
 * How full V8's young generation is: bytes in use and its current capacity (used + available in
 * new space), or zeros where V8 does not report it. Allocates a few small objects: the loop reads
 * it at most once per collection interval.
 */
export function youngGenerationUsage(): { usedBytes: number; capacityBytes: number } {
  for (const s of getHeapSpaceStatistics()) {
    if (s.space_name === "new_space") return { usedBytes: s.space_used_size, capacityBytes: s.space_used_size + s.space_available_size };
  }
  return { usedBytes: 0, capacityBytes: 0 };
}
