/**
 * `bodylink estop` loads the stop and nothing else (src/cli/estop-main.ts, chosen by bin/bodylink.js):
 * a stop typed in a hurry must not wait for the servers' modules (the whole CLI took 2.8–3.4 s to
 * start at load 14, the stop alone 0.4–0.5 s). esbuild walks the entry's static imports as Node would load them.
 */
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

async function reached(entry: string): Promise<{ files: string[]; packages: string[] }> {
  const r = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, platform: "node", format: "esm", packages: "external", logLevel: "silent" });
  const files = Object.keys(r.metafile.inputs);
  const packages = [...new Set(Object.values(r.metafile.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)))];
  return { files, packages };
}

describe("bodylink estop's entry", () => {
  it("reaches no server, runtime, real-time core, fleet or simulator module, and no heavy package", async () => {
    const { files, packages } = await reached("src/cli/estop-main.ts");
    expect(files).toContain("src/cli/estop.ts");
    expect(files).toContain("src/serve/estop-socket.ts");
    expect(files.filter((f) => /^src\/(serve\/api|runtime|rt|host|fleet\/(?!subjects)|sim|drivers|record|transport)\//.test(f))).toEqual([]);
    expect(packages.filter((p) => /^(fastify|@fastify|@nats-io|@mujoco|@mcap|@foxglove|ws)(\/|$)/.test(p))).toEqual([]);
  });

  it("the whole CLI does reach them (the check above can fail)", async () => {
    const { files, packages } = await reached("src/cli/main.ts");
    expect(files.some((f) => f.startsWith("src/serve/api/"))).toBe(true);
    expect(packages).toContain("fastify");
  });
});
