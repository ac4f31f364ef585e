/**
 * The Python client's test tools (python/): a python3 ≥ 3.11 that imports `websockets` (Debian:
 * python3-websockets) and Debian's `mypy`. Found like the other system packages: an override
 * variable first (BODYLINK_PYTHON, BODYLINK_MYPY), then Debian's /usr/bin/python3 (where
 * python3-websockets installs; a pyenv or venv python3 earlier on PATH usually lacks it), then
 * PATH. Missing, the Python tests skip with ONE line saying what to install.
 */
import { execFileSync } from "node:child_process";
import { locate, type SystemPackage } from "./system-packages.js";

export const PYTHON_TESTS = "the Python client's tests (python/tests, mypy --strict)";

export const MYPY: SystemPackage = { debian: "mypy", executable: "mypy", override: "BODYLINK_MYPY", tests: PYTHON_TESTS };

/** True when `exe` is a python3 ≥ 3.11 that imports websockets. */
function usablePython(exe: string): boolean {
  try {
    execFileSync(exe, ["-c", "import sys, websockets; sys.exit(0 if sys.version_info >= (3, 11) else 1)"], { stdio: "ignore", timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** The python3 to run the client's tests with, or null. */
export function locatePython(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = env.BODYLINK_PYTHON ? [env.BODYLINK_PYTHON] : ["/usr/bin/python3", "python3"];
  for (const c of candidates) if (usablePython(c)) return c;
  return null;
}

/** The one line that says why the Python tests skip, or null when python3-websockets and mypy are there. */
export function pythonSkipLine(env: NodeJS.ProcessEnv = process.env): string | null {
  const missing: string[] = [];
  if (locatePython(env) === null)
    missing.push(env.BODYLINK_PYTHON ? `BODYLINK_PYTHON=${env.BODYLINK_PYTHON} is not a python3 ≥ 3.11 with websockets` : "no python3 ≥ 3.11 with websockets (apt-get install python3-websockets)");
  if (locate(MYPY, env) === null) missing.push(env.BODYLINK_MYPY ? `BODYLINK_MYPY=${env.BODYLINK_MYPY} is not an executable` : "Debian package mypy is not installed (apt-get install mypy)");
  return missing.length === 0 ? null : `SKIPPED ${PYTHON_TESTS}: ${missing.join("; ")}`;
}
