// `npm run build` (and `npm ci`, through `prepare`): compile src/ to dist/ with declarations.
//   node bin/build.js                 a clean build: dist/ wiped first, so deleted modules do not linger
//   node bin/build.js --incremental   only what changed since the last build (the test suite's setup)
// Either way it ends by writing dist/.built, the stamp bin/dist-fresh.js compares with src/:
// an incremental build rewrites only the outputs that changed, so no output file's time says when
// the build ran.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const buildInfo = `${root}node_modules/.cache/bodylink/build.tsbuildinfo`;
const incremental = process.argv.includes("--incremental");
if (!incremental) {
  rmSync(`${root}dist`, { recursive: true, force: true });
  rmSync(buildInfo, { force: true });
}
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", `${root}tsconfig.build.json`, "--incremental", "--tsBuildInfoFile", buildInfo], { stdio: "inherit" });
mkdirSync(`${root}dist`, { recursive: true });
writeFileSync(`${root}dist/.built`, `${new Date().toISOString()}\n`);
