/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command line).
 * Each bench module exports `run(): Promise<void>` and prints its own table, always as a ratio
 * against a baseline measured in the same run (machines here are noisy; absolute numbers lie).
 *
 *   npm run bench                      every bench
 *   npm run bench -- isolation wake    those benches (a word that is no bench's name: those containing it)
 *   npm run bench -- --quick api       (or BENCH_QUICK=1) shorter phases: a smoke run
 *   npm run bench -- --help            this list
 *
 *   BL_BENCH_BASELINE=<checkout> npm run bench -- [--quick] [--rounds=N] name ...
 *                                      those benches in that checkout and in this one, interleaved,
 *                                      with the after/before ratio of every figure (bench/ab.ts)
 */
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const all = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort();
const names = all.map((f) => f.slice(0, -".bench.ts".length));
const args = process.argv.slice(2);
const FLAGS = new Set(["--quick", "--help", "-h"]);
const usage = `usage: npm run bench [-- [--quick] [name ...]]
  names: ${names.join(", ")}
  --quick (or BENCH_QUICK=1): shorter phases, a smoke run whose verdicts say so
  BL_BENCH_BASELINE=<checkout> npm run bench -- [--quick] [--rounds=N] name ...: those benches there and here, interleaved, N rounds (2), after/before per figure`;
const baseline = process.env.BL_BENCH_BASELINE || null;

if (args.includes("--help") || args.includes("-h")) {
  console.log(usage);
  process.exit(0);
}
const roundsArg = args.find((a) => a.startsWith("--rounds="));
const rounds = roundsArg === undefined ? 2 : Number(roundsArg.slice("--rounds=".length));
const unknownFlag = args.find((a) => a.startsWith("-") && !FLAGS.has(a) && !(baseline && a === roundsArg));
// Flags are for the benches (they read process.argv); the rest name benches.
const wanted = args.filter((a) => !a.startsWith("-"));
// A word names the bench of that name, else every bench whose name contains it ("lola" is lola, not lola-upstream).
const matches = (w: string): string[] => (names.includes(w) ? [w] : names.filter((n) => n.includes(w)));
const unknown = wanted.filter((w) => matches(w).length === 0);
if (unknownFlag !== undefined || unknown.length > 0) {
  console.error(`bench: ${unknownFlag !== undefined ? `unknown option '${unknownFlag}'` : `no bench named ${unknown.map((u) => `'${u}'`).join(", ")}`}\n${usage}`);
  process.exit(2);
}
const chosen = new Set(wanted.flatMap(matches));
if (baseline) {
  if (wanted.length === 0 || !(Number.isInteger(rounds) && rounds >= 1)) {
    console.error(`bench: ${wanted.length === 0 ? "name the benches to compare with BL_BENCH_BASELINE" : `--rounds wants a whole number ≥ 1, got '${roundsArg}'`}\n${usage}`);
    process.exit(2);
  }
  const { runAgainstBaseline } = await import("./ab.js");
  await runAgainstBaseline(
    baseline,
    names.filter((n) => chosen.has(n)),
    args.filter((a) => FLAGS.has(a)),
    rounds,
  );
  process.exit(0);
}
const files = names.filter((n) => wanted.length === 0 || chosen.has(n)).map((n) => `${n}.bench.ts`);
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const mod = (await import(pathToFileURL(dir + f).href)) as { run: () => Promise<void> };
  await mod.run();
}
