/**
 * vitest global setup: make sure dist/ is built and newer than src/ before any test file runs.
 * The CLI's entry runs dist/ when it is fresh (tests of `bodylink serve` then start in under a
 * second instead of compiling through tsx), and test/package.test.ts imports the package the way
 * a consumer does, through dist/. `npm ci` builds it already (the `prepare` script), so in CI this
 * is a check; after an edit it rebuilds once, here, rather than racing inside parallel test files.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { distState } from "../../bin/dist-fresh.js";

export default function setup(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  // Incremental (a few seconds after an edit); `npm run build` and `npm ci` build from clean.
  if (distState(root) !== "fresh") execFileSync(process.execPath, ["bin/build.js", "--incremental"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}
