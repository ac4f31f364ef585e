/**
 * The systemd units in docs/systemd/ (docs/operations.md, "Services"): one per way a body runs,
 * each valid for `systemd-analyze verify`, each one's ExecStart with its section of robots.yaml a
 * valid `serve` configuration for the body it names, and the documented stop and restart policy.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cli } from "./support/cli.js";
import { locate, SYSTEM_PACKAGES, skipLine } from "./support/system-packages.js";

const run = promisify(execFile);
const UNITS = { "bodylink-nao.service": "nao", "bodylink-lola.service": "nao", "bodylink-p7.service": "p7", "bodylink-tny360.service": "tny360" } as const;
const dir = mkdtempSync(join(tmpdir(), "bodylink-systemd-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "run") };

/** `[Section]` → key → values (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | null = null;
  for (const line of text.split("\n")) {
    if (/^\s*(#|;|$)/.test(line)) continue;
    const s = /^\[(\w+)\]$/.exec(line);
    if (s) {
      section = new Map();
      out.set(s[1]!, section);
      continue;
    }
    const kv = /^(\w+)=(.*)$/.exec(line);
    expect(kv, line).not.toBeNull();
    expect(section, line).not.toBeNull();
    section!.set(kv![1]!, [...(section!.get(kv![1]!) ?? []), kv![2]!]);
  }
  return out;
}

const analyze = locate(SYSTEM_PACKAGES.systemd);
const ANALYZE_SKIP = skipLine(SYSTEM_PACKAGES.systemd) ?? "";

describe("the systemd units", () => {
  for (const [unit, body] of Object.entries(UNITS)) {
    describe(unit, () => {
      const path = join("docs/systemd", unit);
      const text = readFileSync(path, "utf8");
      const u = parseUnit(text);
      const svc = u.get("Service")!;

      it("stops through SIGTERM (the one stop path) with a margin over its 5 s deadline, restarts on failure only, within a start limit", () => {
        expect([...u.keys()]).toEqual(["Unit", "Service", "Install"]);
        expect(svc.get("KillSignal")).toEqual(["SIGTERM"]);
        expect(Number(svc.get("TimeoutStopSec")![0])).toBeGreaterThan(5);
        expect(svc.get("Restart")).toEqual(["on-failure"]);
        expect(u.get("Unit")!.get("StartLimitBurst")).toEqual(["5"]);
        expect(svc.get("LimitRTPRIO")).toEqual(["20"]); // the core's SCHED_FIFO 20 (src/rt/core-worker.ts)
        expect(svc.has("StandardOutput") || svc.has("StandardError")).toBe(false); // the journal: not a TTY, so JSON
        if (unit === "bodylink-nao.service") expect(u.get("Unit")!.get("Conflicts")).toEqual(["hal.service lola.service"]);
      });

      it.skipIf(!analyze)(analyze ? "passes systemd-analyze verify" : ANALYZE_SKIP, async () => {
        // Its ExecStart pointed at this checkout's entry, so the executable exists here.
        const copy = join(dir, unit);
        writeFileSync(copy, text.replace(/^ExecStart=\S+/m, `ExecStart=${resolve("bin/bodylink.js")}`));
        const r = await run(analyze!, ["verify", "--man=no", copy], { timeout: 30_000 }).catch((e: { stderr: string; code: number }) => e);
        expect("code" in r ? r.code : 0, r.stderr).toBe(0);
        expect(r.stderr.split("\n").filter((l) => l.includes(unit))).toEqual([]);
      });

      it(`its ExecStart and its section of robots.yaml are a valid serve configuration for --body ${body}`, async () => {
        const exec = svc.get("ExecStart")![0]!.split(/\s+/);
        expect(exec[0]).toMatch(/\/bodylink$/);
        expect(exec[1]).toBe("serve");
        const args = exec.slice(2);
        const at = args.indexOf("--config");
        expect(args[at + 1]).toBe("/etc/bodylink/robots.yaml");
        // The example config with its token file made here (the real one is made at install).
        const token = join(dir, "token");
        writeFileSync(token, "t0ken\n");
        const config = join(dir, "robots.yaml");
        writeFileSync(config, readFileSync("docs/systemd/robots.yaml", "utf8").replace("/etc/bodylink/token", token));
        args[at + 1] = config;
        const r = await cli(env, "config", "print", ...args);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^body: "${body}" {2}#`, "m"));
        expect(r.stdout).not.toContain("t0ken");
      }, 60_000);
    });
  }

  it("docs/operations.md installs the units that exist, and docs/lola.md points at the LoLA one", () => {
    const ops = readFileSync("docs/operations.md", "utf8");
    for (const unit of Object.keys(UNITS)) expect(ops).toContain(`(systemd/${unit})`);
    for (const m of ops.matchAll(/docs\/systemd\/([\w.-]+)/g)) expect(existsSync(join("docs/systemd", m[1]!)), m[1]).toBe(true);
    expect(readFileSync("docs/lola.md", "utf8")).toContain("systemd/bodylink-lola.service");
  });
});
