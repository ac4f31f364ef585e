/**
 * Housekeeping a maintainer trips over. Comments point a reader at what the repository holds
 * (docs/, the code), never at the issue tracker, the project's seeds or a folder outside the
 * repository, which a reader does not have. Names every body shares are defined once, and every
 * error code in the table is raised somewhere.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOTS = ["src", "bench", "web", "bin"];
const OUTSIDE = /\bissue [0-9]|\bseed 00[0-9]|shared\/reference|\/shared\//;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|js)$/.test(n) ? [p] : [];
  });
}

describe("source comments", () => {
  it("point at docs/ and the code, not at issues, seeds or files outside the repository", () => {
    const found: string[] = [];
    for (const root of ROOTS) {
      for (const f of files(root)) {
        readFileSync(f, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (OUTSIDE.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(found).toEqual([]);
  });
});

describe("shared names", () => {
  const sources = ["src", "web", "bench", "bin"].flatMap(files).map((f) => ({ f, text: readFileSync(f, "utf8") }));
  const where = (re: RegExp) => sources.filter(({ text }) => re.test(text)).map(({ f }) => f);

  it("LinkStatus, BodyKind and the lease header are defined once; nothing spells their values out again", () => {
    expect(where(/^export type LinkStatus\b/m)).toEqual(["src/bodies/link.ts"]);
    expect(where(/^export type BodyKind\b/m)).toEqual(["src/bodies/registry.ts"]);
    expect(where(/["']x-bodylink-lease["']/)).toEqual(["src/bodies/link.ts"]);
    // A union or list of the link words or body kinds written out (the API's TypeBox schemas are
    // checked against the types in test/client/messages-types.test.ts instead).
    expect(where(/"starting"\s*\|\s*"ok"|"ok"\s*\|\s*"degraded"/)).toEqual([]);
    expect(where(/"nao"\s*\|\s*"p7"|"p7"\s*\|\s*"tny360"/)).toEqual([]);
  });
  it("every error code in src/errors.ts is raised somewhere in the code", () => {
    const table = readFileSync("src/errors.ts", "utf8");
    const codes = [...table.matchAll(/^\s+(BL_ERR_[A-Z_]+):/gm)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(40);
    const rest = sources
      .filter(({ f }) => f !== "src/errors.ts")
      .map(({ text }) => text)
      .join("\n");
    expect(codes.filter((c) => !rest.includes(c))).toEqual([]);
  });
});
