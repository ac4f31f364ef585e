/**
 * Adding a body, proven: the tree, read with one more registry entry (a fake `hexapod`) and no
 * other change, and the compiler (src and test with the project's tsconfig, web with its own) must
 * refuse exactly the registry-typed tables a body registers in, each in its file. That list is
 * `REGISTER_IN`, and docs/architecture.md's "Adding a body" names every one of them. A shared file
 * that chose bodies by comparing kinds would compile here and is therefore not in the list: it is
 * what this test keeps out. The files a body adds (the table's "Add" column) exist for every
 * body of the registry, under the same names.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { BODY_KINDS } from "../../src/bodies/registry.js";

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

/**
 * The files tsc reports errors in (paths relative to the tree) for each project, as `tsc -p PROJECT
 * --noEmit` reports them, over the tree with `edited` (absolute path → text) in place of those files
 * on disk. In this process, the projects one after the other, sharing their parsed files (the
 * libraries and the sources both read): what a language service's document registry shares between
 * programs (the two projects differ in `types` and `include`, not in how a file parses or binds).
 * Two `tsc` processes over a copy of the tree took ~1.4x as long.
 */
function errorFiles(projects: string[], edited: Map<string, string>): string[] {
  const parsed = new Map<string, ts.SourceFile | undefined>();
  const files = new Set<string>();
  for (const project of projects) {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, project),
      { noEmit: true },
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(`${project}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
        },
      },
    )!;
    expect(config.errors, project).toEqual([]);
    const host = ts.createCompilerHost(config.options);
    const fromDisk = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, version, onError, create) => {
      const key = `${fileName}\0${typeof version === "object" ? `${version.languageVersion}/${version.impliedNodeFormat}` : version}`;
      if (!parsed.has(key)) {
        const text = edited.get(fileName);
        parsed.set(key, text === undefined ? fromDisk(fileName, version, onError, create) : ts.createSourceFile(fileName, text, version));
      }
      return parsed.get(key);
    };
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, host, configFileParsingDiagnostics: config.errors });
    // What `tsc --noEmit` reports (syntax and types) in the files that import an edited file, directly or
    // through others: no other file's diagnostics can change with it, and the unedited tree has none
    // (`npm run lint`). This test: 10.4 s checking those, 12.9 s checking every file (alone, quiet).
    const checked = importersOf(program, [...edited.keys()], config.options);
    for (const sf of program.getSourceFiles()) {
      if (!checked.has(sf.fileName)) continue;
      for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
        // TS2307: a module the tree lacks (the built dist/ some tests read, when it is not built), not a body's table
        if (d.file && d.code !== 2307) files.add(relative(ROOT, d.file.fileName));
      }
    }
  }
  return [...files];
}

/**
 * The files of `program` that import one of `targets` (absolute paths), directly or through
 * others, with the targets: every import TypeScript resolves (static, type-only, re-exports,
 * `import()` calls and types; `ts.preProcessFile` lists them). An edited file that declares
 * globals or augments a module would reach files that do not import it: refused.
 */
function importersOf(program: ts.Program, targets: string[], options: ts.CompilerOptions): Set<string> {
  const importedBy = new Map<string, string[]>();
  const cache = ts.createModuleResolutionCache(ROOT, (f) => f, options);
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile) continue;
    for (const { fileName: spec } of ts.preProcessFile(sf.text, true, true).importedFiles) {
      const to = ts.resolveModuleName(spec, sf.fileName, options, ts.sys, cache).resolvedModule?.resolvedFileName;
      if (to === undefined) continue;
      const list = importedBy.get(to) ?? [];
      list.push(sf.fileName);
      importedBy.set(to, list);
    }
  }
  const found = new Set<string>();
  const queue: string[] = [];
  for (const t of targets) {
    const sf = program.getSourceFile(t);
    expect(sf, `${t} is in the program`).toBeDefined();
    expect(/\bdeclare\s+(global|module)\b/.test(sf!.text), `${t} declares no globals and augments no module`).toBe(false);
    found.add(sf!.fileName);
    queue.push(sf!.fileName);
  }
  for (let f = queue.pop(); f !== undefined; f = queue.pop()) {
    for (const by of importedBy.get(f) ?? []) {
      if (found.has(by)) continue;
      found.add(by);
      queue.push(by);
    }
  }
  return found;
}

describe("a fake body in the registry", () => {
  it("fails to compile in exactly the registry-typed tables of the 'Adding a body' table, and nowhere else", () => {
    const registry = join(ROOT, "src", "bodies", "registry.ts");
    const text = readFileSync(registry, "utf8");
    expect(text).toContain("} as const;");
    const files = errorFiles(["tsconfig.json", join("web", "tsconfig.json")], new Map([[registry, text.replace("} as const;", FAKE)]]));
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
