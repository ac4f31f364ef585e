// Whether dist/ (the compiled CLI and library) is at least as new as every file under src/.
// Shared by the CLI entry (bin/bodylink.js) and the test suite's global setup, so both agree on
// when dist/ may be used and neither ever runs stale code.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";

/** The newest modification time of any file under `dir`, ms (0 when it does not exist). */
function newestMtimeMs(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    const t = e.isDirectory() ? newestMtimeMs(p) : statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

/**
 * "fresh", "stale" (built, but src/ changed since) or "missing", for the package at `root`.
 * An installed package (under node_modules) trusts its dist/: its files all carry the time they
 * were unpacked, in no useful order, and nobody edits its src/. Anywhere else dist/ is compared by time.
 */
export function distState(root) {
  // dist/.built is written by every build (bin/build.js), dated when the build started.
  const stamp = join(root, "dist", ".built");
  if (!existsSync(stamp) || !existsSync(join(root, "dist", "cli", "main.js"))) return "missing";
  if (root.split(sep).includes("node_modules")) return "fresh";
  return statSync(stamp).mtimeMs >= newestMtimeMs(join(root, "src")) ? "fresh" : "stale";
}
