#!/usr/bin/env node
// Entry point for `bodylink` / `npx bodylink` / `npm start`.
// Runs the compiled CLI from dist/ when it exists (after `npm run build`), else the TypeScript
// sources through tsx, so a fresh clone needs no build step.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = `${root}dist/cli/main.js`;
if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(`${root}src/cli/main.ts`).href);
}
