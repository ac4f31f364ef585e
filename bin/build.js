// `npm run build` (and `npm ci`, through `prepare`): compile src/ to dist/ with declarations.
//   node bin/build.js                 a clean build: dist/ wiped first, so deleted modules do not linger
//   node bin/build.js --incremental   only what changed since the last build (the test suite's setup);
//                                     a clean build when dist/ is missing or incomplete
//   node bin/build.js --prepare       npm's `prepare`: like the first, but without TypeScript it succeeds
// It ends by writing dist/.built, the stamp bin/dist-fresh.js compares with src/, dated when the
// build *started* (an edit made during the build must count as newer). An incremental build
// rewrites only the outputs that changed, so no output file's time says when the build ran.
// Without TypeScript (`npm ci --omit=dev`, an install for a robot) there is nothing to build here:
// `prepare` then says so and succeeds, and the CLI runs the sources through tsx.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const buildInfo = `${root}node_modules/.cache/bodylink/build.tsbuildinfo`;
const startedS = Date.now() / 1000;

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  if (process.argv.includes("--prepare")) {
    console.error("bodylink: TypeScript is not installed (dev dependencies omitted): dist/ not built; the CLI runs the sources through tsx");
    process.exit(0);
  }
  console.error("bodylink: TypeScript is not installed: run `npm ci` (with dev dependencies) to build");
  process.exit(1);
}

const complete = existsSync(`${root}dist/.built`) && existsSync(`${root}dist/cli/main.js`);
if (!(process.argv.includes("--incremental") && complete)) {
  rmSync(`${root}dist`, { recursive: true, force: true });
  rmSync(buildInfo, { force: true });
}
execFileSync(process.execPath, [tsc, "-p", `${root}tsconfig.build.json`, "--incremental", "--tsBuildInfoFile", buildInfo], { stdio: "inherit" });
mkdirSync(`${root}dist`, { recursive: true });
writeFileSync(`${root}dist/.built`, `${new Date(startedS * 1000).toISOString()}\n`);
utimesSync(`${root}dist/.built`, startedS, startedS);
