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
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
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
await bundleTypebox();
writeFileSync(`${root}dist/.built`, `${new Date(startedS * 1000).toISOString()}\n`);
utimesSync(`${root}dist/.built`, startedS, startedS);

/**
 * TypeBox's ES build is some 700 modules: loading them took ~0.5 s of every `serve` start on a
 * quiet machine, twice (the core's thread loads it as well), 0.6-0.7 s each at a load of 8. dist/
 * gets it as one module per subpath it imports (dist/vendor/typebox/, esbuild with shared chunks,
 * so the subpaths share TypeBox's state as the package's modules do): ~40-90 ms. The compiled
 * modules' `"typebox…"` specifiers are pointed at it; the declarations keep the package's.
 * Idempotent, so an incremental build (which re-emits only what changed) rewrites what it emitted.
 */
async function bundleTypebox() {
  const { build } = await import("esbuild");
  const dist = join(root, "dist");
  const vendor = join(dist, "vendor", "typebox");
  const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*)"(typebox(?:\/[a-z]+)?)"/g;
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (p !== join(dist, "vendor")) walk(p);
      } else if (e.name.endsWith(".js")) files.push(p);
    }
  };
  walk(dist);
  // Every subpath any module imports: those tsc emitted this time name the package, those it did
  // not (an incremental build) already name the bundle, which is made anew.
  const BUNDLED = /\bfrom\s*"(?:\.\.?\/)+vendor\/typebox\/(\w+)\.js"/g;
  const used = new Set(["typebox"]);
  const texts = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
  for (const text of texts.values()) {
    for (const m of text.matchAll(SPECIFIER)) used.add(m[2]);
    for (const m of text.matchAll(BUNDLED)) used.add(m[1] === "index" ? "typebox" : `typebox/${m[1]}`);
  }
  const out = (spec) => (spec === "typebox" ? "index" : spec.slice("typebox/".length));
  rmSync(vendor, { recursive: true, force: true });
  await build({
    entryPoints: [...used].map((spec) => ({ in: fileURLToPath(import.meta.resolve(spec)), out: out(spec) })),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir: vendor,
    logLevel: "error",
  });
  for (const [f, text] of texts) {
    const next = text.replace(SPECIFIER, (_all, head, spec) => {
      const rel = relative(dirname(f), join(vendor, `${out(spec)}.js`)).replaceAll("\\", "/");
      return `${head}"${rel.startsWith(".") ? rel : `./${rel}`}"`;
    });
    if (next !== text) writeFileSync(f, next);
  }
}
