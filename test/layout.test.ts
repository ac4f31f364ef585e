import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** Every relative import of every .ts file under `dir`, as a path from src/ ("wire/bytes.ts"). */
function imports(dir: string, opts: { values?: boolean } = {}): Array<{ file: string; target: string }> {
  const out: Array<{ file: string; target: string }> = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".ts")) {
        for (const m of readFileSync(p, "utf8").matchAll(/(?:^|\n)\s*((?:import|export)[^;]*?)from\s+"([^"]+)"/g)) {
          // values only: `import type` / `export type` carry no code across the boundary
          if (opts.values && /^(?:import|export)\s+type\b/.test(m[1]!)) continue;
          const spec = m[2]!;
          const target = spec.startsWith(".") ? relative("src", resolve(d, spec)).replace(/\.js$/, ".ts") : spec;
          out.push({ file: relative("src", p), target });
        }
      }
    }
  };
  walk(join("src", dir));
  return out;
}

describe("the layout shows the architecture (docs/architecture.md)", () => {
  it("wire/ imports only wire/ and browser-safe packages: pure codecs, no Node built-ins", () => {
    const browserSafe = new Set(["msgpackr"]); // LoLA's streaming command decoder (pure-JS fallback)
    expect(imports("wire").filter((i) => !i.target.startsWith("wire/") && !browserSafe.has(i.target))).toEqual([]);
  });
  it("bodies/ imports only bodies/ and wire/", () => {
    expect(imports("bodies").filter((i) => !/^(bodies|wire)\//.test(i.target))).toEqual([]);
  });
  it("client/ (browser SDK) imports only client/, wire/, bodies/ tables and the error table, never node:", () => {
    expect(imports("client").filter((i) => !/^(client|wire|bodies)\//.test(i.target) && i.target !== "errors.ts")).toEqual([]);
  });
  it("runtime/ and sim/ never import the servers or the CLI", () => {
    expect([...imports("runtime"), ...imports("sim"), ...imports("transport")].filter((i) => /^(serve|cli)\//.test(i.target))).toEqual([]);
  });
  it("drivers/ (the body seam) never reach up: no servers, host, real-time wrapper or CLI", () => {
    expect(imports("drivers").filter((i) => /^(serve|host|rt|cli)\//.test(i.target))).toEqual([]);
  });
  it("rt/ (the real-time thread) never imports the host, the robot API or the CLI", () => {
    expect(imports("rt").filter((i) => /^(host|serve\/api|cli)\//.test(i.target))).toEqual([]);
  });
  it("shm/ (what crosses threads) is data: only shm/ and bodies/ tables", () => {
    expect(imports("shm").filter((i) => !/^(shm|bodies)\//.test(i.target))).toEqual([]);
  });
  it("host/ (main thread) runs no driver, simulator or transport code: it only talks to the core", () => {
    expect(imports("host", { values: true }).filter((i) => /^(drivers|sim|transport)\//.test(i.target))).toEqual([]);
  });
  it("the robot API runs no real-time code: no rt/, drivers/, sim/ or transport/ values", () => {
    expect(imports("serve/api", { values: true }).filter((i) => /^(rt|drivers|sim|transport)\//.test(i.target))).toEqual([]);
  });
  it("runtime objects reach their body only through drivers/ (no transport/ or sim/ values in the robots)", () => {
    const robots = imports("runtime", { values: true }).filter((i) => /runtime\/(nao|p7|tny360)-robot\.ts$/.test(i.file));
    expect(robots.filter((i) => /^(transport|sim)\//.test(i.target))).toEqual([]);
  });
});
