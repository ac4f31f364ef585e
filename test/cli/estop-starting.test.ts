/**
 * `bodylink estop` against a runtime that is still starting: its record claims the name before
 * the body opens, and the e-stop socket comes with the body, before the robot API. An e-stop typed
 * in that window waits (bounded) for the socket and stops, instead of answering "NOT STOPPED: no
 * robot API" for a runtime about to drive its body.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { ownProcStart, removeRuntimeRecord, type RuntimeRecord, updateRuntime, writeRuntime } from "../../src/cli/discovery.js";
import type { P7Robot } from "../../src/runtime/p7-robot.js";
import { type EstopSocket, serveEstopSocket } from "../../src/serve/estop-socket.js";
import { simP7 } from "../api/helpers.js";
import { spawn } from "node:child_process";
import { BIN, cli } from "../support/cli.js";
import { until } from "../lola/client.js";
import { useRuntimeDir } from "../support/runtime-dir.js";

const dir = useRuntimeDir("bl-estop-start-");
/**
 * The second test's own directory: the two tests run at once (the second waits out the CLI's 5 s),
 * and `bodylink estop` without --robot, as the first runs it, stops every runtime it finds.
 */
const neverDir = mkdtempSync(join(tmpdir(), "bl-estop-never-"));
afterAll(() => rmSync(neverDir, { recursive: true, force: true }));

/** A record as serve writes it first: this (live) process, no e-stop socket, no API yet; in `inDir` (the runtime directory is read from the environment). */
function starting(name: string, inDir: string): RuntimeRecord {
  const r: RuntimeRecord = {
    name,
    pid: process.pid,
    procStart: ownProcStart(),
    body: "p7",
    transport: "sim",
    apiUrl: null,
    lolaPath: null,
    tnyUrl: null,
    startedAt: new Date().toISOString(),
  };
  const saved = process.env.BODYLINK_RUNTIME_DIR;
  process.env.BODYLINK_RUNTIME_DIR = inDir; // synchronous to the restore: the other test never sees it
  try {
    writeRuntime(r);
  } finally {
    process.env.BODYLINK_RUNTIME_DIR = saved;
  }
  return r;
}

describe.concurrent("bodylink estop while a runtime starts", () => {
  it("waits for its e-stop socket and latches it (the socket is recorded before the API)", async ({ expect }) => {
    // The body is ready before the CLI runs, so only the socket's start remains inside its 5 s wait.
    const robot: P7Robot = await simP7();
    let sock: EstopSocket | null = null;
    try {
      await robot.start();
      const record = starting("arm-starting", dir);
      const env = { ...process.env, BODYLINK_RUNTIME_DIR: dir };
      const proc = spawn(process.execPath, [...BIN, "estop", "--reason", "typed during start"], { env });
      let stdout = "";
      let stderr = "";
      proc.stdout.on("data", (d) => {
        stdout += String(d);
      });
      proc.stderr.on("data", (d) => {
        stderr += String(d);
      });
      const exited = new Promise<number | null>((resolve) => proc.on("close", resolve));
      // Once the CLI says it waits, the body comes up with its socket, as serve's start does; the API is not there yet.
      await until(() => /arm-starting is starting; waiting up to 5 s for its e-stop socket/.test(stderr), "the CLI to wait for the starting runtime", 30_000);
      const path = join(dir, "arm-starting.estop");
      sock = await serveEstopSocket(path, robot);
      updateRuntime({ ...record, estopPath: path });
      expect(await exited, stderr).toBe(0);
      expect(stdout).toMatch(/LATCHED .*by cli: typed during start/);
      expect(robot.estopState()).toMatchObject({ latched: true, reason: "typed during start" });
    } finally {
      removeRuntimeRecord("arm-starting");
      await sock?.close();
      await robot.stop();
    }
  }, 60_000);

  it("one that never serves within 5 s is named NOT STOPPED, with why, and the exit is non-zero", async ({ expect }) => {
    starting("arm-never", neverDir);
    const r = await cli({ ...process.env, BODYLINK_RUNTIME_DIR: neverDir }, "estop", "--robot", "arm-never");
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/arm-never.*still starting after 5 s: no e-stop socket or robot API yet/s);
    expect(r.stderr).toMatch(/not confirmed by arm-never/);
  }, 60_000);
});
