/**
 * What bin/build.js makes of TypeBox (issue 24, item 10): its ES build is some 700 modules, and
 * `serve` loaded them on every start, in the main thread and again in the core's (0.5 s and more
 * of each start). dist/ carries it bundled (dist/vendor/typebox/, one module per subpath), every
 * compiled import points there, and the API validates with it exactly as the type provider's
 * validator does with the package.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { TypeBoxValidatorCompiler } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { describe, expect, it } from "vitest";

const DIST = join(import.meta.dirname, "..", "dist");

function distModules(dir = DIST): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === "vendor" && dir === DIST ? [] : distModules(join(dir, e.name))) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );
}

describe("TypeBox in dist/", () => {
  it("every compiled module imports TypeBox from the bundle, none from the package or the type provider", () => {
    const modules = distModules();
    expect(modules.length).toBeGreaterThan(100);
    const bare = /\b(?:from\s*|import\s*\(\s*)"(typebox(?:\/[a-z]+)?|@fastify\/type-provider-typebox)"/;
    expect(modules.filter((f) => bare.test(readFileSync(f, "utf8"))).map((f) => f.slice(DIST.length + 1))).toEqual([]);
    const vendored = modules.filter((f) => /from "(?:\.\.?\/)+vendor\/typebox\/\w+\.js"/.test(readFileSync(f, "utf8")));
    expect(vendored.map((f) => f.slice(DIST.length + 1))).toEqual(expect.arrayContaining(["serve/api/schemas.js", "serve/api/validator.js", "fleet/bridge.js"]));
    // and every bundled module they name is there (an incremental build, which re-emits only what
    // changed, once made the bundle from the re-emitted modules' imports alone and lost the rest)
    for (const f of vendored)
      for (const m of readFileSync(f, "utf8").matchAll(/from "((?:\.\.?\/)+vendor\/typebox\/\w+\.js)"/g))
        expect(existsSync(join(dirname(f), m[1]!)), `${f.slice(DIST.length + 1)}: ${m[1]}`).toBe(true);
  });

  it("`serve` from dist/ loads none of the package's modules, in either thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bodylink-build-"));
    const list = join(dir, "loaded.txt");
    const child = spawn(process.execPath, ["--import", "./test/support/loaded-modules.mjs", "bin/bodylink.js", "serve", "--api-port", "0", "--lola-path", join(dir, "robocup")], {
      env: { ...process.env, BODYLINK_RUNTIME_DIR: dir, BODYLINK_TEST_LOADED_MODULES: list },
    });
    try {
      let out = "";
      child.stdout.on("data", (d) => {
        out += String(d);
      });
      const exited = new Promise((r) => child.once("exit", r));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", () => /Ctrl-C to stop/.test(out) && resolve());
        child.once("exit", () => reject(new Error(`serve exited: ${out}`)));
      });
      child.kill("SIGINT");
      await exited;
      const loaded = readFileSync(list, "utf8").split("\n");
      expect(loaded.filter((u) => u.includes("/node_modules/typebox/"))).toEqual([]);
      // the main thread and the core's each load the bundle (its modules: index, compile, value, chunks)
      expect(loaded.filter((u) => u.endsWith("/dist/vendor/typebox/index.js")).length).toBe(2);
      expect(loaded.filter((u) => u.includes("/dist/vendor/typebox/")).length).toBeLessThan(20);
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("the API's validator (the bundle) answers as the type provider's (the package), converting all but bodies", async () => {
    const { validatorCompiler } = (await import(join(DIST, "serve/api/validator.js"))) as typeof import("../src/serve/api/validator.js");
    const schema = Type.Object({ count: Type.Integer({ minimum: 1 }), name: Type.Optional(Type.String({ maxLength: 4 })), on: Type.Optional(Type.Boolean()) });
    const inputs: unknown[] = [{ count: 3 }, { count: "3" }, { count: "3", on: "true" }, { count: 0 }, { count: 2, name: "toolong" }, { name: "ok" }, "text", null];
    for (const httpPart of ["body", "querystring", "params", "headers"]) {
      const ours = validatorCompiler({ schema, httpPart, method: "POST", url: "/x" });
      const theirs = TypeBoxValidatorCompiler({ schema, httpPart, method: "POST", url: "/x" });
      for (const input of inputs) {
        const [a, b] = [ours(structuredClone(input)), theirs(structuredClone(input))] as Array<{ value?: unknown; error?: Iterable<unknown> }>;
        const why = `${httpPart} ${JSON.stringify(input)}`;
        expect("error" in a, why).toBe("error" in b);
        if (a.error) expect([...a.error], why).toEqual([...b.error!]);
        else expect(a.value, why).toEqual(b.value);
      }
    }
  });
});
