/**
 * The Python client (python/, issue 23) as part of `npm test`: its own unittest suite, which starts
 * a real `bodylink serve` per body (free ports, its own runtime dir) and runs the client against it,
 * and `mypy --strict` over the package, its tests and its examples. Skips with one line when
 * python3-websockets or mypy is missing (test/support/python.ts; .ci/run installs them).
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { locate } from "../support/system-packages.js";
import { locatePython, MYPY, PYTHON_TESTS, pythonSkipLine } from "../support/python.js";

const run = promisify(execFile);
const PYTHON_DIR = join(import.meta.dirname, "..", "..", "python");
const skip = pythonSkipLine();

/** Output of a finished child, for the failure message. */
async function outcome(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  try {
    const r = await run(cmd, args, { cwd: PYTHON_DIR, env, maxBuffer: 16 << 20, timeout: 900_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === "number" ? x.code : 1, out: `${x.stdout ?? ""}${x.stderr ?? ""}` };
  }
}

// The three run concurrently: mypy is CPU work and the unittest runs mostly wait on their runtimes
// (one after the other, the file spent ~15 s for ~11 s of CPU).
describe.skipIf(skip !== null)(skip ?? "the Python client", () => {
  it.concurrent("passes mypy --strict (package, tests, examples)", async ({ expect }) => {
    const r = await outcome(locate(MYPY)!, ["--strict", "bodylink", "tests", "examples"], process.env);
    expect(r.out).toContain("Success: no issues found");
    expect(r.code, r.out).toBe(0);
  }, 300_000);

  it.concurrent("passes its unittest suite against a real runtime per body", async ({ expect }) => {
    // The runtime the Python tests start is this checkout's, run by this node.
    const env = { ...process.env, BODYLINK_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: "1" };
    // One unittest process per module, side by side: each starts its own runtime (free ports, its
    // own runtime dir) and mostly waits on it, so one after another was 30 s of a worker waiting.
    const modules = readdirSync(join(PYTHON_DIR, "tests"))
      .filter((f) => /^test_\w+\.py$/.test(f))
      .map((f) => `tests.${f.slice(0, -3)}`);
    expect(modules).toEqual(expect.arrayContaining(["tests.test_nao", "tests.test_p7", "tests.test_tny360", "tests.test_offline"]));
    const runs = await Promise.all(modules.map((m) => outcome(locatePython()!, ["-m", "unittest", m], env)));
    for (const [i, r] of runs.entries()) {
      expect(r.out, `${modules[i]}: ${r.out}`).toMatch(/\nOK/);
      expect(r.code, `${modules[i]}: ${r.out}`).toBe(0);
    }
  }, 900_000);

  it.concurrent("passes its P7 tests against a physics arm (serve --body p7 --sim physics; one more runtime)", async ({ expect }) => {
    const env = { ...process.env, BODYLINK_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: "1", BODYLINK_TEST_SIM: "physics" };
    // The module's runtime only (the token test starts one of its own and is not about the arm).
    const cases = ["SeedGetters", "Control", "Examples", "Asyncio"].map((c) => `tests.test_p7.${c}`);
    const r = await outcome(locatePython()!, ["-m", "unittest", ...cases], env);
    expect(r.out, r.out).toMatch(/\nOK/);
    expect(r.code, r.out).toBe(0);
  }, 300_000);
});

describe("the Python tools check", () => {
  it("names what is missing in one line, and honours the override variables", () => {
    const line = pythonSkipLine({ PATH: "/nonexistent", BODYLINK_PYTHON: "/nonexistent/python3", BODYLINK_MYPY: "/nonexistent/mypy" });
    expect(line).toBe(`SKIPPED ${PYTHON_TESTS}: BODYLINK_PYTHON=/nonexistent/python3 is not a python3 ≥ 3.11 with websockets; BODYLINK_MYPY=/nonexistent/mypy is not an executable`);
    expect(locatePython({ BODYLINK_PYTHON: process.execPath })).toBeNull(); // node is no python
  });
});
