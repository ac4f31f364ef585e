/**
 * Adding a body, proven: a copy of the tree gets one more registry entry (a fake `hexapod`) and no
 * other change, and the compiler (src and test with the project's tsconfig, web with its own) must
 * refuse exactly the registry-typed tables a body registers in, each in its file. That list is
 * `REGISTER_IN`, and docs/architecture.md's "Adding a body" names every one of them. A shared file
 * that chose bodies by comparing kinds would compile here and is therefore not in the list: it is
 * what this test keeps out. The files a body adds (the table's "Add" column) exist for every
 * body of the registry, under the same names.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { BODY_KINDS } from "../../src/bodies/registry.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");

/** The files that fail to compile until a new body has its entry (its registration points). */
const REGISTER_IN = [
  "src/bodies/parts.ts",
  "src/cli/bodies/index.ts",
  "src/client/facets/index.ts",
  "src/client/index.ts",
  "src/client/snapshots.ts",
  "src/export/lerobot.ts",
  "src/record/bodies.ts",
  "src/record/channels.ts",
  "src/record/viewer-3d.ts",
  "src/serve/api/bodies/index.ts",
  "src/serve/api/build.ts",
  "src/serve/api/routes/context.ts",
  "examples/any-body.ts",
  "test/api/sdk-facets.types.ts",
  "test/api/threaded.test.ts",
  "test/bodies/registry.test.ts",
  "test/record/viewer-3d.test.ts",
  "test/rt/isolation.test.ts",
  "test/rt/lifecycle.test.ts",
  "web/bodies/index.ts",
  "web/scene.ts",
];

const FAKE = `  hexapod: { title: "Hexapod", periodMs: 10, description: "a fake body (test/bodies/fake-body.test.ts)", safeStop: "legs hold" },\n} as const;`;

/** The files tsc reports errors in (paths relative to the copy). */
async function errorFiles(dir: string, project: string): Promise<string[]> {
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const out = await run(process.execPath, [tsc, "-p", project, "--noEmit", "--pretty", "false"], { cwd: dir, maxBuffer: 1 << 24 }).then(
    (r) => r.stdout,
    (e: { stdout?: string }) => e.stdout ?? "",
  );
  // TS2307: a module the copy lacks (the built dist/ some tests read), not a body's table
  return [...new Set([...out.matchAll(/^([\w./-]+\.ts)\(\d+,\d+\): error (TS\d+)/gm)].filter((m) => m[2] !== "TS2307").map((m) => m[1]!))];
}

describe("a fake body in the registry", () => {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-fake-body-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("fails to compile in exactly the registry-typed tables of the 'Adding a body' table, and nowhere else", async () => {
    for (const d of ["src", "test", "web", "bench", "examples", "bin"]) cpSync(join(ROOT, d), join(dir, d), { recursive: true });
    for (const f of ["tsconfig.json", "package.json"]) cpSync(join(ROOT, f), join(dir, f));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    const registry = join(dir, "src", "bodies", "registry.ts");
    const text = readFileSync(registry, "utf8");
    expect(text).toContain("} as const;");
    writeFileSync(registry, text.replace("} as const;", FAKE));

    const files = [...(await errorFiles(dir, "tsconfig.json")), ...(await errorFiles(dir, join("web", "tsconfig.json")))];
    expect([...new Set(files)].sort()).toEqual([...REGISTER_IN].sort());

    const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Adding a body"), doc.indexOf("\n## ", doc.indexOf("## Adding a body") + 3));
    for (const f of REGISTER_IN) expect(section, `docs' "Adding a body" names ${f}`).toContain(f);
  }, 300_000);
});

describe("the files a body adds", () => {
  it("every path the 'Adding a body' table names for `hexapod` exists for each registry body", () => {
    const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Adding a body"), doc.indexOf("\n## ", doc.indexOf("## Adding a body") + 3));
    const paths = [...new Set([...section.matchAll(/`((?:src|web)\/[\w./-]*hexapod[\w./-]*)`/g)].map((m) => m[1]!))];
    // the folders and files of every layer, the dashboard's entry, panel and controls among them
    expect(paths).toEqual(
      expect.arrayContaining(["src/drivers/hexapod/", "src/serve/api/bodies/hexapod.ts", "web/bodies/hexapod.ts", "web/bodies/hexapod-panel.ts", "web/bodies/hexapod-controls.ts"]),
    );
    for (const kind of BODY_KINDS) for (const p of paths) expect(existsSync(join(ROOT, p.replaceAll("hexapod", kind))), `${kind}: ${p}`).toBe(true);
  });
});
