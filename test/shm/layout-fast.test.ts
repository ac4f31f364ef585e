/**
 * Every shared-memory layout's views (src/shm/layout.ts buildViews) are an object V8 keeps in fast
 * mode: the core reads them every cycle (`views.position`, …), and an object that fell into
 * dictionary mode (past ~16 properties added by computed name) made each such read a hash lookup
 * in an IC stub (perf: ~1 % of the NAO core's thread in `publish` alone). V8's own predicate
 * (%HasFastProperties) is only reachable with --allow-natives-syntax: a child node asks it.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("buildViews", () => {
  it("gives every layout table an object with fast properties, the 23-field NAO state included", () => {
    const script = `
      const { buildViews, layoutBytes } = await import(${JSON.stringify(`${ROOT}dist/shm/layout.js`)});
      const tables = {
        ...(await import(${JSON.stringify(`${ROOT}dist/bodies/nao/layout.js`)})),
        ...(await import(${JSON.stringify(`${ROOT}dist/bodies/p7/layout.js`)})),
        ...(await import(${JSON.stringify(`${ROOT}dist/bodies/tny360/layout.js`)})),
        ...(await import(${JSON.stringify(`${ROOT}dist/shm/control-layout.js`)})),
      };
      const out = {};
      for (const [name, layout] of Object.entries(tables)) {
        if (!name.endsWith("_LAYOUT") || !Array.isArray(layout)) continue;
        const v = buildViews(layout, new SharedArrayBuffer(layoutBytes(layout)), 0);
        out[name] = { fields: layout.length, fast: %HasFastProperties(v) };
      }
      console.log(JSON.stringify(out));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script], { encoding: "utf8" })) as Record<string, { fields: number; fast: boolean }>;
    expect(out.NAO_STATE_LAYOUT?.fields).toBeGreaterThan(16);
    const slow = Object.entries(out).filter(([, r]) => !r.fast);
    expect(slow).toEqual([]);
    expect(Object.keys(out).length).toBeGreaterThanOrEqual(8);
  });
});
