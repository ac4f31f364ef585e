/**
 * The SDK examples in docs/api.md are the files in examples/, run as written (only the package
 * import is pointed at the source) against each body's simulator and real API server on loopback,
 * type-check, and end any failure (another body, control held) with one line and a code.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MonotonicClock } from "../../src/runtime/clock.js";
import { startApiServer } from "../../src/serve/api/build.js";
import { type AnyRobot, simNao, simP7, simTny } from "./helpers.js";

const doc = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");

/** Each example's heading in docs/api.md and its file. */
const FILES = { NAO: "examples/nao.ts", "AIRBOT P7": "examples/p7.ts", "TNY-360": "examples/tny360.ts", "Any body": "examples/any-body.ts" } as const;

/** The example under a heading; by default with the package import pointed at the sources (for import()). */
function example(heading: string, fromSources = true): string {
  const at = doc.indexOf(`#### ${heading}\n`);
  expect(at, heading).toBeGreaterThan(0);
  const code = /```ts\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  expect(code).toBeDefined();
  return fromSources ? code!.replace(`from "bodylink/client"`, `from "../../src/client/index.js"`) : code!;
}

const written: string[] = [];
afterEach(() => {
  for (const f of written.splice(0)) rmSync(f, { force: true });
  vi.restoreAllMocks();
  delete process.env.BODYLINK_URL;
});

async function runExample(heading: string, robot: AnyRobot): Promise<string[]> {
  // One file per example and body: vitest caches a module by its path.
  const file = join(import.meta.dirname, `docs-example-${heading.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${robot.kind}.generated.ts`);
  writeFileSync(file, example(heading));
  written.push(file);
  await robot.start();
  const server = await startApiServer(robot, { port: 0 });
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
  try {
    process.env.BODYLINK_URL = server.url;
    await import(/* @vite-ignore */ `${file}?t=${Date.now()}`);
    // The example released control: nobody holds it now.
    expect((await server.app.inject({ url: "/v1/control" })).json()).toEqual({ held: false, holder: null });
  } finally {
    await server.close();
    await robot.stop();
  }
  return lines;
}

describe("docs/api.md SDK examples", () => {
  it("NAO", async () => {
    const out = await runExample("NAO", await simNao(new MonotonicClock()));
    expect(out[0]).toMatch(/^NAO: battery \d+ %/);
    expect(out.join("\n")).toMatch(/standing up, about \d+\.\d s/);
    expect(out.join("\n")).toMatch(/applied positions and stiffness, 0 values clamped to their limits/); // its own pose is not clamped (issue 14 item 7)
  });

  it("AIRBOT P7", async () => {
    const out = await runExample("AIRBOT P7", await simP7(new MonotonicClock()));
    expect(out[0]).toMatch(/^P7: gravity seen by the IMU 9\.\d\d m\/s²/);
    expect(out.join("\n")).toMatch(/joint 4 at -0\.\d+ rad/);
  }, 15_000);

  it("TNY-360", async () => {
    const out = await runExample("TNY-360", await simTny(new MonotonicClock()));
    expect(out[0]).toMatch(/^TNY-360: standing up/);
    expect(out.join("\n")).toMatch(/odometry x -?\d+\.\d{3} m, paws grounded: /);
  }, 15_000);

  it.each([
    ["nao", simNao, /^NAO: chest LEDs set, battery \d+ % \(lease [0-9a-f]{8}…\)$/],
    ["p7", simP7, /^P7: moving, about \d\.\d\d s \(lease /],
    ["tny360", simTny, /^TNY-360: gait Creep \(lease /],
  ] as const)(
    "Any body, against a %s: narrows on robot.body and uses that body's facet",
    async (_kind, make, line) => {
      const out = await runExample("Any body", await make(new MonotonicClock()));
      expect(out).toHaveLength(1);
      expect(out[0]).toMatch(line);
    },
    15_000,
  );

  it("each example block is its file in examples/, as written", () => {
    for (const [heading, file] of Object.entries(FILES)) {
      expect(example(heading, false), heading).toBe(readFileSync(join(import.meta.dirname, "../..", file), "utf8"));
    }
  });

  // Each example file run as a user runs it (`npx tsx examples/X.ts`), against a runtime it cannot
  // use: one line on stderr with the error's code, exit status 1, no stack trace.
  it("pointed at another body, or with control held by another client, each example says so in one line with its code and exits 1", async () => {
    const make = { nao: simNao, p7: simP7, tny360: simTny } as const;
    const servers = await Promise.all(
      (["nao", "p7", "tny360"] as const).map(async (kind) => {
        const robot = await make[kind](new MonotonicClock());
        await robot.start();
        return { kind, robot, server: await startApiServer(robot, { port: 0 }) };
      }),
    );
    const at = (kind: string) => servers.find((s) => s.kind === kind)!;
    const run = (file: string, url: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const p = spawn(process.execPath, ["--import", "tsx", file], { cwd: join(import.meta.dirname, "../.."), env: { ...process.env, BODYLINK_URL: url } });
        let stderr = "";
        p.stderr.on("data", (d) => (stderr += d));
        p.on("close", (code) => resolve({ code, stderr }));
      });
    try {
      const wrong = await Promise.all(
        [
          ["examples/nao.ts", "nao-example", "nao", "p7"],
          ["examples/p7.ts", "p7-example", "p7", "tny360"],
          ["examples/tny360.ts", "tny-example", "tny360", "nao"],
        ].map(async ([file, name, want, serving]) => ({ name, want, serving, url: at(serving!).server.url, r: await run(file!, at(serving!).server.url) })),
      );
      for (const { name, want, serving, url, r } of wrong) {
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr.trim().split("\n")).toEqual([`${name}: the server at ${url} serves a ${serving} body, not ${want}; check the URL or the expectBody option [BL_ERR_CLIENT_WRONG_BODY]`]);
      }
      for (const { robot } of servers) expect(robot.authority.acquire("someone-else", "api", 60_000).ok).toBe(true);
      const held = await Promise.all(
        [
          ["examples/nao.ts", "nao-example", "nao"],
          ["examples/p7.ts", "p7-example", "p7"],
          ["examples/tny360.ts", "tny-example", "tny360"],
          ["examples/any-body.ts", "any-body", "p7"],
        ].map(async ([file, name, kind]) => ({ name, r: await run(file!, at(kind!).server.url) })),
      );
      for (const { name, r } of held) {
        expect(r.code, r.stderr).toBe(1);
        const lines = r.stderr.trim().split("\n");
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(new RegExp(`^${name}: control is held by someone-else .* \\[BL_ERR_AUTH_HELD\\]$`));
      }
    } finally {
      for (const { robot, server } of servers) {
        await server.close();
        await robot.stop();
      }
    }
  }, 120_000);

  it("type-check against the SDK's types", () => {
    const files = ["NAO", "AIRBOT P7", "TNY-360", "Any body"].map((h, i) => {
      const f = join(import.meta.dirname, `docs-example-check-${i}.generated.ts`);
      writeFileSync(f, `${example(h)}\nexport {};\n`);
      written.push(f);
      return f;
    });
    const tsc = join(import.meta.dirname, "../../node_modules/typescript/bin/tsc");
    const args = [
      tsc,
      "--noEmit",
      "--strict",
      "--target",
      "ES2022",
      "--module",
      "NodeNext",
      "--moduleResolution",
      "NodeNext",
      "--lib",
      "ES2023,DOM,esnext.disposable",
      "--types",
      "node",
      "--skipLibCheck",
      ...files,
    ];
    let out = "";
    try {
      execFileSync(process.execPath, args, { encoding: "utf8" });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toBe("");
  }, 60_000);
});
