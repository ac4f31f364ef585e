/**
 * The simulator's behaviour is pinned: a seeded, scripted run (sim-trace.ts) gives the values
 * recorded in golden/sim-trace.json, which were taken from the simulator at commit 8c36215, before
 * its tick was restructured to allocate nothing. Float64 values may differ by rounding only
 * (1e-9), float32 state values by one float32 step.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runSimTrace, type TraceCheckpoint } from "./sim-trace.js";

const golden = JSON.parse(readFileSync(new URL("./golden/sim-trace.json", import.meta.url), "utf8")) as TraceCheckpoint[];

function near(actual: number[], expected: number[], relTol: number, what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!,
      e = expected[i]!;
    if (Number.isNaN(e)) expect(a, `${what}[${i}]`).toBeNaN();
    else expect(Math.abs(a - e), `${what}[${i}]: ${a} vs ${e}`).toBeLessThanOrEqual(1e-9 + relTol * Math.abs(e));
  }
}

describe("TNY-360 simulator: a seeded run matches the recorded trace", () => {
  const trace = runSimTrace();

  it("has the recorded checkpoints", () => {
    expect(trace.map((c) => c.name)).toEqual(golden.map((c) => c.name));
  });

  for (const [i, g] of golden.entries()) {
    it(`checkpoint "${g.name}"`, () => {
      const c = trace[i]!;
      expect(c.exact).toEqual(g.exact);
      near(c.f64, g.f64, 1e-9, "f64");
      near(c.f32, g.f32, 2 ** -23, "f32");
    });
  }
});
