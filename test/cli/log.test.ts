/**
 * `bodylink serve`'s one log (docs/operations.md, "Logs"): off a terminal every stderr line is one
 * pino JSON record (the safety log, the core's LoLA server, start and shutdown alike); a normal
 * Ctrl-C is an `info` line, not an e-stop warning; `--log-format`, `--log-level` and `--log-file`
 * choose; a log file that cannot be opened is one error line before anything starts.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, expectOneErrorLine, serve } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bodylink-logcli-"));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "run") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Rec {
  level: number;
  msg: string;
  component?: string;
  event?: string;
}

describe("serve's log", () => {
  it("off a terminal: every stderr line is a JSON record; the core's LoLA server logs through it; Ctrl-C is info", async () => {
    const s = await serve(env, "--api-port", "0", "--lola-path", join(dir, "lola"), "--name", "log-nao");
    // The LoLA server (in the core's thread) says where it serves once it does.
    const t0 = Date.now();
    while (!s.err().includes("serving LoLA on") && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(await s.stop()).toBe(0);
    const lines = s.err().trim().split("\n");
    const records = lines.map((l) => JSON.parse(l) as Rec);
    expect(records.find((r) => r.event === "started")).toMatchObject({ level: 30, component: "serve" });
    expect(records.find((r) => r.component === "lola-server" && /serving LoLA on/.test(r.msg))).toMatchObject({ level: 30 });
    const shutdown = records.find((r) => r.event === "shutdown");
    expect(shutdown).toMatchObject({ level: 30, component: "safety", msg: expect.stringMatching(/^stopping \(shutdown: SIGINT\)/) });
    // Nothing about a normal stop is a warning (late cycles on a loaded machine are, and are not about the stop).
    expect(records.filter((r) => r.level >= 40 && r.event !== "late_cycles")).toEqual([]);
    expect(s.out()).toMatch(/^SIGINT: stopping/m);
  }, 60_000);

  it("--log-format pretty --log-level warn --log-file FILE: the file gets human lines at warn and above, stderr nothing", async () => {
    const file = join(dir, "serve.log");
    const s = await serve(env, "--body", "p7", "--api-port", "0", "--log-format", "pretty", "--log-level", "warn", "--log-file", file);
    const url = /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(s.out())![1]!;
    const r = await fetch(`${url}/v1/estop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "log test" }) });
    expect(r.status).toBe(200);
    expect(await s.stop()).toBe(0);
    expect(s.err()).toBe("");
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}safety: emergency stop latched by .*: log test/m);
    expect(text).not.toMatch(/ INFO /); // below --log-level
    expect(text).not.toMatch(/^\{/m);
  }, 60_000);

  it("a log file that cannot be opened: one error line, nothing started", async () => {
    const r = await cli(env, "serve", "--body", "p7", "--api-port", "0", "--log-file", join(dir, "missing", "x.log"));
    expect(expectOneErrorLine(r, "BL_ERR_LOG_FILE")).toMatch(/^cannot write the log to .*missing\/x\.log: ENOENT/);
    expect(r.stdout).toBe("");
  }, 60_000);

  it("--log-format and --log-level take only their words", async () => {
    expectOneErrorLine(await cli(env, "serve", "--log-format", "xml"), "BL_ERR_CLI_USAGE", 2);
    expectOneErrorLine(await cli(env, "serve", "--log-level", "loud"), "BL_ERR_CLI_USAGE", 2);
  }, 60_000);
});
