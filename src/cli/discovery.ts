/**
 * How CLI commands find a running runtime without flags: `bodylink serve` writes a small JSON file
 * in a per-user runtime directory and removes it on exit. A file whose pid is gone is stale and
 * ignored (and replaced by the next `serve`). `BODYLINK_RUNTIME_DIR` overrides the directory.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RuntimeRecord {
  readonly pid: number;
  readonly body: string;
  /** "sim" or "usb" (NAO), "sim" or "tny:HOST" (TNY-360). */
  readonly transport: string;
  readonly apiUrl: string | null;
  readonly lolaPath: string | null;
  readonly tnyUrl: string | null;
  readonly startedAt: string;
}

export function runtimeDir(): string {
  return process.env.BODYLINK_RUNTIME_DIR ?? join(tmpdir(), `bodylink-${process.getuid?.() ?? "user"}`);
}

const file = () => join(runtimeDir(), "runtime.json");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The running runtime, or null when none is recorded or its process is gone. */
export function findRuntime(): RuntimeRecord | null {
  try {
    const r = JSON.parse(readFileSync(file(), "utf8")) as RuntimeRecord;
    return typeof r.pid === "number" && alive(r.pid) ? r : null;
  } catch {
    return null;
  }
}

export function writeRuntime(r: RuntimeRecord): void {
  mkdirSync(runtimeDir(), { recursive: true, mode: 0o700 });
  writeFileSync(file(), `${JSON.stringify(r, null, 2)}\n`, { mode: 0o600 });
}

export function removeRuntime(pid = process.pid): void {
  const r = findRuntime();
  if (!r || r.pid === pid) rmSync(file(), { force: true });
}
