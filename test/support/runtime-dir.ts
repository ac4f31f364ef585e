/**
 * A test file's own runtime directory (BODYLINK_RUNTIME_DIR, where runtimes record themselves):
 * set before its tests, restored and removed after, so in-process runtimes never touch the
 * machine's real one. Call at the top level of a test file; returns the directory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

export function useRuntimeDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const saved = process.env.BODYLINK_RUNTIME_DIR;
  beforeAll(() => {
    process.env.BODYLINK_RUNTIME_DIR = dir;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.BODYLINK_RUNTIME_DIR;
    else process.env.BODYLINK_RUNTIME_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
