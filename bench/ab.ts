/**
 * `BL_BENCH_BASELINE=<checkout> npm run bench -- NAME ...`: each named bench in that checkout
 * ("before") and in this one ("after"), one child process at a time, interleaved: before, after,
 * then after, before, … for `--rounds N` rounds (default 2), so a machine that gets busier or
 * quieter during the run weighs on both sides alike. Each side runs its own bench code on its own
 * sources through its own `npm run bench` (a bench's name or options may differ between the trees:
 * a bench the baseline lacks runs on this side only, and the report says so).
 *
 * Both outputs are printed as they come (prefixed `before|` and `after |`), then per bench the
 * after/before ratio of every figure: each output line that carries numbers is matched with the
 * line of the same shape on the other side (its text with every number replaced by `#`, and which
 * occurrence of that shape it is), and printed again with each number replaced by the ratio of its
 * medians over the rounds (`=` where both sides printed the same number every time). No bench
 * needs to print anything for this; whether higher or lower is better is in each bench's header.
 */
import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { distState } from "../bin/dist-fresh.js";
import { median } from "./util.js";

/** A number as the benches print them: not part of a word (`p99`, `v8`) nor of a longer number. */
const NUMBER = /(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)/g;

/** One output line's shape: its text with every number replaced by `mark` (`#`; spaces collapsed). */
export function shapeOf(line: string, mark = "#"): string {
  return line.replace(NUMBER, mark).replace(/\s+/g, " ").trim();
}

/** Where a number was, while its ratio is filled in (a character no bench prints, unlike `#`: `#block`). */
const SLOT = "\u241f";

/** The numbers of one output line, in order. */
export function numbersOf(line: string): number[] {
  return [...line.matchAll(NUMBER)].map((m) => Number(m[0]));
}

/** A line with figures: the block it is in (the shape of the block's first line) and its text. */
export interface FigureLine {
  readonly block: string;
  readonly line: string;
}

/**
 * Every line that carries numbers, keyed by the block it is in (lines after a blank line, named by
 * the first one's label: a table's title), its label (the text before its first number; a line
 * that starts with a number, such as an allocation site, by its whole shape) and which occurrence
 * of that key it is. A block renamed between the two checkouts matches nothing (its lines count as
 * one side's) rather than pairing one configuration's row with another's.
 */
export function figuresOf(output: string): Map<string, FigureLine> {
  const seen = new Map<string, number>();
  const out = new Map<string, FigureLine>();
  let block = "";
  let blank = true;
  for (const line of output.split("\n")) {
    if (line.trim() === "") {
      blank = true;
      continue;
    }
    const first = line.search(NUMBER);
    const label = (first < 0 ? line : line.slice(0, first)).replace(/\s+/g, " ").trim();
    if (blank) block = label;
    blank = false;
    if (first < 0) continue;
    const key = `${block} » ${label.replace(/[^\p{L}]/gu, "").length >= 2 ? label : shapeOf(line)}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    out.set(n === 1 ? key : `${key} [${n}]`, { block, line });
  }
  return out;
}

/** A ratio as printed in place of a number: `=` for the same figure, else `×r`. */
function ratioText(before: number, after: number, constant: boolean): string {
  if (constant) return "=";
  if (before === 0) return after === 0 ? "=" : "×inf";
  const r = after / before;
  return `×${Math.abs(r) >= 10 ? r.toFixed(1) : r.toFixed(2)}`;
}

/** A table row's cells (`|`-separated; a line without `|` is one cell). */
const cellsOf = (line: string): string[] => line.split("|");

/**
 * One matched line over every run of both sides, cell by cell: a cell of the same shape everywhere
 * gets each number replaced by after/before of its medians over the runs (`=` where it never
 * changed); a cell whose words changed (`0 (none)` against `1 (1 Scavenge)`) is shown as
 * `after ≠ before` (the last run of each). Null when nothing moved.
 */
function compareLine(before: readonly string[], after: readonly string[]): string | null {
  const all = [...before, ...after];
  const cells = all.map(cellsOf);
  const width = cells[0]!.length;
  if (cells.some((c) => c.length !== width)) {
    const a = after[after.length - 1]!.trim();
    const b = before[before.length - 1]!.trim();
    return a === b ? null : `${a}  ≠  ${b}`;
  }
  let moved = false;
  const out: string[] = [];
  for (let j = 0; j < width; j++) {
    const texts = cells.map((c) => c[j]!);
    const shape = shapeOf(texts[0]!);
    if (texts.some((t) => shapeOf(t) !== shape)) {
      moved = true;
      out.push(`${texts[texts.length - 1]!.trim()} ≠ ${texts[before.length - 1]!.trim()}`);
      continue;
    }
    const nums = texts.map(numbersOf);
    const ratios: string[] = [];
    for (let i = 0; i < nums[0]!.length; i++) {
      const bs = nums.slice(0, before.length).map((v) => v[i]!);
      const as = nums.slice(before.length).map((v) => v[i]!);
      const constant = [...bs, ...as].every((v) => v === bs[0]);
      if (!constant) moved = true;
      ratios.push(ratioText(median(bs), median(as), constant));
    }
    let i = 0;
    out.push(shapeOf(texts[0]!, SLOT).replaceAll(SLOT, () => ratios[i++]!));
  }
  return moved ? out.join(" | ") : null;
}

/**
 * The comparison lines: every line printed by every run of both sides (matched by
 * {@link figuresOf}'s key), compared by {@link compareLine}; lines only one side printed are
 * counted apart. Lines whose numbers were all the same every time are left out (constants, labels).
 */
export function compareOutputs(before: readonly string[], after: readonly string[]): { lines: string[]; onlyBefore: number; onlyAfter: number } {
  const b = before.map(figuresOf);
  const a = after.map(figuresOf);
  const keysInAll = (runs: Map<string, FigureLine>[]): string[] => [...runs[0]!.keys()].filter((k) => runs.every((m) => m.has(k)));
  const bKeys = new Set(keysInAll(b));
  const aKeys = keysInAll(a);
  const lines: string[] = [];
  let lastBlock: string | null = null;
  for (const k of aKeys) {
    if (!bKeys.has(k)) continue;
    const line = compareLine(
      b.map((m) => m.get(k)!.line),
      a.map((m) => m.get(k)!.line),
    );
    if (line === null) continue;
    const block = a[0]!.get(k)!.block;
    if (block !== lastBlock && !line.startsWith(block)) lines.push(`[${block}]`);
    lastBlock = block;
    lines.push(line);
  }
  const aSet = new Set(aKeys);
  return { lines, onlyBefore: [...bKeys].filter((k) => !aSet.has(k)).length, onlyAfter: aKeys.filter((k) => !bKeys.has(k)).length };
}

interface Side {
  readonly label: "before" | "after";
  readonly dir: string;
}

/** `git describe` of a checkout (short hash, `+dirty` when its tracked files changed). */
async function describe(dir: string): Promise<string> {
  const r = await capture("git", ["-C", dir, "describe", "--always", "--dirty=+dirty"], dir, () => undefined).catch(() => null);
  return (r?.code === 0 && r.out.trim()) || "(not a git checkout)";
}

/** Run a command in `cwd`, streaming each line to `onLine`; resolves with its whole stdout and exit code. */
function capture(cmd: string, args: readonly string[], cwd: string, onLine: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<{ out: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let partial = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      for (const l of parts) onLine(l);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      for (const l of chunk.split("\n")) if (l) onLine(`(stderr) ${l}`);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (partial) onLine(partial);
      resolve({ out, code });
    });
  });
}

/**
 * The benches `names` (exact names in this checkout), before and after, `rounds` times each,
 * interleaved. `hereDir`: the "after" checkout (this one; tests pass another).
 */
export async function runAgainstBaseline(baselineDir: string, names: readonly string[], flags: readonly string[], rounds: number, hereDir = new URL("..", import.meta.url).pathname): Promise<void> {
  const here = realpathSync(hereDir);
  if (!existsSync(join(baselineDir, "package.json")) || !existsSync(join(baselineDir, "bench", "run.ts"))) {
    throw new Error(`BL_BENCH_BASELINE=${baselineDir}: not a bodylink checkout (no package.json or bench/run.ts there)`);
  }
  const base = realpathSync(baselineDir);
  if (base === here) throw new Error("BL_BENCH_BASELINE names this checkout: point it at another (git worktree add ../base <commit>)");
  if (!existsSync(join(base, "node_modules"))) throw new Error(`${base} has no node_modules: cp -a node_modules there (or npm ci)`);
  const sides: Side[] = [
    { label: "before", dir: base },
    { label: "after", dir: here },
  ];
  // Children run plainly: no recursion into this mode (BL_CPU_BASELINE, the cpu bench's own pairing, passes through).
  const env = { ...process.env };
  delete env.BL_BENCH_BASELINE;
  for (const s of sides) {
    console.log(`${s.label.padEnd(6)} ${s.dir} at ${await describe(s.dir)}, dist/ ${distState(s.dir)}`);
  }
  console.log(`${rounds} round(s) per bench, interleaved (before, after, then after, before, …); options: ${flags.length ? flags.join(" ") : "none"}`);
  const started = performance.now();
  const summary: string[] = [];
  const failed: string[] = [];
  for (const name of names) {
    const inBase = existsSync(join(base, "bench", `${name}.bench.ts`));
    if (!inBase) console.log(`\n### ${name}: the baseline has no bench/${name}.bench.ts: this side only`);
    const outputs: Record<Side["label"], string[]> = { before: [], after: [] };
    const t0 = performance.now();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const s of order) {
        if (s.label === "before" && !inBase) continue;
        console.log(`\n### ${name}, ${s.label} (round ${round + 1} of ${rounds})`);
        const prefix = `${s.label.padEnd(6)}| `;
        const { out, code } = await capture("npm", ["run", "--silent", "bench", "--", ...flags, name], s.dir, (l) => console.log(prefix + l), env);
        if (code !== 0) {
          // a bench that gives up under load (the isolation bench's 1,000 subscribers) costs its run, not the others
          failed.push(`${name} ${s.label} round ${round + 1} (exit ${code})`);
          console.log(`### ${name}, ${s.label} (round ${round + 1}): exited with ${code}; left out of the comparison`);
          continue;
        }
        outputs[s.label].push(out.replaceAll(s.dir, "<checkout>")); // paths in allocation sites match across checkouts
      }
    }
    const minutes = (performance.now() - t0) / 60_000;
    console.log(`\n### ${name}: after/before, median of the runs (before ${outputs.before.length}, after ${outputs.after.length}; ${minutes.toFixed(1)} min)`);
    if (!inBase || outputs.before.length === 0 || outputs.after.length === 0) {
      console.log(`   (${!inBase ? "no baseline run" : "no successful run on one side"})`);
      summary.push(`${name} ${minutes.toFixed(1)} min`);
      continue;
    }
    const { lines, onlyBefore, onlyAfter } = compareOutputs(outputs.before, outputs.after);
    for (const l of lines) console.log(`   ${l}`);
    console.log(`   ${lines.length} line(s) with figures that moved; lines printed by one side only: before ${onlyBefore}, after ${onlyAfter}`);
    summary.push(`${name} ${minutes.toFixed(1)} min`);
  }
  console.log(`\nall: ${((performance.now() - started) / 60_000).toFixed(1)} min (${summary.join(", ")})`);
  if (failed.length > 0) {
    console.log(`runs that failed: ${failed.join(", ")}`);
    process.exitCode = 1;
  }
}
