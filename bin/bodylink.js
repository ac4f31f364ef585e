#!/usr/bin/env node
// Entry point for `bodylink` / `npx bodylink` / `npm start`.
// Runs the compiled CLI from dist/ (built by `npm ci` through the `prepare` script, or by
// `npm run build`) when it is at least as new as every file under src/; otherwise the TypeScript
// sources through tsx, so an edited checkout never runs stale code and a fresh one needs no build.
import { fileURLToPath, pathToFileURL } from "node:url";
import { distState } from "./dist-fresh.js";

const root = fileURLToPath(new URL("..", import.meta.url));
// `bodylink estop`: a program of that command alone, which loads none of the servers' modules.
const entry = process.argv[2] === "estop" ? "estop-main" : "main";
const state = distState(root);
if (state === "fresh") {
  await import(pathToFileURL(`${root}dist/cli/${entry}.js`).href);
} else {
  if (state === "stale") process.stderr.write("bodylink: dist/ is older than src/, running the sources (npm run build refreshes dist/)\n");
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(`${root}src/cli/${entry}.ts`).href);
}
