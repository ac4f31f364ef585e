/**
 * A test whose Debian package is missing skips with ONE line naming the package, in vitest's
 * default output (issue 14 item 9): the check function against a PATH without chromium, and a
 * real vitest run of a browser test file with such a PATH.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { skipLines } from "./support/report-skips.js";
import { locate, SYSTEM_PACKAGES, skipLine } from "./support/system-packages.js";

const dir = mkdtempSync(join(tmpdir(), "bodylink-syspkg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A PATH directory holding the given files (executable unless mode says otherwise). */
function pathDir(name: string, files: Record<string, number>): string {
  const d = join(dir, name);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d, { recursive: true });
  for (const [f, mode] of Object.entries(files)) {
    writeFileSync(join(d, f), "#!/bin/sh\nexit 0\n");
    chmodSync(join(d, f), mode);
  }
  return d;
}

const chromium = SYSTEM_PACKAGES.chromium;
const nats = SYSTEM_PACKAGES.natsServer;

describe("the system-package check", () => {
  it("with a PATH lacking chromium: one line naming the Debian package and how to install it", () => {
    // A file named chromium that is not executable does not count.
    const path = [pathDir("none", { "chromium-driver": 0o755, chromium: 0o644 }), pathDir("other", { node: 0o755 })].join(":");
    const env = { PATH: path };
    expect(locate(chromium, env, [])).toBeNull();
    const line = skipLine(chromium, env, []);
    expect(line).toBe("SKIPPED the browser tests (test/dashboard/): Debian package chromium is not installed (apt-get install chromium)");
    expect(line).not.toContain("\n");
  });
  it("finds chromium on PATH, and nats-server in /usr/sbin-style directories outside PATH", () => {
    const bin = pathDir("bin", { chromium: 0o755 });
    expect(locate(chromium, { PATH: `/nonexistent:${bin}` }, [])).toBe(join(bin, "chromium"));
    expect(skipLine(chromium, { PATH: bin }, [])).toBeNull();
    const sbin = pathDir("sbin", { "nats-server": 0o755 });
    expect(locate(nats, { PATH: bin }, [])).toBeNull();
    expect(locate(nats, { PATH: bin }, [sbin])).toBe(join(sbin, "nats-server"));
  });
  it("an override variable naming a missing file says so instead of guessing", () => {
    const env = { PATH: pathDir("bin2", { "nats-server": 0o755 }), BODYLINK_NATS_SERVER: join(dir, "no-such-nats") };
    expect(locate(nats, env, [])).toBeNull();
    expect(skipLine(nats, env, [])).toBe(`SKIPPED the fleet tests (test/fleet/, the fleet page): BODYLINK_NATS_SERVER=${join(dir, "no-such-nats")} is not an executable`);
  });
  it("the global setup has one line per missing package", () => {
    const env = { PATH: pathDir("empty", {}) };
    const lines = skipLines(env);
    expect(lines.filter((l) => l.includes("chromium"))).toHaveLength(1);
    expect(lines.every((l) => l.startsWith("SKIPPED ") && !l.includes("\n"))).toBe(true);
  });

  it("vitest's default output says it once when a browser test file skips (PATH without chromium)", () => {
    const empty = pathDir("vitest-path", {});
    const r = spawnSync(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "test/dashboard/cross-origin.test.ts"], {
      encoding: "utf8",
      env: { ...process.env, PATH: empty, FORCE_COLOR: "0", NO_COLOR: "1", BODYLINK_CHROMIUM: "" },
      timeout: 300_000,
    });
    const out = r.stdout + r.stderr;
    expect(r.status, out).toBe(0);
    const lines = out.split("\n").filter((l) => /chromium/.test(l));
    expect(lines, out).toEqual(["bodylink tests: SKIPPED the browser tests (test/dashboard/): Debian package chromium is not installed (apt-get install chromium)"]);
    expect(out).toMatch(/cross-origin\.test\.ts.*skipped/);
  }, 300_000);
});
