/**
 * The package as a consumer gets it: a project with `bodylink` in its node_modules imports the
 * subpath exports with plain `node` (no tsx, no bundler) and type-checks against the published
 * declarations with strict TypeScript. Both go through package.json's `exports`, so a wrong path,
 * a missing build output or a declaration that does not resolve fails here.
 *
 * dist/ is built by `npm ci` (the `prepare` script) and checked fresh by vitest's global setup.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

let project = "";

beforeAll(() => {
  // dist/ is fresh: test/support/build-dist.ts (vitest's global setup) saw to it.
  // A consumer project: bodylink installed (linked) into its node_modules, like `npm install bodylink`.
  project = mkdtempSync(join(tmpdir(), "bodylink-consumer-"));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(root, join(project, "node_modules", "bodylink"), "dir");
  // Node 20 has no global WebSocket: the consumer installs ws itself, as docs/api.md says.
  symlinkSync(join(root, "node_modules", "ws"), join(project, "node_modules", "ws"), "dir");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
});

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe("package exports", () => {
  it("plain node runs a simulated NAO from `bodylink` and reads it with `bodylink/client`", () => {
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
    const out = execFileSync(process.execPath, ["main.mjs"], { cwd: project, encoding: "utf8", timeout: 60_000 });
    expect(JSON.parse(out)).toEqual({ body: "nao", crc: "cbf43926", wire: ["object", "object", "object"], tny: "function" });
  }, 60_000);

  it("strict TypeScript type-checks a consumer against the published declarations", () => {
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
        compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", lib: ["ES2023", "DOM", "esnext.disposable"], noEmit: true, skipLibCheck: true, types: [] },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const run = () => execFileSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project, encoding: "utf8", timeout: 60_000 });
    expect(run).not.toThrow();
  }, 60_000);
});
