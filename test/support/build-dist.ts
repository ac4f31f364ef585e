/**
 * vitest global setup: make sure dist/ is built and newer than src/ before any test file runs.
 * The CLI's entry runs dist/ when it is fresh (tests of `bodylink serve` then start in under a
 * second instead of compiling through tsx), and test/package.test.ts installs the packed package
 * the way a consumer does. `npm ci` builds dist/ already (the `prepare` script), so in CI this is a
 * check; after an edit it rebuilds incrementally (a few seconds), once, rather than racing inside
 * parallel test files. Fresh, it also has in-process core workers load dist/ (below).
 *
 * A failed build (a type error somewhere in src/) does not stop the run: tsc's errors are shown
 * here, the CLI falls back to the sources, and only test/package.test.ts fails, saying why.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { distState } from "../../bin/dist-fresh.js";

export default function setup(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  if (distState(root) !== "fresh") {
    try {
      execFileSync(process.execPath, ["bin/build.js", "--incremental"], { cwd: root, stdio: "inherit" });
    } catch {
      console.error("bodylink test setup: dist/ could not be built (tsc's errors above); test/package.test.ts will fail");
    }
  }
  // The test files' processes inherit this one's environment: with dist/ fresh, a core worker that
  // a test starts in-process loads dist/'s compiled entry instead of the sources through tsx again
  // in every worker (src/host/core-host.ts, launch); stale, the sources as before.
  if (distState(root) === "fresh") process.env.BODYLINK_CORE_FROM_DIST = "1";
}
