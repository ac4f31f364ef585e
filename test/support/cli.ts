/**
 * Running the installed CLI entry (bin/bodylink.js, from the fresh dist/ the global setup builds)
 * as a user would, each test group with its own BODYLINK_RUNTIME_DIR.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { expect } from "vitest";
import type { ERRORS } from "../../src/errors.js";

const run = promisify(execFile);
export const BIN = ["bin/bodylink.js"];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  try {
    const r = await run(process.execPath, [...BIN, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

const documented = new Set([...readFileSync("docs/errors.md", "utf8").matchAll(/^\| `(BL_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]));

/** The README's promise: one line `bodylink: … [CODE]`, CODE in docs/errors.md, a non-zero exit. */
export function expectOneErrorLine(r: CliResult, code: keyof typeof ERRORS, exit = 1): string {
  expect(r.code, r.stderr).toBe(exit);
  // Warnings and the safety log's JSON lines (late cycles on a loaded machine, docs/security.md) are not errors.
  const lines = r.stderr
    .trim()
    .split("\n")
    .filter((l) => !l.startsWith("bodylink: warning: ") && !l.startsWith('{"level":'));
  expect(lines, r.stderr).toHaveLength(1);
  const m = /^bodylink: (.+) \[(BL_ERR_[A-Z_]+)\]$/.exec(lines[0]!);
  expect(m, lines[0]).not.toBeNull();
  expect(m![2]).toBe(code);
  expect(documented.has(code)).toBe(true);
  return m![1]!;
}

export interface Served {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  /** SIGINT, wait for the exit; returns its code. */
  stop(): Promise<number | null>;
}

/** Start `bodylink serve ARGS` and wait for its "Ctrl-C to stop." line. */
export async function serve(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Served> {
  const proc = spawn(process.execPath, [...BIN, "serve", ...args], { env });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => {
    out += String(d);
  });
  proc.stderr!.on("data", (d) => {
    err += String(d);
  });
  const exited = new Promise<number | null>((r) => proc.on("exit", (c) => r(c)));
  const t0 = Date.now();
  while (!/Ctrl-C to stop/.test(out)) {
    if (proc.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`serve did not start: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    out: () => out,
    err: () => err,
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGINT");
      return exited;
    },
  };
}

export function apiUrlOf(s: Served): string {
  return /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(s.out())![1]!;
}
