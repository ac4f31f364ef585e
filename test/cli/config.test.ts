/**
 * `serve --config FILE` and `bodylink config print` (docs/operations.md, "A config file"): YAML (or
 * JSON) holding serve's flags, per robot; flags override it; every problem one line with the key's
 * path; secrets from files or the environment, never printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Command } from "commander";
import { loadConfig, optionsWithConfig, printConfig } from "../../src/cli/config.js";
import { registerServe } from "../../src/cli/serve-command.js";
import { cli, serve } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bodylink-config-"));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "run") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** serve's command, parsed from `args` as the CLI would (without running it). */
function parsed(...args: string[]): Command {
  const program = new Command("bodylink");
  registerServe(program);
  const serveCmd = program.commands.find((c) => c.name() === "serve")!;
  serveCmd.action(() => {});
  program.parse(["node", "bodylink", "serve", ...args]);
  return serveCmd;
}

const secretFile = file("token", "s3cret-from-file\n");
const ROBOTS = file(
  "robots.yaml",
  `# shared by every robot
host: 127.0.0.1
log-level: warn
robots:
  nao-7:
    body: nao
    lola: false          # --no-lola
    accept-board-version: [10, 11]
    lola-grace-ms: 250
  arm:
    body: p7
    api-port: 8799
    token: { file: ${secretFile} }
`,
);

describe("the config file", () => {
  it("holds serve's flags (a key is a flag without its dashes, --no-x is x: false), per robot; --name chooses the robot", async () => {
    const cmd = parsed("--config", ROBOTS, "--name", "nao-7");
    const { opts } = await optionsWithConfig(cmd);
    expect(opts).toMatchObject({ body: "nao", name: "nao-7", lola: false, acceptBoardVersion: [10, 11], lolaGraceMs: 250, host: "127.0.0.1", logLevel: "warn" });
    expect(cmd.getOptionValueSource("lolaGraceMs")).toBe("config");
  });

  it("flags override the file", async () => {
    const { opts } = await optionsWithConfig(parsed("--config", ROBOTS, "--name", "arm", "--api-port", "0"));
    expect(opts).toMatchObject({ body: "p7", apiPort: 0, token: "s3cret-from-file" });
  });

  it("JSON is YAML: a .json file reads the same; a file without robots: is one robot", async () => {
    const json = file("one.json", JSON.stringify({ body: "tny360", "tny-port": 0, fleet: true }));
    const { opts, config } = await optionsWithConfig(parsed("--config", json));
    expect(config?.robot).toBeNull();
    expect(opts).toMatchObject({ body: "tny360", tnyPort: 0, fleet: true });
  });

  it("every problem is one line with the key's path: unknown keys, wrong types, refused values, secrets in the file", async () => {
    const bad = file(
      "bad.yaml",
      `api_port: 80
robots:
  nao-1:
    lola-readers: many
    usb: "yes"
    accept-board-version: [10, {x: 1}]
    token: plain-text-secret
    fleet-password: { env: BODYLINK_TEST_NO_SUCH_VAR }
    name: other
    colour: red
`,
    );
    const lines: string[] = [];
    await expect(loadConfig(bad, parsed(), undefined, (l) => lines.push(l))).rejects.toThrow(expect.objectContaining({ code: "BL_ERR_CLI_CONFIG", message: expect.stringMatching(/has 8 problems/) }));
    expect(lines).toEqual([
      `bodylink: ${bad}: api_port: unknown key (did you mean api-port?)`,
      `bodylink: ${bad}: robots.nao-1.lola-readers: --lola-readers must be an integer in 0..16, got "many"`,
      `bodylink: ${bad}: robots.nao-1.usb: expected true or false (the flag --usb), got "yes"`,
      `bodylink: ${bad}: robots.nao-1.accept-board-version: expected a list of values (the flag --accept-board-version <value> …), got a map in it`,
      `bodylink: ${bad}: robots.nao-1.token: a secret is not written in the config file: give { file: PATH } (read and trimmed) or { env: NAME } (e.g. BODYLINK_TOKEN)`,
      `bodylink: ${bad}: robots.nao-1.fleet-password: the environment variable BODYLINK_TEST_NO_SUCH_VAR is not set`,
      `bodylink: ${bad}: robots.nao-1.name: a robot's name is its key under robots:`,
      expect.stringMatching(new RegExp(`^bodylink: ${bad}: robots\\.nao-1\\.colour: unknown key \\(`)),
    ]);
  });

  it("YAML syntax errors give the line and column; several robots without --name say which", async () => {
    const lines: string[] = [];
    await expect(loadConfig(file("broken.yaml", "body: nao\n  api-port: [1\n"), parsed(), undefined, (l) => lines.push(l))).rejects.toThrow(/BL_ERR_CLI_CONFIG|problem/);
    expect(lines[0]).toMatch(/: line \d+, column \d+: /);
    const which: string[] = [];
    await expect(loadConfig(ROBOTS, parsed(), undefined, (l) => which.push(l))).rejects.toThrow();
    expect(which).toEqual([`bodylink: ${ROBOTS}: robots: the file has 2 robots (nao-7, arm); choose one with --name`]);
  });

  it("config print: every value and where it comes from; a secret by its source, never its value", async () => {
    const cmd = parsed("--config", ROBOTS, "--name", "arm", "--seed", "9");
    const { config } = await optionsWithConfig(cmd);
    const text = printConfig(cmd, config).join("\n");
    expect(text).toContain(`body: "p7"  # ${ROBOTS}`);
    expect(text).toContain("seed: 9  # flag");
    expect(text).toContain("lola-grace-ms: 100  # default");
    expect(text).toContain(`token: { file: ${JSON.stringify(secretFile)} }  # ${ROBOTS}`);
    expect(text).not.toContain("s3cret");
    const onCli = parsed("--token", "typed-secret");
    expect(printConfig(onCli, null).join("\n")).not.toContain("typed-secret");
  });
});

describe("the CLI with a config file", () => {
  it("`bodylink config print --config FILE --name arm` prints YAML without the secret", async () => {
    const r = await cli(env, "config", "print", "--config", ROBOTS, "--name", "arm");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^api-port: 8799 {2}# .*robots\.yaml$/m);
    expect(r.stdout).not.toContain("s3cret");
  });

  it("serve --config: a bad file is one line per problem, then BL_ERR_CLI_CONFIG, and nothing starts", async () => {
    const bad = file("bad2.yaml", "body: nao\nlola-readers: -1\nport: 1\n");
    const r = await cli(env, "serve", "--config", bad);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toEqual([
      `bodylink: ${bad}: lola-readers: --lola-readers must be an integer in 0..16, got "-1"`,
      expect.stringMatching(/: port: unknown key/),
      expect.stringMatching(/has 2 problems.* \[BL_ERR_CLI_CONFIG\]$/),
    ]);
    expect(r.stdout).toBe("");
  });

  it("serve --config runs the robot the file describes, flags on top", async () => {
    const one = file("p7.yaml", "body: p7\nname: cfg-arm\napi-port: 8780\nlog-format: json\n");
    const s = await serve(env, "--config", one, "--api-port", "0");
    expect(s.out()).toMatch(/^runtime: cfg-arm /m);
    expect(s.out()).toMatch(/^p7: simulated AIRBOT P7/m);
    expect(s.out()).not.toContain(":8780");
    expect(await s.stop()).toBe(0);
  }, 60_000);
});
