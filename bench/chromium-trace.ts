/**
 * Where a page's long tasks go: a chromium trace (CDP Tracing, with V8's sampling profiler) over
 * a window, cut down to the renderer main thread's tasks longer than 50 ms, and each such task's
 * time split by what ran in it: the page's JavaScript by function (self time of the profiler's
 * samples, and the inclusive time of the page's own entry points), garbage collection, style and
 * layout, paint, and the rest. Used by bench/dashboard.bench.ts to name the cause of long tasks
 * instead of guessing it. A task is counted long only if it is longer than 50 ms without the
 * sampler's own start-up (CpuProfiler::StartProfiling).
 */
import type { CDPSession, Page } from "playwright-core";

const CATEGORIES = [
  "-*",
  "toplevel",
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "v8",
  "v8.execute",
  "disabled-by-default-v8.cpu_profiler",
  "disabled-by-default-v8.gc",
  "blink.user_timing",
  // The renderer's waits on the GPU process (CommandBufferProxyImpl::WaitForGetOffset, GLES2::ReadPixels) and the commit's steps.
  "gpu",
  "cc",
];

export interface TraceEvent {
  readonly name: string;
  readonly cat: string;
  readonly ph: string;
  readonly ts: number;
  readonly dur?: number;
  /** Thread (CPU) time of a complete event, µs. */
  readonly tdur?: number;
  readonly pid: number;
  readonly tid: number;
  readonly id?: string;
  readonly args?: Record<string, unknown>;
}

interface ProfileNode {
  readonly id: number;
  readonly parent?: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber?: number };
}

export interface LongTaskBreakdown {
  /** Main-thread tasks longer than 50 ms in the window, and their summed duration. */
  readonly longTasks: number;
  /**
   * The long tasks by cause: `cpu` ran on the CPU for more than 50 ms (the page's work),
   * `gpuWait` spent 25 ms or more blocked on the GPU process (the page's design: a synchronous
   * WebGL readback or GL call), `descheduled` neither (the thread was ready but the machine ran
   * something else: its wall time is long, its thread time short).
   */
  readonly causes: { readonly cpu: number; readonly gpuWait: number; readonly descheduled: number };
  readonly longTaskMs: number;
  /** All main-thread tasks' summed duration (how busy the thread was). */
  readonly busyMs: number;
  /** Their summed thread (CPU) time: the page's cost without the machine's descheduling. */
  readonly cpuMs: number;
  /** Self time inside long tasks per phase (trace event name or "JS: function"), ms, largest first. */
  readonly phases: ReadonlyArray<readonly [string, number]>;
  /** Profiler samples inside long tasks, self time per function (ms), largest first. */
  readonly selfFunctions: ReadonlyArray<readonly [string, number]>;
  /** Inclusive time inside long tasks per function (ms), largest first: which entry point led there. */
  readonly inclusiveFunctions: ReadonlyArray<readonly [string, number]>;
  /** The same inclusive split over every main-thread task (not only long ones), ms. */
  readonly allInclusiveFunctions: ReadonlyArray<readonly [string, number]>;
  readonly allSelfFunctions: ReadonlyArray<readonly [string, number]>;
}

/** Start tracing `page`; the returned function stops and analyses. */
export async function startTrace(page: Page, opts: { profiler?: boolean; keep?: TraceEvent[]; extra?: readonly string[] } = {}): Promise<() => Promise<LongTaskBreakdown>> {
  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  cdp.on("Tracing.dataCollected", (e) => {
    for (const x of e.value) events.push(x as unknown as TraceEvent);
  });
  const categories = [...(opts.profiler === false ? CATEGORIES.filter((c) => !c.includes("cpu_profiler")) : CATEGORIES), ...(opts.extra ?? [])];
  await cdp.send("Tracing.start", { transferMode: "ReportEvents", traceConfig: { includedCategories: categories, recordMode: "recordContinuously" } });
  return async () => {
    const done = new Promise<void>((resolve) => cdp.once("Tracing.tracingComplete", () => resolve()));
    await cdp.send("Tracing.end");
    await done;
    await detach(cdp);
    if (opts.keep) for (const e of events) opts.keep.push(e);
    return analyse(events);
  };
}

async function detach(cdp: CDPSession): Promise<void> {
  try {
    await cdp.detach();
  } catch {}
}

const top = (m: Map<string, number>, n: number): Array<[string, number]> =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => [k, v / 1000]);

function add(m: Map<string, number>, k: string, us: number): void {
  m.set(k, (m.get(k) ?? 0) + us);
}

/** The renderer main thread: the CrRendererMain with the most complete events. */
function mainThread(events: readonly TraceEvent[]): { pid: number; tid: number } | null {
  const mains = new Set<string>();
  for (const e of events) if (e.ph === "M" && e.name === "thread_name" && (e.args?.name as string) === "CrRendererMain") mains.add(`${e.pid}:${e.tid}`);
  const counts = new Map<string, number>();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (e.ph === "X" && mains.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  if (!best) return null;
  const [pid, tid] = best[0].split(":").map(Number) as [number, number];
  return { pid, tid };
}

/** Trace events that are the renderer blocked on the GPU process (synchronous GL, readback). */
export const GPU_WAIT = /WaitForGetOffset|WaitForToken|ImplementationBase::WaitForCmd|CommandBufferHelper::Finish|GLES2::ReadPixels/;

function frameLabel(f: ProfileNode["callFrame"]): string {
  const file = f.url ? (f.url.split("/").pop() ?? "") : "";
  return `${f.functionName || "(anonymous)"}${file ? ` ${file}:${(f.lineNumber ?? 0) + 1}` : ""}`;
}

export function analyse(events: readonly TraceEvent[]): LongTaskBreakdown {
  const main = mainThread(events);
  const empty: LongTaskBreakdown = {
    longTasks: 0,
    causes: { cpu: 0, gpuWait: 0, descheduled: 0 },
    longTaskMs: 0,
    busyMs: 0,
    cpuMs: 0,
    phases: [],
    selfFunctions: [],
    inclusiveFunctions: [],
    allInclusiveFunctions: [],
    allSelfFunctions: [],
  };
  if (!main) return empty;
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && typeof e.dur === "number");
  const tasks = onMain.filter((e) => e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask").sort((a, b) => a.ts - b.ts);
  // Keep only outermost tasks (both names can nest).
  const outer: TraceEvent[] = [];
  for (const t of tasks) {
    const last = outer[outer.length - 1];
    if (last && t.ts < last.ts + last.dur!) continue;
    outer.push(t);
  }
  // Starting the sampler blocks the thread (CpuProfiler::StartProfiling): the tracer's own cost, not the page's.
  const profilerStarts = onMain.filter((e) => e.name === "CpuProfiler::StartProfiling");
  const ownUs = (t: TraceEvent) => {
    let us = 0;
    for (const p of profilerStarts) if (p.ts >= t.ts && p.ts < t.ts + t.dur!) us += p.dur!;
    return us;
  };
  const long = outer.filter((t) => t.dur! - ownUs(t) > 50_000);
  const busyUs = outer.reduce((s, t) => s + t.dur!, 0);
  const cpuUs = outer.reduce((s, t) => s + (t.tdur ?? t.dur!), 0);
  const inLong = (ts: number) => within(long, ts);
  const inAny = (ts: number) => within(outer, ts);

  // Causes: thread time (tdur) against wall time, and blocking waits on the GPU process.
  const causes = { cpu: 0, gpuWait: 0, descheduled: 0 };
  const waits = onMain.filter((e) => GPU_WAIT.test(e.name));
  for (const t of long) {
    let waitUs = 0;
    // Outermost waits only (a Finish contains a WaitForGetOffset).
    let until = 0;
    for (const w of waits) {
      if (w.ts < t.ts || w.ts >= t.ts + t.dur! || w.ts < until) continue;
      waitUs += w.dur!;
      until = w.ts + w.dur!;
    }
    const taskCpuUs = typeof t.tdur === "number" ? t.tdur - ownUs(t) : t.dur!;
    if (taskCpuUs > 50_000) causes.cpu++;
    else if (waitUs >= 25_000) causes.gpuWait++;
    else causes.descheduled++;
  }

  // Phases: self time of each trace event nested in a long task (children subtracted).
  const phases = new Map<string, number>();
  for (const t of long) {
    const inside = onMain
      .filter((e) => e !== t && e.ts >= t.ts && e.ts + e.dur! <= t.ts + t.dur! && e.name !== "RunTask" && e.name !== "ThreadControllerImpl::RunTask")
      .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
    // A stack walk: each event's self time = its duration minus its direct children's.
    const stack: Array<{ e: TraceEvent; child: number }> = [];
    let covered = 0;
    const close = (until: number) => {
      while (stack.length && stack[stack.length - 1]!.e.ts + stack[stack.length - 1]!.e.dur! <= until) {
        const s = stack.pop()!;
        add(phases, phaseName(s.e), s.e.dur! - s.child);
        if (stack.length) stack[stack.length - 1]!.child += s.e.dur!;
        else covered += s.e.dur!;
      }
    };
    for (const e of inside) {
      close(e.ts);
      stack.push({ e, child: 0 });
    }
    close(Number.POSITIVE_INFINITY);
    add(phases, "(task, no traced event)", t.dur! - covered);
  }

  // Profiler samples: ProfileChunk events carry nodes, samples and time deltas per profile id.
  const nodes = new Map<number, ProfileNode>();
  const samples: Array<{ node: number; ts: number }> = [];
  const chunks = events.filter((e) => (e.name === "ProfileChunk" || e.name === "Profile") && e.pid === main.pid);
  let start = 0;
  for (const e of chunks) {
    if (e.name === "Profile") {
      start = (e.args?.data as { startTime?: number } | undefined)?.startTime ?? start;
      continue;
    }
    const d = e.args?.data as { cpuProfile?: { nodes?: ProfileNode[]; samples?: number[] }; timeDeltas?: number[] } | undefined;
    for (const n of d?.cpuProfile?.nodes ?? []) nodes.set(n.id, n);
    const s = d?.cpuProfile?.samples ?? [];
    const dt = d?.timeDeltas ?? [];
    for (let i = 0; i < s.length; i++) {
      start += dt[i] ?? 0;
      samples.push({ node: s[i]!, ts: start });
    }
  }
  const selfLong = new Map<string, number>();
  const inclLong = new Map<string, number>();
  const selfAll = new Map<string, number>();
  const inclAll = new Map<string, number>();
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    const next = samples[i + 1];
    const us = next ? Math.min(next.ts - s.ts, 10_000) : 0;
    if (us <= 0) continue;
    const n = nodes.get(s.node);
    if (!n) continue;
    const name = frameLabel(n.callFrame);
    if (name.startsWith("(idle)")) continue;
    const long = inLong(s.ts);
    const any = long || inAny(s.ts);
    if (!any) continue;
    const seen = new Set<string>();
    for (let p: ProfileNode | undefined = n; p; p = p.parent === undefined ? undefined : nodes.get(p.parent)) {
      const l = frameLabel(p.callFrame);
      if (seen.has(l) || l.startsWith("(root)")) continue;
      seen.add(l);
      add(inclAll, l, us);
      if (long) add(inclLong, l, us);
    }
    add(selfAll, name, us);
    if (long) add(selfLong, name, us);
  }
  return {
    longTasks: long.length,
    causes,
    longTaskMs: long.reduce((s, t) => s + t.dur!, 0) / 1000,
    busyMs: busyUs / 1000,
    cpuMs: cpuUs / 1000,
    phases: top(phases, 14),
    selfFunctions: top(selfLong, 14),
    inclusiveFunctions: top(inclLong, 18),
    allInclusiveFunctions: top(inclAll, 18),
    allSelfFunctions: top(selfAll, 14),
  };
}

/** Whether `ts` falls inside one of `tasks` (sorted by start, not overlapping): a binary search. */
function within(tasks: readonly TraceEvent[], ts: number): boolean {
  let a = 0;
  let b = tasks.length - 1;
  while (a <= b) {
    const m = (a + b) >> 1;
    const t = tasks[m]!;
    if (ts < t.ts) b = m - 1;
    else if (ts >= t.ts + t.dur!) a = m + 1;
    else return true;
  }
  return false;
}

/** A trace event's phase name; JS entry points carry the function they ran. */
function phaseName(e: TraceEvent): string {
  const data = e.args?.data as { functionName?: string; url?: string; type?: string } | undefined;
  if (e.name === "FunctionCall" && data) return `FunctionCall ${data.functionName || "(anonymous)"}`;
  if (e.name === "EventDispatch" && data?.type) return `EventDispatch ${data.type}`;
  return e.name;
}

/** Print a breakdown as indented tables (ms). */
export function printBreakdown(title: string, b: LongTaskBreakdown): void {
  console.log(
    `${title}: ${b.longTasks} main-thread task(s) over 50 ms, ${b.longTaskMs.toFixed(0)} ms in them (${b.causes.cpu} on the CPU over 50 ms, ${b.causes.gpuWait} blocked on the GPU process, ${b.causes.descheduled} descheduled by the machine); main thread busy ${b.busyMs.toFixed(0)} ms, ${b.cpuMs.toFixed(0)} ms of it on the CPU`,
  );
  const list = (head: string, rows: ReadonlyArray<readonly [string, number]>) => {
    if (!rows.length) return;
    console.log(`  ${head}`);
    for (const [k, v] of rows) console.log(`    ${v.toFixed(1).padStart(8)} ms  ${k}`);
  };
  list("in long tasks, by phase (self time):", b.phases);
  list("in long tasks, JS self time by function:", b.selfFunctions);
  list("in long tasks, JS inclusive time by function:", b.inclusiveFunctions);
  list("in all tasks, JS inclusive time by function:", b.allInclusiveFunctions);
  list("in all tasks, JS self time by function:", b.allSelfFunctions);
}
