/**
 * What starting the CLI loads. `bodylink estop` loads the stop and nothing else
 * (src/cli/estop-main.ts, chosen by bin/bodylink.js): a stop typed in a hurry must not wait for the
 * servers' modules. Every other command starts from src/cli/main.ts, whose modules declare the
 * commands and load what an action runs when it runs (`await import(…)`): before, every command
 * (`ls`, `state`, `--help`) loaded the servers, NATS, pino, YAML and the recorder first, 1.8 s at
 * load 3 against 0.25 s for `estop`. esbuild walks an entry's imports as Node would load them;
 * `import-statement` edges are what loads at start, `dynamic-import` ones what an action loads.
 */
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

interface Reached {
  files: string[];
  packages: string[];
}

/** The files and packages `entry` loads: at start only (static imports), or with every action's too. */
async function reached(entry: string, withActions = false): Promise<Reached> {
  const r = await build({ entryPoints: [entry], bundle: true, write: false, metafile: true, platform: "node", format: "esm", packages: "external", logLevel: "silent" });
  const inputs = r.metafile.inputs;
  const files = new Set<string>();
  const packages = new Set<string>();
  const walk = (f: string) => {
    if (files.has(f)) return;
    files.add(f);
    for (const i of inputs[f]?.imports ?? []) {
      if (!withActions && i.kind !== "import-statement") continue;
      if (i.external) packages.add(i.path);
      else walk(i.path);
    }
  };
  walk(entry);
  return { files: [...files], packages: [...packages] };
}

/** Packages only a running server, recorder, fleet or simulator needs (each takes 50–700 ms to load on a loaded machine). */
const HEAVY_PACKAGES = /^(fastify|@fastify|@nats-io|@mujoco|@mcap|@foxglove|ws|pino|yaml|typebox|hyparquet|hyparquet-writer|msgpackr|usb)(\/|$)/;

describe("bodylink estop's entry", () => {
  it("reaches no server, runtime, real-time core, fleet or simulator module, and no heavy package", async () => {
    const { files, packages } = await reached("src/cli/estop-main.ts");
    expect(files).toContain("src/cli/estop.ts");
    expect(files).toContain("src/serve/estop-socket.ts");
    expect(files.filter((f) => /^src\/(serve\/api|runtime|rt|host|fleet\/(?!subjects)|sim|drivers|record|transport)\//.test(f))).toEqual([]);
    expect(packages.filter((p) => HEAVY_PACKAGES.test(p))).toEqual([]);
  });
});

describe("the whole CLI's entry (every command but estop)", () => {
  it("loads the commands' declarations at start: no server, host, simulator, recorder or fleet connection, no heavy package", async () => {
    const { files, packages } = await reached("src/cli/main.ts");
    // every command is declared
    for (const f of ["serve-command", "record", "config", "inspect", "fleet", "chest", "replay", "verify", "export", "ls", "estop"]) expect(files).toContain(`src/cli/${f}.ts`);
    expect(
      files.filter((f) =>
        /^src\/(cli\/serve\.ts|cli\/fleet-flags\.ts|serve\/(api|lola|tny|foxglove\/server)|host|sim|drivers|record|verify|replay|export\/lerobot|transport|fleet\/(client|bridge|connect|roster|sign))/.test(
          f,
        ),
      ),
    ).toEqual([]);
    expect(packages.filter((p) => HEAVY_PACKAGES.test(p))).toEqual([]);
  });

  it("its actions do reach them (the check above can fail)", async () => {
    const { files, packages } = await reached("src/cli/main.ts", true);
    expect(files).toContain("src/cli/serve.ts");
    expect(files.some((f) => f.startsWith("src/serve/api/"))).toBe(true);
    for (const p of ["fastify", "yaml", "@nats-io/transport-node", "ws"]) expect(packages).toContain(p);
  });
});

describe("serve's module", () => {
  it("loads the fleet's bridge (NATS), the recorder (MCAP) and the Foxglove server only when a flag asks for them", async () => {
    const at = await reached("src/cli/serve.ts");
    expect(at.files.filter((f) => /^src\/(fleet\/(bridge|client|connect)|record\/recorder|serve\/foxglove\/server)\.ts$/.test(f))).toEqual([]);
    expect(at.packages.filter((p) => /^(@mcap|@nats-io\/(jetstream|kv)|@foxglove\/wasm-zstd)(\/|$)/.test(p))).toEqual([]);
    const all = await reached("src/cli/serve.ts", true);
    for (const f of ["src/fleet/bridge.ts", "src/record/recorder.ts", "src/serve/foxglove/server.ts"]) expect(all.files).toContain(f);
  });
});
