/**
 * vitest global setup: one line per missing system package (and one for the Python client's tools), once per run, in the default
 * output (a skipped test's title shows only in the verbose reporter).
 */
import { pythonSkipLine } from "./python.js";
import { SYSTEM_PACKAGES, skipLine } from "./system-packages.js";

export function skipLines(env: NodeJS.ProcessEnv = process.env): string[] {
  return [...Object.values(SYSTEM_PACKAGES).map((p) => skipLine(p, env)), pythonSkipLine(env)].filter((l): l is string => l !== null);
}

// vitest runs a global setup once for the root and once per project, in one process: say it once.
const REPORTED = Symbol.for("bodylink.tests.skipsReported");

export default function setup(): void {
  const g = globalThis as { [REPORTED]?: boolean };
  if (g[REPORTED]) return;
  g[REPORTED] = true;
  for (const line of skipLines()) process.stdout.write(`bodylink tests: ${line}\n`);
}
