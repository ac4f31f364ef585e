/**
 * A stop or a failure while `bodylink serve` is still starting: Ctrl-C between the runtime's record
 * being written and "Ctrl-C to stop." takes the stop path (a line, exit 0, no stale record); a
 * start that fails (API port taken, bad --host) fails before the body opens anything, so no LoLA
 * socket file appears even for a moment.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, watch } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cli, expectOneErrorLine, serve } from "../support/cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function fresh(): { dir: string; run: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-start-"));
  dirs.push(dir);
  const run = join(dir, "run");
  return { dir, run, env: { ...process.env, BODYLINK_RUNTIME_DIR: run } };
}

describe("serve while it starts", () => {
  it("Ctrl-C during the start: a stopping line, exit 0, and no runtime record left", async () => {
    const { run, env, dir } = fresh();
    const child = spawn(process.execPath, [...BIN, "serve", "--api-port", "0", "--lola-path", join(dir, "lola")], { env });
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
    });
    child.stderr.on("data", (d) => {
      out += String(d);
    });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on("exit", (c, s) => r([c, s])));
    // The record is written first, before the body starts: interrupt right then.
    const t0 = Date.now();
    while (!(existsSync(run) && readdirSync(run).some((f) => f.endsWith(".json")))) {
      if (Date.now() - t0 > 30_000 || child.exitCode !== null) throw new Error(`no runtime record: ${out}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(out).not.toMatch(/Ctrl-C to stop/);
    child.kill("SIGINT");
    const [code, signal] = await exited;
    expect(signal, out).toBeNull();
    expect(code, out).toBe(0);
    expect(out).toMatch(/^SIGINT: stopping/m);
    expect(readdirSync(run)).toEqual([]);
    expect(existsSync(join(dir, "lola"))).toBe(false);
  }, 60_000);

  it("a taken --api-port fails before the LoLA socket is made: the socket file never appears", async () => {
    const { env, dir } = fresh();
    const sockDir = join(dir, "sock");
    mkdirSync(sockDir);
    const seen: string[] = [];
    const w = watch(sockDir, (_e, name) => seen.push(String(name)));
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await cli(env, "serve", "--api-port", String(port), "--lola-path", join(sockDir, "lola"));
      expectOneErrorLine(r, "BL_ERR_SERVE_PORT_IN_USE");
      const bad = await cli(env, "serve", "--api-port", "0", "--host", "203.0.113.7", "--token", "x", "--lola-path", join(sockDir, "lola"));
      expectOneErrorLine(bad, "BL_ERR_SERVE_BAD_HOST");
    } finally {
      w.close();
      taken.close();
    }
    expect(seen).toEqual([]);
  }, 60_000);
});

describe("serve's last lines", () => {
  it("with --foxglove and no --record there is no file, so no 'recorded … in' line", async () => {
    const { env } = fresh();
    const s = await serve(env, "--body", "p7", "--api-port", "0", "--foxglove", "0");
    expect(await s.stop()).toBe(0);
    expect(s.out()).toMatch(/^SIGINT: stopping/m);
    expect(s.out()).not.toMatch(/recorded/);
  }, 60_000);
});
