/**
 * The design docs stay what they say they are: docs/architecture.md is the stable design (no
 * "session N" or "issue N", no benchmark log: its figures live in docs/performance.md, every
 * section of which carries its date), its two walkthroughs name lines that still hold the code
 * they name, and docs/glossary.md names types and classes that exist.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const arch = readFileSync("docs/architecture.md", "utf8");
const perf = readFileSync("docs/performance.md", "utf8");
const glossary = readFileSync("docs/glossary.md", "utf8");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(n) ? [p] : [];
  });
}

describe("docs/architecture.md is the stable design", () => {
  it("has no session or issue words, and points at the glossary and the performance log", () => {
    expect(arch.match(/\b(session|issue)[ -]\d+/gi) ?? []).toEqual([]);
    expect(arch).toContain("(glossary.md)");
    expect(arch).toContain("(performance.md)");
  });

  it("keeps no measurement log: no load averages, no benchmark tables (those are docs/performance.md's)", () => {
    expect(arch.match(/\bat load \d|load average \d|\bload \d+(\.\d+)?[–-]\d/g) ?? []).toEqual([]);
    expect(arch).not.toMatch(/^\s*\| mode \| core CPU/m);
  });

  // After code moved: BODYLINK_FIX_WALKTHROUGH=1 npx vitest run test/docs.test.ts rewrites each
  // step's line to the nearest one that holds its code (a step whose code is gone still fails).
  it("every walkthrough step names a line that holds the code it names", () => {
    const start = arch.indexOf("## Two walkthroughs");
    const end = arch.indexOf("## Where we differ");
    const section = arch.slice(start, end);
    const refs = [...section.replace(/\n\s+/g, " ").matchAll(/`((?:src|web)\/[\w./-]+\.ts):(\d+)` `([^`]+)`/g)];
    expect(refs.length).toBeGreaterThanOrEqual(20);
    const wrong: string[] = [];
    let fixed = section;
    for (const [, file, line, code] of refs) {
      const lines = readFileSync(file!, "utf8").split("\n");
      if (lines[Number(line) - 1]?.includes(code!)) continue;
      const at = lines.flatMap((l, i) => (l.includes(code!) ? [i + 1] : [])).sort((x, y) => Math.abs(x - Number(line)) - Math.abs(y - Number(line)));
      if (at.length > 0 && process.env.BODYLINK_FIX_WALKTHROUGH === "1") {
        fixed = fixed.replace(`\`${file}:${line}\``, `\`${file}:${at[0]}\``);
        continue;
      }
      wrong.push(
        `${file}:${line} does not hold \`${code}\` (${at.length === 0 ? "not in the file any more" : `nearest: line ${at[0]}; BODYLINK_FIX_WALKTHROUGH=1 rewrites it`}): update docs/architecture.md's walkthrough`,
      );
    }
    if (fixed !== section) writeFileSync("docs/architecture.md", arch.slice(0, start) + fixed + arch.slice(end));
    expect(wrong).toEqual([]);
  });
});

describe("docs/performance.md is a dated log", () => {
  it("every section carries the date of its measurements", () => {
    const sections = [...perf.matchAll(/^## (.*)$/gm)].map((m) => m[1]!);
    expect(sections.length).toBeGreaterThanOrEqual(8);
    expect(sections.filter((s) => !/\b20\d\d-\d\d-\d\d\b/.test(s))).toEqual([]);
    expect(perf.match(/\b(session|issue)[ -]\d+/gi) ?? []).toEqual([]);
  });
});

describe("docs/glossary.md", () => {
  it("defines each word once, and the types and classes it names exist in src/", () => {
    const words = [...glossary.matchAll(/^\| \*\*([^*]+)\*\* \|/gm)].map((m) => m[1]!);
    for (const w of ["body", "driver", "link", "transport", "core", "host", "robot", "perform side", "prepare side"]) expect(words).toContain(w);
    expect(new Set(words).size).toBe(words.length);
    const src = sources("src")
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    const names = new Set([...glossary.matchAll(/`([A-Z][A-Za-z0-9]+)`/g)].map((m) => m[1]!));
    expect(names.size).toBeGreaterThan(15);
    expect([...names].filter((n) => !new RegExp(`\\b(class|interface|type|const|function) ${n}\\b`).test(src))).toEqual([]);
    for (const path of glossary.matchAll(/`(src\/[\w./-]+\.ts)`/g)) expect(existsSync(path[1]!), path[1]).toBe(true);
  });
});
