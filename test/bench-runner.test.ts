/** `npm run bench`'s runner (bench/run.ts): a wrong name or flag is one usage line and exit 2, not a silent run of nothing. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const bench = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", ...args], { encoding: "utf8", timeout: 30_000 });

describe("npm run bench", () => {
  it("refuses a name that is no bench's, and an unknown flag, with the list of benches (exit 2)", () => {
    for (const [args, line] of [
      [["nosuch"], "bench: no bench named 'nosuch'"],
      [["--quick", "nosuch"], "bench: no bench named 'nosuch'"],
      [["--bogus"], "bench: unknown option '--bogus'"],
    ] as const) {
      const r = bench(...args);
      expect(r.status).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(line);
      expect(r.stderr).toMatch(/names: .*\bisolation\b.*\bwake\b/);
      expect(r.stdout).not.toContain("===");
    }
  });
  it("--help lists the benches and runs none", () => {
    const r = bench("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npm run bench/);
    expect(r.stdout).toMatch(/names: api, (\w[\w-]*, )*core-gc, .*wake/);
    expect(r.stdout).not.toContain("===");
  });
});
