/**
 * Shared code chooses per body from registry-typed tables, never by comparing with a body-kind
 * literal (`m.body === "nao"`, `case "p7":`): such a comparison compiles for a new body and then
 * silently does nothing for it (docs/architecture.md, "Adding a body"). This test parses every
 * file of `src/` and `web/` with the TypeScript compiler and counts the comparisons: `===`, `!==`,
 * `==`, `!=` with a body-kind string literal on either side, and `case` clauses of one. A body's
 * own files (a folder or a file named for it, and its protocol's folders) may compare; shared
 * files have a budget (at most 6 in all, the recorder none), and the list is exact so a new one
 * is seen in review rather than absorbed by the budget.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { BODY_KINDS } from "../../src/bodies/registry.js";

const ROOT = join(import.meta.dirname, "..", "..");
const KINDS = new Set<string>(BODY_KINDS);

/** Folders that belong to one body though they are not named for it: its protocols (LoLA and the chest board are the NAO's, tny the TNY-360's). */
const PROTOCOL_FOLDERS: ReadonlySet<string> = new Set(["src/wire/lola", "src/serve/lola", "src/wire/chestboard", "src/wire/tny", "src/serve/tny", "src/client/tny"]);

/** The shared comparisons there are (path:line  text); at most 6 in all, none in src/record/. */
const ALLOWED: readonly string[] = [];

function files(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) files(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** A file that is one body's own: under a folder named for a body or one of its protocols, or named `<body>.ts` / `<body>-….ts`. */
function isBodyOwn(path: string): boolean {
  const parts = path.split("/");
  const base = parts.at(-1)!.replace(/\.ts$/, "");
  if (parts.slice(0, -1).some((p) => KINDS.has(p))) return true;
  if ([...PROTOCOL_FOLDERS].some((f) => path.startsWith(`${f}/`))) return true;
  return KINDS.has(base) || [...KINDS].some((k) => base.startsWith(`${k}-`));
}

const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken]);
const isKindLiteral = (n: ts.Node): boolean => (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && KINDS.has(n.text);

/** Every comparison with a body-kind literal in `source` ("line  text"). */
function kindComparisons(path: string, source: string): string[] {
  const sf = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node) => `${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}  ${n.getText(sf)}`;
  const visit = (n: ts.Node): void => {
    if (ts.isBinaryExpression(n) && EQUALITY.has(n.operatorToken.kind) && (isKindLiteral(n.left) || isKindLiteral(n.right))) out.push(at(n));
    if (ts.isCaseClause(n) && isKindLiteral(n.expression)) out.push(at(n).replace(/:[\s\S]*$/, ":"));
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("comparisons with a body-kind literal", () => {
  it("the counter finds each form and only those", () => {
    const src = [
      'if (m.body === "nao") f();', // 1
      'if ("p7" !== kind) f();', // 2
      "if (k == `tny360`) f();", // 3
      'switch (k) { case "nao": break; case "other": break; }', // 4
      'const t = { nao: 1 }; const s = "nao"; g("p7"); if (x === "naoX") f();', // none of these compare with a body kind
    ].join("\n");
    expect(kindComparisons("x.ts", src)).toEqual(['1  m.body === "nao"', '2  "p7" !== kind', "3  k == `tny360`", '4  case "nao":']);
  });

  it("knows a body's own files from shared ones", () => {
    for (const p of ["src/bodies/nao/joints.ts", "src/runtime/p7-robot.ts", "web/bodies/tny360.ts", "web/bodies/nao-panel.ts", "src/serve/lola/server.ts", "src/rt/tny360-worker.ts"])
      expect(isBodyOwn(p), p).toBe(true);
    for (const p of ["web/main.ts", "web/teleop.ts", "src/record/recorder.ts", "src/cli/serve.ts", "src/client/index.ts", "web/bodies/index.ts", "src/bodies/parts.ts"])
      expect(isBodyOwn(p), p).toBe(false);
  });

  it("shared code in src/ and web/ compares at most 6 times, the recorder never, and exactly where listed", () => {
    const shared: string[] = [];
    for (const f of [...files(join(ROOT, "src")), ...files(join(ROOT, "web"))]) {
      const path = relative(ROOT, f).split(sep).join("/");
      const found = kindComparisons(path, readFileSync(f, "utf8"));
      if (!isBodyOwn(path)) shared.push(...found.map((c) => `${path}:${c}`));
    }
    expect(shared).toEqual(ALLOWED);
    expect(shared.length).toBeLessThanOrEqual(6);
    expect(shared.filter((c) => c.startsWith("src/record/"))).toEqual([]);
  });
});
