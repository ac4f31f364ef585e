/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command line).
 * Each bench module exports `run(): Promise<void>` and prints its own table, always as a ratio
 * against a baseline measured in the same run (machines here are noisy; absolute numbers lie).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const mod = (await import(pathToFileURL(dir + f).href)) as { run: () => Promise<void> };
  await mod.run();
}
