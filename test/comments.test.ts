/**
 * Comments point a reader at what the repository holds (docs/, the code), never at the issue
 * tracker, the project's seeds or a folder outside the repository, which a reader does not have.
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
