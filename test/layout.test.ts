import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BODY_KINDS } from "../src/bodies/registry.js";

interface Import {
  /** The importing file, from src/ ("wire/bytes.ts"; the dashboard's are "../web/main.ts"). */
  readonly file: string;
  /** A relative import as a path from src/ ("wire/bytes.ts"), else the package specifier. */
  readonly target: string;
  readonly typeOnly: boolean;
  readonly relative: boolean;
}

/** Every import of every .ts file under `root` (a folder or one file, from the repository root). */
function allImports(root: string): Import[] {
  const out: Import[] = [];
  const scan = (p: string) => {
    for (const m of readFileSync(p, "utf8").matchAll(/(?:^|\n)\s*((?:import|export)[^;]*?)from\s+"([^"]+)"/g)) {
      const spec = m[2]!;
      const rel = spec.startsWith(".");
      const target = rel ? relative("src", resolve(p, "..", spec)).replace(/\.js$/, ".ts") : spec;
      // `import type` / `export type` carry no code across the boundary
      out.push({ file: relative("src", p), target, typeOnly: /^(?:import|export)\s+type\b/.test(m[1]!), relative: rel });
    }
  };
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".ts")) scan(p);
    }
  };
  if (statSync(root).isDirectory()) walk(root);
  else scan(root);
  return out;
}

/** Every relative import of every .ts file under src/`dir`, as a path from src/ ("wire/bytes.ts"). */
function imports(dir: string, opts: { values?: boolean } = {}): Array<{ file: string; target: string }> {
  return allImports(join("src", dir))
    .filter((i) => i.relative || !i.target.startsWith("."))
    .filter((i) => !(opts.values && i.typeOnly))
    .map(({ file, target }) => ({ file, target }));
}

/** One row of docs/architecture.md's layout table, as a rule. */
interface LayoutRule {
  /** The row's folders/files, from the repository root ("src/wire/", "src/errors.ts", "web/"). */
  readonly roots: readonly string[];
  readonly anything: boolean;
  /** Paths from src/ ("wire/", "rt/lifecycle.ts") the row's code may import values from. */
  readonly values: readonly string[];
  /** Paths from src/ it may import types only from. */
  readonly types: readonly string[];
  /** Paths named after "never" (documentation; they must not also be allowed). */
  readonly never: readonly string[];
  /** null: any package; else only these packages (and no Node built-ins). */
  readonly packages: readonly string[] | null;
}

/** Parse the "## Layout" table of docs/architecture.md. */
function layoutRules(): LayoutRule[] {
  const doc = readFileSync("docs/architecture.md", "utf8");
  const section = doc.slice(doc.indexOf("## Layout"), doc.indexOf("\n## ", doc.indexOf("## Layout") + 1));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  return rows.map((row) => {
    const cells = row.split(" | ");
    const first = cells[0]!.replace(/^\| /, "");
    const last = cells[cells.length - 1]!.replace(/ \|$/, "");
    const roots = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const [allowed, forbidden = ""] = last.split(/\bnever\b/);
    const values: string[] = [];
    const types: string[] = [];
    const packages: string[] = [];
    for (const m of allowed!.matchAll(/`([^`]+)`( types\b)?/g)) {
      const t = m[1]!;
      if (t.endsWith("/") || t.endsWith(".ts")) (m[2] ? types : values).push(t);
      else packages.push(t);
    }
    const never = [...forbidden.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    return {
      roots,
      anything: /^anything\b/.test(allowed!.trim()),
      values,
      types,
      never,
      packages: packages.length > 0 || /\bno packages\b/.test(allowed!) || /^nothing\b/.test(allowed!.trim()) ? packages : null,
    };
  });
}

/** A path from src/ is covered by an entry ("wire/" covers wire/bytes.ts; "rt/lifecycle.ts" itself). */
const covers = (entry: string, target: string) => (entry.endsWith("/") ? target.startsWith(entry) : target === entry);
const fromSrc = (root: string) => relative("src", root) + (root.endsWith("/") ? "/" : "");
const packageName = (spec: string) => (spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);

describe("every row of docs/architecture.md's layout table is enforced", () => {
  const rules = layoutRules();

  it("the table has a row for every folder and file of src/, and every row names something that exists", () => {
    const named = new Set(rules.flatMap((r) => r.roots));
    const entries = readdirSync("src").map((n) => (statSync(join("src", n)).isDirectory() ? `src/${n}/` : `src/${n}`));
    expect(entries.filter((e) => !named.has(e))).toEqual([]);
    expect([...named].filter((r) => !existsSync(r))).toEqual([]);
    expect(rules.length).toBeGreaterThanOrEqual(entries.length - 2); // grouped rows name several
  });

  it.each(layoutRules().map((r) => [r.roots.join(", "), r] as const))("%s imports only what its row allows", (_name, rule) => {
    if (rule.anything) return;
    // A row's own folders, and the error table, are always allowed.
    const own = rule.roots.map(fromSrc);
    expect(rule.never.filter((n) => rule.values.includes(n) || rule.types.includes(n))).toEqual([]);
    const bad: string[] = [];
    for (const root of rule.roots) {
      for (const i of allImports(root)) {
        if (!i.relative) {
          if (rule.packages !== null && !rule.packages.includes(packageName(i.target))) bad.push(`${i.file} imports the package ${i.target}`);
          continue;
        }
        if (i.target === "errors.ts" || own.some((o) => covers(o, i.target))) continue;
        if (rule.values.some((v) => covers(v, i.target))) continue;
        if (i.typeOnly && rule.types.some((t) => covers(t, i.target))) continue;
        bad.push(`${i.file} imports ${i.typeOnly ? "types from " : ""}${i.target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the parser reads the rows as written (a rule that parsed to nothing would enforce nothing)", () => {
    const byRoot = new Map(rules.flatMap((r) => r.roots.map((root) => [root, r] as const)));
    expect(byRoot.get("src/wire/")).toMatchObject({ values: [], packages: ["msgpackr"] });
    expect(byRoot.get("src/bodies/")).toMatchObject({ values: ["wire/"], packages: [] });
    expect(byRoot.get("src/drivers/")?.types).toEqual(["runtime/", "client/"]);
    expect(byRoot.get("src/drivers/")?.never).toEqual(["serve/", "host/", "rt/", "cli/"]);
    expect(byRoot.get("src/errors.ts")).toMatchObject({ values: [], packages: [] });
    expect(byRoot.get("src/cli/")?.anything).toBe(true);
    expect(byRoot.get("src/replay/")).toBe(byRoot.get("src/record/"));
  });
});

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
  it("every body has a threaded core: a layout table, a state channel, a worker entry and a host", () => {
    const missing = BODY_KINDS.flatMap((k) => [`bodies/${k}/layout.ts`, `shm/${k}-state.ts`, `rt/${k}-worker.ts`, `host/${k}-host.ts`]).filter((f) => {
      try {
        return !statSync(join("src", f)).isFile();
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });
  it("every worker entry runs the one shared runner (rt/core-worker.ts), every host extends the one CoreHost", () => {
    const rt = imports("rt", { values: true });
    const host = imports("host", { values: true });
    const entries = BODY_KINDS.map((k) => `rt/${k}-worker.ts`);
    const hosts = BODY_KINDS.map((k) => `host/${k}-host.ts`);
    expect(entries.filter((f) => !rt.some((i) => i.file === f && i.target === "rt/core-worker.ts"))).toEqual([]);
    expect(hosts.filter((f) => !host.some((i) => i.file === f && i.target === "host/core-host.ts"))).toEqual([]);
  });
  it("host/ takes from rt/ only the shared buffer's layout (rt/core-shm.ts) and no runtime robot: the body's code loads in the worker only", () => {
    const host = imports("host", { values: true });
    expect(host.filter((i) => (i.target.startsWith("rt/") && i.target !== "rt/core-shm.ts") || /^runtime\/(nao|p7|tny360)-robot\.ts$/.test(i.target))).toEqual([]);
  });
  it("the robot API runs no real-time code: no rt/, drivers/, sim/ or transport/ values", () => {
    expect(imports("serve/api", { values: true }).filter((i) => /^(rt|drivers|sim|transport)\//.test(i.target))).toEqual([]);
  });
  it("runtime objects reach their body only through drivers/ (no transport/ or sim/ values in the robots)", () => {
    const robots = imports("runtime", { values: true }).filter((i) => /runtime\/(nao|p7|tny360)-robot\.ts$/.test(i.file));
    expect(robots.filter((i) => /^(transport|sim)\//.test(i.target))).toEqual([]);
  });
});
