/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command line).
 * Each bench module exports `run(): Promise<void>` and prints its own table, always as a ratio
 * against a baseline measured in the same run (machines here are noisy; absolute numbers lie).
 *
 *   npm run bench                      every bench
 *   npm run bench -- isolation wake    those benches (a word that is no bench's name: those containing it)
 *   npm run bench -- --quick api       (or BENCH_QUICK=1) shorter phases: a smoke run
 *   npm run bench -- --help            this list
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
const usage = `usage: npm run bench [-- [--quick] [name ...]]\n  names: ${names.join(", ")}\n  --quick (or BENCH_QUICK=1): shorter phases, a smoke run whose verdicts say so`;

if (args.includes("--help") || args.includes("-h")) {
  console.log(usage);
  process.exit(0);
}
const unknownFlag = args.find((a) => a.startsWith("-") && !FLAGS.has(a));
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
const files = names.filter((n) => wanted.length === 0 || chosen.has(n)).map((n) => `${n}.bench.ts`);
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const mod = (await import(pathToFileURL(dir + f).href)) as { run: () => Promise<void> };
  await mod.run();
}
