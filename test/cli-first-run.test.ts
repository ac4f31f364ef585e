/**
 * Issue 14, as a robotics engineer meets bodylink on first run: every error is one line with a
 * code from docs/errors.md, the chest-board tools never answer from the simulator without saying
 * so, `state` is readable, flags that do nothing say so. Runs the installed entry (bin/bodylink.js).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiUrlOf, BIN, cli, expectOneErrorLine, type Served, serve } from "./support/cli.js";

const sh = promisify(execFile);
// Each CLI call starts node (about a second on a loaded 2-core machine): generous per-test limits.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });
const root = mkdtempSync(join(tmpdir(), "bodylink-first-"));
let n = 0;
/** A fresh runtime directory: each group sees only its own runtime. */
function envFor(): NodeJS.ProcessEnv {
  const dir = join(root, `rt${n++}`);
  mkdirSync(dir);
  return { ...process.env, BODYLINK_RUNTIME_DIR: dir };
}
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function occupiedPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as { port: number }).port };
}

describe("one line and a code for every failure of serve and the tools (item 2, 3)", () => {
  const env = envFor();
  it("commander's unknown option and unknown command: one bodylink: line, the right --help, exit 2", async () => {
    // Usage errors are found before anything starts: the CLI runs side by side (each is a node start).
    const [bogus, frob, unknown, noPort, bigPort, body, wake, spin, core, tnyServer, help] = await Promise.all([
      cli(env, "serve", "--bogus"),
      cli(env, "chest", "version", "--frob"),
      cli(env, "frobnicate"),
      cli(env, "serve", "--api-port"),
      cli(env, "serve", "--api-port", "99999"),
      cli(env, "serve", "--body", "hexapod", "--api-port", "0"),
      cli(env, "serve", "--core-wake", "thread", "--api-port", "0"),
      cli(env, "serve", "--core-spin-ms", "3", "--api-port", "0"),
      cli(env, "serve", "--core", "main", "--api-port", "0"),
      cli(env, "serve", "--tny-server", "main", "--api-port", "0"),
      cli(env, "serve", "--help"),
    ]);
    const a = expectOneErrorLine(bogus, "BL_ERR_CLI_USAGE", 2);
    expect(a).toBe("unknown option '--bogus' (see `bodylink serve --help`)");
    const b = expectOneErrorLine(frob, "BL_ERR_CLI_USAGE", 2);
    expect(b).toContain("`bodylink chest version --help`");
    expectOneErrorLine(unknown, "BL_ERR_CLI_USAGE", 2);
    expectOneErrorLine(noPort, "BL_ERR_CLI_USAGE", 2);
    expect(expectOneErrorLine(bigPort, "BL_ERR_CLI_USAGE", 2)).toMatch(/--api-port must be an integer in 0\.\.65535/);
    expect(expectOneErrorLine(body, "BL_ERR_CLI_USAGE", 2)).toMatch(/unknown body "hexapod"/);
    // the threaded core's flags: a wrong value names the choices, nothing starts
    expect(expectOneErrorLine(wake, "BL_ERR_CLI_USAGE", 2)).toMatch(/--core-wake must be one of spin, wait, block/);
    expect(expectOneErrorLine(spin, "BL_ERR_CLI_USAGE", 2)).toMatch(/--core-spin-ms must be "auto" or a number of ms in 0\.\.2, got "3"/);
    // one start path per body: no flag chooses a second one
    for (const r of [core, tnyServer]) expectOneErrorLine(r, "BL_ERR_CLI_USAGE", 2);
    expect(help.stdout).toMatch(/--core-wake/);
    expect(help.stdout).not.toMatch(/--core <|--tny-server|\bthread \|/);
  });
  it("a bad option value points at its own command's --help; a misspelt command reads as one sentence", async () => {
    const [port, count, category, typo, inAction, nested] = await Promise.all([
      cli(env, "serve", "--api-port", "abc"),
      cli(env, "state", "--watch", "--count", "x"),
      cli(env, "estop", "--category", "3"),
      cli(env, "sevre"),
      cli(env, "estop", "--reset"), // raised inside the command's action, not by a parser
      cli(env, "fleet", "estop"),
    ]);
    expect(expectOneErrorLine(port, "BL_ERR_CLI_USAGE", 2)).toBe('--api-port must be an integer in 0..65535, got "abc" (see `bodylink serve --help`)');
    expect(expectOneErrorLine(count, "BL_ERR_CLI_USAGE", 2)).toMatch(/^--count must be an integer .* \(see `bodylink state --help`\)$/);
    expect(expectOneErrorLine(category, "BL_ERR_CLI_USAGE", 2)).toMatch(/^--category must be 0 .* \(see `bodylink estop --help`\)$/);
    expect(expectOneErrorLine(typo, "BL_ERR_CLI_USAGE", 2)).toBe("unknown command 'sevre' (did you mean serve?) (see `bodylink --help`)");
    expect(expectOneErrorLine(inAction, "BL_ERR_CLI_USAGE", 2)).toBe('--reset needs --reason "why it is safe to go on" (see `bodylink estop --help`)');
    expect(expectOneErrorLine(nested, "BL_ERR_CLI_USAGE", 2)).toMatch(/\(see `bodylink fleet estop --help`\)$/);
  });
  it("the API port in use", async () => {
    const { server, port } = await occupiedPort();
    try {
      const msg = expectOneErrorLine(await cli(env, "serve", "--api-port", String(port), "--no-lola"), "BL_ERR_SERVE_PORT_IN_USE");
      expect(msg).toContain(`robot API port ${port} on 127.0.0.1 is in use`);
      expect(msg).toContain("--api-port");
    } finally {
      server.close();
    }
  });
  it("the TNY-360 port in use", async () => {
    const { server, port } = await occupiedPort();
    try {
      const msg = expectOneErrorLine(await cli(env, "serve", "--body", "tny360", "--tny-port", String(port), "--api-port", "0"), "BL_ERR_SERVE_PORT_IN_USE");
      expect(msg).toContain(`TNY-360 API port ${port}`);
      expect(msg).toContain("--tny-port");
    } finally {
      server.close();
    }
  });
  it("a host that does not resolve, and one that is not this machine's", async () => {
    // off loopback a token is needed first (docs/security.md): give one, so the bind itself is what fails
    const token = ["--token", "first-run-test-token-0123456789abcdef"];
    expect(expectOneErrorLine(await cli(env, "serve", "--host", "999.1.1.1", "--api-port", "0", "--no-lola", ...token), "BL_ERR_SERVE_BAD_HOST")).toContain("--host 999.1.1.1");
    expect(expectOneErrorLine(await cli(env, "serve", "--host", "192.0.2.1", "--api-port", "0", "--no-lola", ...token), "BL_ERR_SERVE_BAD_HOST")).toContain("not an address of this machine");
  });
  it("a LoLA path in a missing directory says so (not EACCES)", async () => {
    const msg = expectOneErrorLine(await cli(env, "serve", "--api-port", "0", "--lola-path", "/nonexistent-dir/sock"), "BL_ERR_LOLA_SOCKET");
    expect(msg).toContain("the directory /nonexistent-dir does not exist");
  });
  it("a LoLA path longer than a Unix socket path can be is refused, and nothing is left behind", async () => {
    const dir = mkdtempSync(join(root, "long-"));
    const long = join(dir, `${"x".repeat(120 - dir.length)}.sock`);
    const msg = expectOneErrorLine(await cli(env, "serve", "--api-port", "0", "--lola-path", long), "BL_ERR_LOLA_SOCKET");
    expect(msg).toMatch(/the path is \d+ bytes, longer than a Unix socket path can be \(107\)/);
    expect(readdirSync(dir)).toEqual([]);
  });
  it("state with no runtime, a bad --tny-host, --count without --watch", async () => {
    expectOneErrorLine(await cli(env, "state"), "BL_ERR_CLI_NOT_RUNNING");
    expectOneErrorLine(await cli(env, "state", "--url", "http://127.0.0.1:1"), "BL_ERR_CLI_NO_RUNTIME");
    expectOneErrorLine(await cli(env, "serve", "--body", "tny360", "--tny-host", "robot:99999", "--api-port", "0"), "BL_ERR_CLI_USAGE", 2);
  });
  it("the recording tools given a directory or a missing file say so in words (not an internal error, not ENOENT)", async () => {
    const missing = join(root, "no-such.mcap");
    const [infoDir, verifyDir, replayDir, infoMissing, verifyMissing, dumpInMissingDir] = await Promise.all([
      cli(env, "record", "--info", root),
      cli(env, "verify", root),
      cli(env, "replay", root, "--api-port", "0", "--lola-path", join(root, "replay-sock")),
      cli(env, "record", "--info", missing),
      cli(env, "verify", missing),
      cli(env, "lola-dump", join(root, "no-dir", "d.mcap"), "--lola-path", join(root, "no-sock")),
    ]);
    expect(expectOneErrorLine(infoDir, "BL_ERR_RECORD_READ")).toBe(`cannot read ${root}: not a file (a directory?)`);
    expect(expectOneErrorLine(verifyDir, "BL_ERR_VERIFY_INPUT")).toBe(`cannot verify: ${root}: not a file (a directory?)`);
    expect(expectOneErrorLine(replayDir, "BL_ERR_RECORD_READ")).toBe(`cannot read ${root}: not a file (a directory?)`);
    expect(expectOneErrorLine(infoMissing, "BL_ERR_RECORD_READ")).toBe(`cannot read ${missing}: no such file or directory`);
    expect(expectOneErrorLine(verifyMissing, "BL_ERR_VERIFY_INPUT")).toBe(`cannot verify: ${missing}: no such file or directory`);
    expect(expectOneErrorLine(dumpInMissingDir, "BL_ERR_RECORD_OPEN")).toMatch(/: no such file or directory; check the directory exists/);
  });
});

describe("the chest-board tools with no runtime: the real board, or --sim said plainly (item 1)", () => {
  const env = envFor();
  it("without --sim they go to the real board: none here, so one line with a code and a hint", async () => {
    const commands = [["prefs"], ["boards"], ["chest", "version"], ["chest", "mode"], ["chest", "harakiri"]];
    for (const r of await Promise.all(commands.map((c) => cli(env, ...c)))) {
      expect(r.stdout).toBe("");
      expect(expectOneErrorLine(r, "BL_ERR_LINK_NO_DEVICE")).toContain("--sim");
    }
  });
  it("--sim answers and says so in the first line", async () => {
    // each its own simulated board: side by side
    const [p, boards, version, mode, harakiri, j] = await Promise.all([
      cli(env, "prefs", "--sim"),
      cli(env, "boards", "--sim"),
      cli(env, "chest", "version", "--sim"),
      cli(env, "chest", "mode", "--sim"),
      cli(env, "chest", "harakiri", "--sim"),
      cli(env, "prefs", "--sim", "--json"),
    ]);
    expect(p.code).toBe(0);
    const lines = p.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^simulated chest board/);
    expect(lines).toHaveLength(78);
    expect(lines.at(-1)).toBe("76 values, CRC ok");
    expect(boards.stdout).toMatch(/^simulated chest board.*\nboard\s+bus\/addr/);
    expect(version.stdout).toMatch(/^simulated chest board.*\n3\.4\.1207\n$/);
    expect(mode.stdout).toMatch(/^simulated chest board.*\nNormal \(0\)\n$/);
    expect(harakiri.stdout).toMatch(/\nsimulated chest board: powering off \(no robot was touched\)\n$/);
    // --json stays parseable: the note goes to stderr
    expect((JSON.parse(j.stdout) as { values: unknown[] }).values).toHaveLength(76);
    expect(j.stderr).toMatch(/^bodylink: simulated chest board/);
  });
  it("--sim with --usb is a usage error", async () => {
    expectOneErrorLine(await cli(env, "chest", "mode", "--sim", "--usb"), "BL_ERR_CLI_USAGE", 2);
  });
});

for (const body of ["p7", "tny360"] as const) {
  describe(`a ${body} runtime: no chest board, its own state and shutdown (items 1, 4, 8, 11)`, () => {
    const env = envFor();
    let s: Served;
    beforeAll(async () => {
      s = await serve(env, "--body", body, "--api-port", "0", "--tny-port", "0", "--seed", "3");
    }, 40_000);
    afterAll(async () => {
      await s?.stop();
    });
    it("prefs, boards and the chest tools refuse: this body has no chest board", async () => {
      const commands = [["prefs"], ["boards"], ["chest", "version"], ["chest", "mode"], ["chest", "harakiri"], ["prefs", "--url", apiUrlOf(s)]];
      for (const r of await Promise.all(commands.map((c) => cli(env, ...c)))) {
        expect(r.stdout).toBe("");
        expect(expectOneErrorLine(r, "BL_ERR_CMD_UNSUPPORTED")).toMatch(new RegExp(`^this body \\(${body}.*\\) has no chest board`));
      }
    });
    it("state names every joint and prints integer fields as integers", async () => {
      const info = (await (await fetch(`${apiUrlOf(s)}/v1/info`)).json()) as { joint_names: string[] };
      const r = await cli(env, "state");
      expect(r.code).toBe(0);
      for (const j of info.joint_names) expect(r.stdout).toMatch(new RegExp(`^${j}\\s+-?\\d`, "m"));
      expect(r.stdout).toMatch(/^joint\s+positions \(rad\)\s/m);
      expect(r.stdout).not.toMatch(/^paws\.legs .* FL$/m); // a description is a unit only for numbers
      if (body === "p7") expect(r.stdout).toMatch(/error_ids/);
      if (body === "p7") expect(r.stdout).not.toMatch(/^joint1 .* 0\.000$/m); // error ids are the last column, integers
    });
    it("stops with a line that says what stopping does to this body", async () => {
      const code = await s.stop();
      expect(code).toBe(0);
      const line = s
        .out()
        .split("\n")
        .find((l) => l.startsWith("SIGINT: stopping"));
      expect(line).toBe(body === "p7" ? "SIGINT: stopping (joints stopped where they are) …" : "SIGINT: stopping (velocity to zero, joints hold their pose) …");
      expect(s.out()).not.toMatch(/stiffness/);
    });
  });
}

describe("a NAO runtime: state with names, units and control; --watch in place or plain; pipes (items 4, 5)", () => {
  const env = envFor();
  let s: Served;
  beforeAll(async () => {
    s = await serve(env, "--api-port", "0", "--lola-path", join(root, "robocup"));
  }, 40_000);
  afterAll(async () => {
    await s?.stop();
  });
  it("state shows joint names, units, and who holds control", async () => {
    const free = await cli(env, "state");
    expect(free.stdout).toMatch(/^nao {2}seq \d+ {2}t [\d.]+ s {2}link ok {2}control: free/);
    expect(free.stdout).toMatch(/^battery\.temperature\s+\d+ °C$/m);
    expect(free.stdout).toMatch(/^imu\.linear_acceleration\s+\S+ \S+ \S+ m\/s²$/m);
    expect(free.stdout).toMatch(/^HeadYaw\s+-?\d+\.\d{3}\s/m);
    expect(free.stdout).toMatch(/^RHand\s/m);
    const lease = await fetch(`${apiUrlOf(s)}/v1/control`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ owner: "first-run test", lease_ms: 60_000 }) });
    expect(lease.ok).toBe(true);
    expect((await cli(env, "state")).stdout).toMatch(/control: held by "first-run test" \(api\) until \d{4}-/);
  });
  it("--watch piped: plain blocks, no escape codes; the stream's battery temperature is labelled with its scale", async () => {
    const r = await cli(env, "state", "--watch", "--count", "2");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("\x1b");
    expect(r.stdout.match(/^--- seq \d+$/gm)).toHaveLength(2);
    expect(r.stdout).toMatch(/^battery\.temperature\s+[\d.]+ \(LoLA's scale: 28\.5 °C reads 2\.8/m);
  });
  it("--watch on a terminal refreshes in place", async () => {
    if (!existsSync("/usr/bin/script")) return console.log("skipped: the tty check needs util-linux's script (apt-get install bsdutils)");
    const cmd = [process.execPath, ...BIN, "state", "--watch", "--count", "3"].map((a) => `'${a}'`).join(" ");
    const r = await sh("/usr/bin/script", ["-qec", cmd, "/dev/null"], { env, timeout: 30_000 });
    expect(r.stdout).toContain("\x1b[2J");
    expect(r.stdout.split("\x1b[H").length - 1).toBeGreaterThanOrEqual(3);
    expect(r.stdout).not.toMatch(/^--- seq/m);
  });
  it("`state --watch --json | head -n 1` ends quietly", async () => {
    const cmd = [process.execPath, ...BIN, "state", "--watch", "--json"].map((a) => `'${a}'`).join(" ");
    const r = await sh("/bin/sh", ["-c", `${cmd} | head -n 1`], { env, timeout: 30_000 });
    expect(r.stderr).toBe("");
    expect((JSON.parse(r.stdout) as { type: string }).type).toBe("state");
  });
  it("prefs from a simulated runtime says so first; the chest tools and a second serve of that name refuse with codes", async () => {
    expect((await cli(env, "prefs")).stdout).toMatch(/^simulated chest board \(the runtime, pid \d+, runs the simulator\)/);
    expectOneErrorLine(await cli(env, "chest", "version"), "BL_ERR_LINK_BUSY");
    const name = /^runtime: (\S+) /m.exec(s.out())![1]!;
    expectOneErrorLine(await cli(env, "serve", "--name", name, "--api-port", "0", "--no-lola"), "BL_ERR_RUNTIME_NAME_TAKEN");
  });
});

describe("flags that do not apply are not silently ignored (item 4)", () => {
  it("serve warns, one line per flag, and runs", async () => {
    // two runtimes, each in its own runtime dir: side by side
    const [s, t] = await Promise.all([
      serve(envFor(), "--body", "p7", "--api-port", "0", "--tny-host", "10.0.0.1", "--lola-readers", "2"),
      serve(envFor(), "--no-lola", "--lola-readers", "2", "--api-port", "0"),
    ]);
    await Promise.all([s.stop(), t.stop()]);
    // Warnings in the runtime's log (JSON off a terminal), beside the safety log's lines.
    const ignored = (err: string) =>
      err
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { level: number; event?: string; msg: string })
        .filter((r) => r.event === "flag_ignored" && r.level === 40)
        .map((r) => r.msg);
    expect(ignored(s.err()).sort()).toEqual(["--lola-readers applies to --body nao only; ignored with --body p7", "--tny-host applies to --body tny360 only; ignored with --body p7"]);
    expect(ignored(t.err())).toContain("--lola-readers has no effect with --no-lola; ignored");
  });
});
