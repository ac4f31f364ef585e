/**
 * The reused update's arrays (LolaCommandReader with reuseUpdate, what the LoLA server on the core's
 * thread uses) are packed double arrays. `new Array(n).fill(x)` made them holey: an element of a
 * holey double array may be the hole, so the optimised applyCommandUpdate boxed every number it read
 * (~200 bytes a command, the largest allocation of the `--lola-upstream` proxy's cycle). V8's own
 * predicate (%HasHoleyElements) is only reachable with --allow-natives-syntax: a child node asks it,
 * and counts what a decoded-and-applied command allocates once optimised.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("LolaCommandReader (reuseUpdate)", () => {
  it("hands out packed arrays, so a full command decoded and applied allocates (almost) nothing", () => {
    const script = `
      const { LolaCommandReader } = await import(${JSON.stringify(`${ROOT}dist/wire/lola/command-reader.js`)});
      const { LolaCommandWriter } = await import(${JSON.stringify(`${ROOT}dist/wire/lola/command-message.js`)});
      const { applyCommandUpdate, NaoCommands } = await import(${JSON.stringify(`${ROOT}dist/bodies/nao/commands.js`)});
      const bytes = new LolaCommandWriter().setFloats("Stiffness", new Float32Array(25).fill(0.5)).bytes;
      const r = new LolaCommandReader({ reuseUpdate: true });
      const into = new NaoCommands();
      let u = null;
      const on = (x) => { u = x; };
      const one = () => { r.push(bytes, on); applyCommandUpdate(into, u); };
      for (let i = 0; i < 100000; i++) one();
      const holey = Object.entries(u).filter(([, a]) => a !== undefined && %HasHoleyElements(a)).map(([k]) => k);
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 20000; i++) one();
      const perCommand = (process.memoryUsage().heapUsed - before) / 20000;
      console.log(JSON.stringify({ keys: Object.keys(u).length, holey, perCommand }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--allow-natives-syntax", "--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" })) as {
      keys: number;
      holey: string[];
      perCommand: number;
    };
    expect(out.keys).toBe(11);
    expect(out.holey).toEqual([]);
    // Measured 0–6 bytes a command packed, ~200 holey.
    expect(out.perCommand).toBeLessThan(48);
  });
});
