/**
 * Every exit takes the same stop path (issue 10, item 5): `bodylink serve` on the simulator with a
 * LoLA controller that commands stiffness 1.0 on every frame is ended by SIGHUP (the terminal
 * closes), SIGTERM, an injected uncaught exception and an injected unhandled rejection. Each time
 * the controller's last frame before its EOF shows stiffness 0, the process exits, and neither the
 * socket file nor the runtime record is left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unpack } from "msgpackr";
import { afterAll, describe, expect, it } from "vitest";
import { LolaCommandWriter } from "../src/wire/lola/command-message.js";
import { TestLolaClient } from "./lola/client.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Outcome {
  stiffnessSeen: number;
  last: number[];
  code: number | null;
  out: string;
  dir: string;
  lolaPath: string;
}

async function endWith(how: { signal?: NodeJS.Signals; fault?: string }): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-exit-"));
  dirs.push(dir);
  const lolaPath = join(dir, "robocup");
  const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt"), ...(how.fault ? { BODYLINK_TEST_FAULT: how.fault } : {}) };
  const child: ChildProcess = spawn(process.execPath, ["bin/bodylink.js", "serve", "--api-port", "0", "--lola-path", lolaPath], { env });
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  child.stderr!.on("data", (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const t0 = Date.now();
    while (!/Ctrl-C to stop/.test(out)) {
      if (Date.now() - t0 > 40_000) throw new Error(`serve did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const c = await TestLolaClient.connect(lolaPath);
    const stiff = new LolaCommandWriter(["Stiffness"]).setFloats("Stiffness", new Array(25).fill(1));
    let stiffnessSeen = 0;
    let last: number[] = [];
    let signalled = false;
    for (;;) {
      const frame = await c.frame().catch(() => null);
      if (!frame) break; // EOF
      last = (unpack(frame) as { Stiffness: number[] }).Stiffness;
      if (Math.min(...last) > 0.99) stiffnessSeen++;
      await c.send(stiff.bytes).catch(() => undefined);
      // Signal once the controller has held stiffness 1 for a while (SIGUSR2 fires the injected fault).
      if (!signalled && stiffnessSeen >= 10) {
        signalled = true;
        child.kill(how.signal ?? "SIGUSR2");
      }
    }
    return { stiffnessSeen, last, code: await exited, out, dir, lolaPath };
  } finally {
    child.kill("SIGKILL");
  }
}

function expectCleanStop(r: Outcome): void {
  expect(r.stiffnessSeen, r.out).toBeGreaterThan(0); // it was standing before
  expect(r.last).toHaveLength(25);
  expect(Math.max(...r.last), r.out).toBe(0); // the last frame before EOF: stiffness 0
  expect(existsSync(r.lolaPath)).toBe(false);
  const rt = join(r.dir, "rt");
  expect(existsSync(rt) ? readdirSync(rt) : []).toEqual([]);
}

describe("every exit takes the stop path", () => {
  it("SIGHUP (the terminal closed)", async () => {
    const r = await endWith({ signal: "SIGHUP" });
    expectCleanStop(r);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/SIGHUP: stopping/);
  }, 90_000);

  it("SIGTERM", async () => {
    const r = await endWith({ signal: "SIGTERM" });
    expectCleanStop(r);
    expect(r.code).toBe(0);
  }, 90_000);

  it("an uncaught exception: one line, then the same path, exit 1", async () => {
    const r = await endWith({ fault: "throw" });
    expectCleanStop(r);
    expect(r.code).toBe(1);
    // One fatal record in the runtime's log (JSON off a terminal), with the error's stack.
    expect(r.out).toMatch(/^\{"level":60,.*"event":"crash","err":\{"type":"Error","message":"injected fault \(BODYLINK_TEST_FAULT\)".*"msg":"uncaught exception; stopping the body"\}$/m);
  }, 90_000);

  it("an unhandled rejection: the same path, exit 1", async () => {
    const r = await endWith({ fault: "reject" });
    expectCleanStop(r);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^\{"level":60,.*"message":"injected fault \(BODYLINK_TEST_FAULT\)".*"msg":"unhandled rejection; stopping the body"\}$/m);
  }, 90_000);
});
