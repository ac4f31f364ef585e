/**
 * The package as a consumer gets it: `npm pack` makes the tarball that would be published, it is
 * unpacked into a project's node_modules (its dependencies linked from ours), and the project
 * imports the subpath exports with plain `node` (no tsx, no bundler), runs the CLI, and
 * type-checks against the published declarations with strict TypeScript. A wrong `exports` path,
 * a file missing from `files`, a missing build output or a declaration that does not resolve
 * fails here.
 *
 * dist/ is built by `npm ci` (the `prepare` script) and rebuilt if stale by vitest's global setup.
 *
 * No wall-clock bound on the work itself: strict tsc over every published declaration (and those
 * of fastify, pino, NATS, … they import) is CPU work that took over 60 s on a 2-core machine shared
 * with other work, and a child's `timeout` turned that into a failure (spawnSync ETIMEDOUT). A
 * slow machine only makes these tests slower; HANG_MS is there to end a real hang.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distState } from "../bin/dist-fresh.js";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Only a hang ends these tests, never a busy machine. */
const HANG_MS = 600_000;
let project = "";
let installed = "";

beforeAll(() => {
  if (distState(root) !== "fresh") throw new Error("dist/ is not built from the current src/ (see the test setup's tsc errors above)");
  project = mkdtempSync(join(tmpdir(), "bodylink-consumer-"));
  // The tarball npm would publish (dist/ is fresh, so no need to run prepare again).
  execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", project], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  const tgz = readdirSync(project).find((f) => f.endsWith(".tgz"))!;
  execFileSync("tar", ["-xzf", tgz], { cwd: project });
  mkdirSync(join(project, "node_modules"));
  installed = join(project, "node_modules", "bodylink");
  renameSync(join(project, "package"), installed);
  // Its dependencies, as npm would install them, and ws for the consumer itself (Node 20 has no
  // global WebSocket, as docs/api.md says).
  symlinkSync(join(root, "node_modules"), join(installed, "node_modules"), "dir");
  symlinkSync(join(root, "node_modules", "ws"), join(project, "node_modules", "ws"), "dir");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
}, HANG_MS);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe("package exports", () => {
  it(
    "plain node runs a simulated NAO from `bodylink` and reads it with `bodylink/client`",
    () => {
      const script = `
      import WebSocket from "ws";
      import { NaoRobot, SimClock, startApiServer } from "bodylink";
      import { connect } from "bodylink/client";
      import { TnyClient } from "bodylink/client/tny";
      import { crc32, lola, chestboard, tny } from "bodylink/wire";
      const clock = new SimClock();
      const robot = await NaoRobot.create({ clock });
      await robot.start();
      await clock.advance(24);
      const server = await startApiServer(robot);
      const client = await connect(server.url, { WebSocket });
      const health = await client.fetchHealth();
      await client.close();
      await server.close();
      await robot.stop();
      console.log(JSON.stringify({
        body: health.body,
        crc: crc32(new TextEncoder().encode("123456789")).toString(16),
        wire: [typeof lola, typeof chestboard, typeof tny],
        tny: typeof TnyClient,
      }));
    `;
      writeFileSync(join(project, "main.mjs"), script);
      const out = execFileSync(process.execPath, ["main.mjs"], { cwd: project, encoding: "utf8" });
      expect(JSON.parse(out)).toEqual({ body: "nao", crc: "cbf43926", wire: ["object", "object", "object"], tny: "function" });
    },
    HANG_MS,
  );

  it("the installed CLI runs from dist/ without a warning, whatever times unpacking gave its files", () => {
    expect(distState(installed)).toBe("fresh");
    const r = spawnSync(process.execPath, [join(installed, "bin", "bodylink.js"), "--version"], { cwd: project, encoding: "utf8" });
    expect({ status: r.status, stdout: r.stdout.trim(), stderr: r.stderr }).toEqual({ status: 0, stdout: "0.1.0", stderr: "" });
  });

  it("`npm run prepare` without TypeScript (npm ci --omit=dev) says so and succeeds", () => {
    // A package with our build scripts and no TypeScript anywhere up its tree, run through npm.
    const lone = mkdtempSync(join(tmpdir(), "bodylink-lone-"));
    mkdirSync(join(lone, "bin"));
    writeFileSync(join(lone, "bin", "build.js"), readFileSync(join(root, "bin", "build.js")));
    const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    writeFileSync(join(lone, "package.json"), JSON.stringify({ name: "lone", type: "module", scripts: { prepare: scripts.prepare, build: scripts.build } }));
    const run = (script: string) => spawnSync("npm", ["run", "--silent", script], { cwd: lone, encoding: "utf8" });
    const prepare = run("prepare");
    rmSync(lone, { recursive: true, force: true });
    expect(prepare.status).toBe(0);
    expect(prepare.stderr).toMatch(/TypeScript is not installed \(dev dependencies omitted\): dist\/ not built/);
  });

  it("a plain build without TypeScript fails clearly", () => {
    const lone = mkdtempSync(join(tmpdir(), "bodylink-lone-"));
    mkdirSync(join(lone, "bin"));
    writeFileSync(join(lone, "bin", "build.js"), readFileSync(join(root, "bin", "build.js")));
    writeFileSync(join(lone, "package.json"), JSON.stringify({ type: "module" }));
    const build = spawnSync(process.execPath, [join(lone, "bin", "build.js")], { cwd: lone, encoding: "utf8" });
    rmSync(lone, { recursive: true, force: true });
    expect(build.status).toBe(1);
    expect(build.stderr).toMatch(/TypeScript is not installed: run `npm ci`/);
  });

  it(
    "strict TypeScript type-checks a consumer against the published declarations, which reach no TypeBox",
    () => {
      const source = `
      import { connect, type JointState } from "bodylink/client";
      import { TnyClient } from "bodylink/client/tny";
      import { crc32 } from "bodylink/wire";
      import { NaoRobot, type RobotHealth } from "bodylink";
      export async function angles(url: string): Promise<readonly number[] | null> {
        const c = await connect(url);
        const j: JointState | null = c.getJointState();
        await c.close();
        return j ? j.angles : null;
      }
      export const checksum: number = crc32(new Uint8Array([1, 2, 3]));
      export type Health = RobotHealth;
      export const ctors = [NaoRobot, TnyClient] as const;
      // @ts-expect-error: the declarations are real, so a wrong use is an error
      export const wrong: string = crc32(new Uint8Array(1));
    `;
      writeFileSync(join(project, "consumer.ts"), source);
      writeFileSync(
        join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: "NodeNext",
            moduleResolution: "NodeNext",
            target: "ES2022",
            lib: ["ES2023", "DOM", "esnext.disposable"],
            noEmit: true,
            skipLibCheck: false,
            types: [],
          },
          files: ["consumer.ts"],
        }),
      );
      const tsc = join(root, "node_modules/typescript/bin/tsc");
      // --listFiles: after the check, every file the program read (absolute paths; a diagnostic's
      // path is relative, so it is never one of these lines)
      const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json", "--listFiles", "--pretty", "false"], { cwd: project, encoding: "utf8" });
      const lines = r.stdout.split("\n").filter((l) => l !== "");
      expect(lines.filter((l) => !l.startsWith("/")).join("\n") + r.stderr).toBe("");
      expect(r.status).toBe(0);
      // The published declarations reach no TypeBox (its ~380 declaration files were most of this
      // check's time, and every strict consumer's: src/serve/api/adapter.ts, fleet-gateway.ts)
      const files = lines.filter((l) => l.startsWith("/"));
      expect(files.some((f) => f.includes("/bodylink/dist/index.d.ts"))).toBe(true);
      expect(files.filter((f) => /\/node_modules\/(typebox|@fastify\/type-provider-typebox)\//.test(f))).toEqual([]);
    },
    HANG_MS,
  );
});
