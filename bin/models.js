#!/usr/bin/env node
// `npm run models`: regenerate the shipped simulation models (models/*.xml) from src/bodies/models.ts.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const { register } = await import("tsx/esm/api");
register();
const { MODEL_FILES } = await import(pathToFileURL(`${root}src/bodies/models.ts`).href);
for (const [path, generate] of Object.entries(MODEL_FILES)) {
  mkdirSync(dirname(`${root}${path}`), { recursive: true });
  writeFileSync(`${root}${path}`, generate());
  process.stdout.write(`wrote ${path}\n`);
}
