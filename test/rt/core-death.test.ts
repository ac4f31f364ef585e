/**
 * Watchdog, the dying side: when a body's real-time core dies (a test hook throws in the worker),
 * the body is left in its safe state and `bodylink serve` exits non-zero with one clear line.
 * NAO: the LoLA controller held stiffness 1.0 until then; the body's last frame is at stiffness 0,
 * and so is the last sensor message the LoLA client gets before its EOF (issue 25, item 6), even
 * for a client that stopped reading (its socket full: the dying core waits for it, a moment at most).
 * P7 and TNY-360: a client holds control and commands motion; the line says what the body was
 * left in (the arm halted, the quadruped's velocity 0).
 */
import { unpack } from "msgpackr";
import { describe, expect, it } from "vitest";
import { LEASE_HEADER } from "../../src/bodies/link.js";
import { LOLA_SENSOR_MESSAGE_BYTES } from "../../src/wire/lola/constants.js";
import { TestLolaClient, until } from "../lola/client.js";
import { type ServeRig, StiffController, startServe } from "./serve-rig.js";

// The core crashes when the test says so (SIGUSR2 to serve), once its clients hold control: no
// timer races a slow start on a loaded machine (it did: a P7 test's command met a dead core, ECONNRESET).
const HOOKS = { BODYLINK_TEST_HOOKS: "1", BODYLINK_TEST_FAULTS: "1", BODYLINK_TEST_CRASH_CORE: "1" };

function crashCore(rig: ServeRig): void {
  rig.child.kill("SIGUSR2");
}

async function exitOf(rig: ServeRig): Promise<number | null> {
  return new Promise<number | null>((resolve) => {
    if (rig.child.exitCode !== null) resolve(rig.child.exitCode);
    else rig.child.once("exit", (c) => resolve(c));
  });
}

/** The messages of the log's error and fatal records (serve's log is JSON off a terminal; the safety log's warnings are not these). */
const bodylinkLines = (rig: ServeRig): string[] =>
  rig
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((r) => r.level >= 50)
    .map((r) => `bodylink: ${r.msg}`);

/** Take control over the robot API and send one command (the lease is long: the core dies holding it). */
async function commandOverApi(rig: ServeRig, path: string, body: unknown): Promise<void> {
  const headers = { "content-type": "application/json" };
  const lease = (await (await fetch(`${rig.apiUrl}/v1/control`, { method: "POST", headers, body: JSON.stringify({ owner: "death-test", lease_ms: 60_000 }) })).json()) as { lease_id: string };
  const r = await fetch(`${rig.apiUrl}${path}`, { method: "POST", headers: { ...headers, [LEASE_HEADER]: lease.lease_id }, body: JSON.stringify(body) });
  expect(r.status, await r.text()).toBe(200);
}

describe("a real-time core that dies", () => {
  it("NAO: sends the body stiffness 0, every LoLA client's last frame says so, and serve exits 1 with one line", async () => {
    const rig = await startServe(["--lola-readers", "1"], HOOKS);
    try {
      const lola = await StiffController.connect(rig.lolaPath);
      await until(() => lola.reached || rig.child.exitCode !== null, "stiffness 1.0", 20_000);
      const reader = await StiffController.connect(rig.lolaPath); // a read-only client (its commands are ignored)
      await until(() => reader.reached || rig.child.exitCode !== null, "the reader's frames at 1.0", 20_000);
      // Both clients settled into reading every cycle (a hundred frames, whatever the clock says) before the core dies.
      const settled = reader.frames + 100;
      await until(() => reader.frames >= settled || rig.child.exitCode !== null, "the reader reading steadily", 60_000);
      crashCore(rig);
      const trace = lola.trace();
      const code = await exitOf(rig);
      await Promise.all([lola.done, reader.done]); // both read until EOF
      await lola.close();
      await reader.close();
      expect(code).toBe(1);
      // Each LoLA client's last frame before its EOF says what the body was left in: stiffness 0
      // (the dying core sends it after the body's safe frame), after frames at 1.0. Before, it said
      // 1.0 (issue 25: 2 of 2).
      expect(trace.length, trace.join(",")).toBeGreaterThan(0);
      expect(lola.last, trace.slice(-20).join(",")).toBe(0);
      expect(reader.last).toBe(0);
      const lines = bodylinkLines(rig);
      expect(lines, rig.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(/^bodylink: BL_ERR_CORE_DIED: the real-time core died \(test hook: .*\); its last frame to the body was sent at stiffness 0$/);
    } finally {
      await rig.close();
    }
  }, 60_000);

  it("NAO: a client that stopped reading (its socket full, a message queued behind it) still gets the last message, at stiffness 0, before its EOF", async () => {
    const rig = await startServe(["--lola-readers", "1"], HOOKS);
    try {
      const lola = await StiffController.connect(rig.lolaPath);
      await until(() => lola.reached || rig.child.exitCode !== null, "stiffness 1.0", 20_000);
      // A read-only client that reads nothing: the kernel's buffer fills, then the server queues one
      // message in Node and drops the rest, and says so.
      const stalled = await TestLolaClient.connect(rig.lolaPath);
      stalled.socket.pause();
      await until(() => /is not reading fast enough/.test(rig.stderr()) || rig.child.exitCode !== null, "the server to find the client's socket full", 30_000);
      crashCore(rig);
      // The dying core says it waits for the client (without the wait, nothing is said and the last
      // message never leaves Node: the client's last is an old one at 1.0); the client reads now.
      await until(() => /dying: waiting up to \d+ ms for lola:client#\d+/.test(rig.stderr()) || rig.child.exitCode !== null, "the dying core to wait for the client", 30_000);
      stalled.socket.resume();
      const code = await exitOf(rig);
      const bytes = await stalled.rest();
      await lola.close();
      expect(code).toBe(1);
      expect(bytes.length % LOLA_SENSOR_MESSAGE_BYTES).toBe(0);
      const frames = bytes.length / LOLA_SENSOR_MESSAGE_BYTES;
      const stiffness = (i: number) => Math.max(...(unpack(bytes.subarray(i * LOLA_SENSOR_MESSAGE_BYTES, (i + 1) * LOLA_SENSOR_MESSAGE_BYTES)) as { Stiffness: number[] }).Stiffness);
      expect(frames).toBeGreaterThan(1);
      expect(stiffness(frames - 2)).toBeGreaterThan(0.5); // what it had not read: the controller's stiffness (1.0, or on its way there)
      expect(stiffness(frames - 1)).toBe(0); // the last before its EOF: the body's safe state
      expect(rig.stderr()).not.toMatch(/did not take the last sensor message/);
    } finally {
      await rig.close();
    }
  }, 90_000);

  it("P7: halts every joint, and serve exits 1 with one line", async () => {
    const rig = await startServe([], HOOKS, { body: "p7" });
    try {
      await commandOverApi(rig, "/v1/commands/move-joints", { positions: [0.5, 0.2, 0, 0, 0, 0, 0], speed: 0.1 });
      crashCore(rig);
      expect(await exitOf(rig)).toBe(1);
      const lines = bodylinkLines(rig);
      expect(lines, rig.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(/^bodylink: BL_ERR_CORE_DIED: the real-time core died \(test hook: .*\); every joint of the arm was halted where it is$/);
    } finally {
      await rig.close();
    }
  }, 60_000);

  it("TNY-360: sets the velocity to 0, and serve exits 1 with one line", async () => {
    const rig = await startServe([], HOOKS, { body: "tny360" });
    try {
      await commandOverApi(rig, "/v1/commands/velocity", { x: 0.1, y: 0, yaw: 0 });
      crashCore(rig);
      expect(await exitOf(rig)).toBe(1);
      const lines = bodylinkLines(rig);
      expect(lines, rig.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(/^bodylink: BL_ERR_CORE_DIED: the real-time core died \(test hook: .*\); the body's velocity was set to 0 \(its joints hold their pose\)$/);
    } finally {
      await rig.close();
    }
  }, 60_000);
});
