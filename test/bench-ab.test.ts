/**
 * `BL_BENCH_BASELINE=<checkout> npm run bench -- NAME` (bench/ab.ts): both checkouts' benches run
 * interleaved, and every figure is matched by its line's shape and printed as after/before.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { compareOutputs, figuresOf, numbersOf, runAgainstBaseline, shapeOf } from "../bench/ab.js";
import { atLeastByChance, lateVerdict } from "../bench/util.js";

describe("figures in a bench's output", () => {
  it("are the numbers that stand alone, not those inside words or labels' digits of a longer number", () => {
    expect(numbersOf("setVelocity (raw frames)          1          16743   1.03         31   1.14     133  Ok: 6536")).toEqual([1, 16743, 1.03, 31, 1.14, 133, 6536]);
    expect(numbersOf("p99 of 12.5 µs, v8 heap -3 B, 0.87× the echo, 3.60 %.")).toEqual([12.5, -3, 0.87, 3.6]);
    expect(shapeOf("  wall p50 12.3  p99   4 ms")).toBe("wall p50 # p99 # ms");
  });
  it("are keyed by their block, their label and its occurrence (repeated rows stay apart), or by their shape when they start with a number", () => {
    const f = figuresOf("=== x ===\nnao   1.5 ms\np7    2 ms\nrow   3\nrow   4\n  375.2  pushAsyncContext (node:internal/async_hooks:539)\nno numbers here\n\nin-thread, 2 runs\nrow   5\n");
    expect([...f.keys()]).toEqual([
      "=== x === » nao",
      "=== x === » p7 # ms",
      "=== x === » row",
      "=== x === » row [2]",
      "=== x === » # pushAsyncContext (node:internal/async_hooks:#)",
      "in-thread, » in-thread,",
      "in-thread, » row", // another block (after a blank line): not the first block's third row
    ]);
    expect(f.get("=== x === » row [2]")).toEqual({ block: "=== x ===", line: "row   4" });
  });
  it("compare a table row cell by cell: numbers as ratios, a cell whose words changed as after ≠ before", () => {
    const before = ["nao   | 3000.0  1.00 | 1 (1 Scavenge) in 500 cycles\n"];
    const after = ["nao   | 2400.0  1.00 | 0 (none) in 500 cycles\n"];
    expect(compareOutputs(before, after).lines).toEqual(["nao | ×0.80 = | 0 (none) in 500 cycles ≠ 1 (1 Scavenge) in 500 cycles"]);
  });
  it("compare as after/before of their medians; constants print '=', unchanged lines are left out, one-sided lines counted", () => {
    const before = [
      "=== t ===\necho 100 1.00\nserver 80 0.80\nperiod 5 ms\nold row 1\n",
      "=== t ===\necho 100 1.00\nserver 90 0.90\nperiod 5 ms\nold row 2\n",
      "=== t ===\necho 100 1.00\nserver 70 0.70\nperiod 5 ms\nold row 3\n",
    ];
    const after = [
      "=== t ===\necho 100 1.00\nserver 95 0.95\nperiod 5 ms\nnew row 1\n",
      "=== t ===\necho 100 1.00\nserver 99 0.99\nperiod 5 ms\nnew row 1\n",
      "=== t ===\necho 100 1.00\nserver 90 0.90\nperiod 5 ms\nnew row 1\n",
    ];
    const r = compareOutputs(before, after);
    expect(r.lines).toEqual(["[=== t ===]", "server ×1.19 ×1.19"]); // medians 95/80 and 0.95/0.80
    expect(r.onlyBefore).toBe(1);
    expect(r.onlyAfter).toBe(1);
  });
});

describe("running two checkouts", () => {
  const root = mkdtempSync(join(tmpdir(), "bl-bench-ab-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  /** A checkout whose `npm run bench -- NAME` prints `rate <n>` and logs which side ran, in order. */
  const fakeCheckout = (name: string, rate: number, benches: string[]): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, "bench"), { recursive: true });
    mkdirSync(join(dir, "node_modules"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, scripts: { bench: "node bench/fake.mjs" } }));
    writeFileSync(join(dir, "bench", "run.ts"), "");
    for (const b of benches) writeFileSync(join(dir, "bench", `${b}.bench.ts`), "");
    writeFileSync(
      join(dir, "bench", "fake.mjs"),
      `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(join(root, "order"))}, ${JSON.stringify(name)} + " " + process.argv.slice(2).join(" ") + "\\n");\nconsole.log("rate      ${rate}  per s\\nperiod 5 ms");\n`,
    );
    return dir;
  };

  it("interleaves before and after per round, passes the options on, prints both and the ratio per figure", async () => {
    const base = fakeCheckout("base", 100, ["tny"]);
    const here = fakeCheckout("here", 125, ["tny", "api"]);
    appendFileSync(join(root, "order"), "");
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((l: string) => void lines.push(String(l)));
    try {
      await runAgainstBaseline(base, ["tny", "api"], ["--quick"], 3, here);
    } finally {
      log.mockRestore();
    }
    expect(readFileSync(join(root, "order"), "utf8").trim().split("\n")).toEqual([
      "base --quick tny",
      "here --quick tny",
      "here --quick tny",
      "base --quick tny",
      "base --quick tny",
      "here --quick tny",
      "here --quick api", // the baseline has no api bench: this side only
      "here --quick api",
      "here --quick api",
    ]);
    expect(lines).toContain("before| rate      100  per s");
    expect(lines).toContain("after | rate      125  per s");
    expect(lines).toContain("   rate ×1.25 per s");
    expect(lines.some((l) => l.startsWith("   period"))).toBe(false); // the same every time: not a moved figure
    expect(lines).toContain("\n### api: the baseline has no bench/api.bench.ts: this side only");
  }, 60_000);

  it("a run that fails is reported and left out; the others still run and compare (exit code 1 at the end)", async () => {
    const base = fakeCheckout("base2", 100, ["tny", "api"]);
    const here = fakeCheckout("here2", 150, ["tny", "api"]);
    // the baseline's api bench fails every time (as the isolation bench gives up under load)
    writeFileSync(join(base, "bench", "fake.mjs"), `if (process.argv.includes("api")) { console.log("rate 1"); process.exit(3); }\nconsole.log("rate      100  per s");\n`);
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((l: string) => void lines.push(String(l)));
    const saved = process.exitCode;
    try {
      await runAgainstBaseline(base, ["api", "tny"], [], 1, here);
      expect(process.exitCode).toBe(1);
    } finally {
      log.mockRestore();
      process.exitCode = saved;
    }
    expect(lines).toContain("### api, before (round 1): exited with 3; left out of the comparison");
    expect(lines).toContain("   (no successful run on one side)");
    expect(lines).toContain("   rate ×1.50 per s"); // tny still ran and compared
    expect(lines.at(-1)).toBe("runs that failed: api before round 1 (exit 3)");
  }, 60_000);

  it("refuses a baseline that is no checkout, or this checkout itself", async () => {
    await expect(runAgainstBaseline(join(root, "nowhere"), ["tny"], [], 1)).rejects.toThrow(/not a bodylink checkout/);
    await expect(runAgainstBaseline(process.cwd(), ["tny"], [], 1)).rejects.toThrow(/names this checkout/);
  });
});

describe("the physics bench's late-cycle verdict", () => {
  it("meets the budget when neither kind of late cycle is more frequent than the kinematic NAO's in the same window", () => {
    const kin = { late_cycles: 7, late_cycles_own_work: 1 };
    expect(lateVerdict({ late_cycles: 7, late_cycles_own_work: 1 }, kin)).toMatch(/own work 1 vs 1 .*machine 6 vs 6 .*: MET/);
    expect(lateVerdict({ late_cycles: 0, late_cycles_own_work: 0 }, kin)).toMatch(/: MET/);
    expect(lateVerdict({ late_cycles: 7, late_cycles_own_work: 2 }, { late_cycles: 4, late_cycles_own_work: 1 })).toMatch(/p = 0\.50\).*p = 0\.36.*: MET/); // the night's window
    expect(lateVerdict({ late_cycles: 5, late_cycles_own_work: 5 }, { late_cycles: 0, late_cycles_own_work: 0 })).toMatch(/own work 5 vs 0 \(p = 0\.03\).*NOT MET/);
    expect(lateVerdict({ late_cycles: 17, late_cycles_own_work: 1 }, kin)).toMatch(/machine 16 vs 6 .*NOT MET/);
    expect(lateVerdict({ late_cycles: 0, late_cycles_own_work: 0 }, kin, "arm")).toMatch(/^physics late cycles against the kinematic arm's: /);
  });
  it("takes the binomial tail exactly", () => {
    expect(atLeastByChance(0, 5)).toBe(1);
    expect(atLeastByChance(3, 3)).toBeCloseTo(1 / 8, 12);
    expect(atLeastByChance(8, 14)).toBeCloseTo(6476 / 16384, 12); // C(14,8..14) = 3003+2002+1001+364+91+14+1
    expect(atLeastByChance(11, 16)).toBeCloseTo(0.10506, 5);
  });
});
