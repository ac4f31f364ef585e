/**
 * The local e-stop socket (issue 25, Build 3; src/serve/estop-socket.ts): a JSON line in, a JSON
 * line out; it stops and shows the latch and never resets; it is 0600, bounded, and replaces a dead
 * runtime's socket file but nothing else.
 */
import { lstatSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { P7Robot } from "../../src/runtime/p7-robot.js";
import { type EstopSocket, requestEstopSocket, serveEstopSocket } from "../../src/serve/estop-socket.js";
import { simP7 } from "../api/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "bl-estop-sock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let robot: P7Robot | null = null;
let sock: EstopSocket | null = null;
afterEach(async () => {
  await sock?.close();
  await robot?.stop();
  sock = null;
  robot = null;
});

/** Send raw bytes, resolve with what came back before the server closed. */
function raw(path: string, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let out = "";
    s.on("connect", () => s.write(bytes));
    s.on("data", (d) => {
      out += String(d);
    });
    s.on("end", () => resolve(out));
    s.on("error", reject);
  });
}

describe("local e-stop socket", () => {
  it("stops (category, reason, source as given), shows the latch, refuses a reset; the socket is 0600", async () => {
    robot = await simP7();
    await robot.start();
    const path = join(dir, "a.estop");
    sock = await serveEstopSocket(path, robot);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(await requestEstopSocket(path, { op: "status" })).toEqual({ ok: true, estop: expect.objectContaining({ latched: false }) });
    const r = await requestEstopSocket(path, { op: "estop", category: 0, reason: "hand in the way", source: "cli" });
    expect(r).toMatchObject({ ok: true, stopped: true, estop: { latched: true, category: 0, reason: "hand in the way", source: "cli", phase: "cut" } });
    expect(robot.estopState().latched).toBe(true);
    const reset = JSON.parse(await raw(path, '{"op":"reset","reason":"area clear"}\n')) as { ok: boolean; code: string; message: string };
    expect(reset).toMatchObject({ ok: false, code: "BL_ERR_ESTOP_SOCKET_RESET" });
    expect(reset.message).toMatch(/only stops: reset through the robot API/);
    expect(robot.estopState().latched).toBe(true);
  });

  it("bad input gets a clear answer and moves nothing: not JSON, an unknown op, a bad category, a line over 1 KiB", async () => {
    robot = await simP7();
    await robot.start();
    const path = join(dir, "b.estop");
    sock = await serveEstopSocket(path, robot);
    const answers = await Promise.all(["hello\n", '{"op":"move"}\n', '{"op":"estop","category":2}\n', `${"x".repeat(2000)}\n`].map((b) => raw(path, b)));
    const parsed = answers.map((a) => JSON.parse(a) as { ok: boolean; code: string; message: string });
    expect(parsed.every((p) => !p.ok && p.code === "BL_ERR_CMD_INVALID")).toBe(true);
    expect(parsed.map((p) => p.message)).toEqual([
      expect.stringMatching(/one JSON line/),
      expect.stringMatching(/op "move"/),
      expect.stringMatching(/category must be 0 or 1/),
      expect.stringMatching(/at most 1024 bytes/),
    ]);
    expect(robot.estopState().latched).toBe(false);
    // a source is kept to letters, digits, - and _ (it goes into logs)
    const r = await requestEstopSocket(path, { op: "estop", source: "a\nb c" });
    expect(r).toMatchObject({ ok: true, estop: { source: "a_b_c", reason: "emergency stop (local socket)" } });
  });

  it("replaces a dead runtime's socket file; refuses a regular file; a client gets its answer or an error, never a hang", async () => {
    robot = await simP7();
    await robot.start();
    // a socket file nobody accepts on (a runtime that was SIGKILLed)
    const dead = join(dir, "dead.estop");
    spawnSync(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(dead)}, () => process.kill(process.pid, "SIGKILL"))`]);
    expect(lstatSync(dead).isSocket()).toBe(true);
    sock = await serveEstopSocket(dead, robot);
    expect((await requestEstopSocket(dead, { op: "status" })).ok).toBe(true);
    const file = join(dir, "file.estop");
    writeFileSync(file, "not a socket");
    await expect(serveEstopSocket(file, robot)).rejects.toThrow(/exists and is not a socket/);
    await expect(requestEstopSocket(join(dir, "none.estop"), { op: "status" })).rejects.toThrow(/ENOENT/);
  });
});
