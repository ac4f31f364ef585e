import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const run = promisify(execFile);
// Each CLI call starts node (about a second, more on a loaded 2-core machine).
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), "bodylink-cli-"));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: dir };
// The installed entry, as `npx bodylink` runs it: dist/ (fresh: vitest's global setup builds it).
const bin = ["bin/bodylink.js"];

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [...bin, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe("bodylink without a runtime", () => {
  it("state fails with one clear line and a non-zero exit", async () => {
    const r = await cli("state");
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/no runtime is running on this machine; start one with `bodylink serve`/);
  });
  it("prefs --sim reads the simulated chest board directly: 76 values with units", async () => {
    const r = await cli("prefs", "--sim");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").slice(1); // the first says it is the simulator
    expect(lines).toHaveLength(77);
    expect(lines.at(-1)).toBe("76 values, CRC ok");
    expect(r.stdout).toMatch(/^Body\/BodyId\s+P0000073A07S94700012$/m);
    expect(r.stdout).toMatch(/^FSR\/LFoot\/FrontLeft\/Gain\s+[\d.e-]+ kg\/count$/m);
  });
  it("boards shows the handshake; with --accept-board-version 10 the version-11 boards are rejected after 3 tries", async () => {
    const ok = await cli("boards", "--json", "--sim");
    expect((JSON.parse(ok.stdout) as { accepted: boolean }[]).every((b) => b.accepted)).toBe(true);
    const r = await cli("boards", "--sim", "--accept-board-version", "10");
    expect(r.stdout).toMatch(/HeadBoard\s+1\/0x10\s+0x[0-9a-f]+\s+11\s+3\s+Joint\s+REJECTED after 3: configuration version 11 not in accepted \[10\]/);
  });
  it("the chest tools answer on the simulated board with --sim", async () => {
    expect((await cli("chest", "version", "--sim")).stdout.trim().split("\n").at(-1)).toBe("3.4.1207");
    expect((await cli("chest", "mode", "--sim")).stdout.trim().split("\n").at(-1)).toBe("Normal (0)");
  });
  it("serve --usb fails with one clear line when no chest board is present", async () => {
    const r = await cli("serve", "--usb", "--api-port", "0", "--no-lola");
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^bodylink: no chest board found \(USB vendor id 0xffff\).*\[BL_ERR_LINK_NO_DEVICE\]$/);
  });
  it("bad flags are usage errors (exit 2) and --help works everywhere", async () => {
    expect((await cli("serve", "--api-port", "99999")).code).toBe(2);
    expect((await cli("serve", "--gc-every-ms", "-1")).stderr).toMatch(/--gc-every-ms/);
    expect((await cli("serve", "--body", "hexapod", "--api-port", "0", "--no-lola")).stderr).toMatch(/unknown body "hexapod"; choose nao, p7 or tny360/);
    // side by side: each call is a node start, seconds apiece on a loaded machine
    const helps = await Promise.all([[], ["serve"], ["ls"], ["fleet"], ["fleet", "estop"], ["state"], ["prefs"], ["boards"], ["chest"], ["chest", "harakiri"]].map((c) => cli(...c, "--help")));
    for (const r of helps) {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: bodylink/);
    }
  }, 120_000);
});

describe("bodylink serve (the README's first command, on the simulator)", () => {
  let server: ChildProcess;
  let out = "";
  const lolaPath = join(dir, "robocup");
  beforeAll(async () => {
    server = spawn(process.execPath, [...bin, "serve", "--api-port", "0", "--lola-path", lolaPath], { env });
    server.stdout!.on("data", (d) => {
      out += String(d);
    });
    const t0 = Date.now();
    while (!/Ctrl-C to stop/.test(out)) {
      if (Date.now() - t0 > 30_000) throw new Error(`serve did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 40_000);
  afterAll(() => {
    server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints where it serves", () => {
    expect(out).toMatch(/nao: simulated chest board, body P0000073A07S94700012, 15\/15 boards started/);
    expect(out).toContain(`LoLA socket: ${lolaPath}`);
    expect(out).toMatch(/robot API: http:\/\/127\.0\.0\.1:\d+/);
  });
  it("`bodylink state` finds it without flags and shows a plausible state", async () => {
    const r = await cli("state", "--json");
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as { imu: { linear_acceleration: number[] }; battery: { charge: number }; joint_positions: number[] };
    expect(Math.hypot(...s.imu.linear_acceleration)).toBeGreaterThan(9.5);
    expect(Math.hypot(...s.imu.linear_acceleration)).toBeLessThan(10.1);
    expect(s.battery.charge).toBeGreaterThan(0);
    expect(s.battery.charge).toBeLessThanOrEqual(1);
    expect(s.joint_positions).toHaveLength(26);
  });
  it("`bodylink state --watch --count 3` streams", async () => {
    const r = await cli("state", "--watch", "--json", "--count", "3");
    const seqs = r.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toHaveLength(3);
    expect(seqs[2]!).toBeGreaterThan(seqs[0]!);
  });
  it("schedules young-generation collections between cycles (--gc-every-ms, default 100), reported on /v1/health", async () => {
    const url = /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
    type H = { cycle: { gc_collections: number; gc_ms: { max: number } } };
    // the core collects once its young generation holds 256 KiB (youngGcMinBytes), which an
    // allocation-lean core reaches after a while: wait for the first one
    let h = (await (await fetch(`${url}/v1/health`)).json()) as H;
    for (let i = 0; i < 100 && h.cycle.gc_collections === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      h = (await (await fetch(`${url}/v1/health`)).json()) as H;
    }
    expect(h.cycle.gc_collections).toBeGreaterThan(0);
    expect(h.cycle.gc_ms.max).toBeGreaterThan(0);
  });
  it("prefs and boards come from the runtime", async () => {
    expect((await cli("prefs")).stdout).toMatch(/76 values, CRC ok/);
    expect((await cli("boards")).stdout).toMatch(/RightFootBoard\s+5\/0x53\s+0x0\s+11/);
  });
  it("the chest tools refuse while it holds the chest board; a second serve of the same name is refused", async () => {
    const r = await cli("chest", "version");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the chest board is held by a running runtime \(nao-[\w-]+, pid \d+, sim\); stop it first: Ctrl-C in its terminal, or kill \d+/);
    const name = /^runtime: ([\w-]+) \(pid \d+\)$/m.exec(out)![1]!;
    const s = await cli("serve", "--name", name, "--api-port", "0", "--no-lola");
    expect(s.code).toBe(1);
    expect(s.stderr.trim()).toMatch(
      new RegExp(
        `^bodylink: a runtime named ${name} is already running \\(pid \\d+, nao on sim, API http://127\\.0\\.0\\.1:\\d+\\); stop it first, or choose another --name \\[BL_ERR_RUNTIME_NAME_TAKEN\\]$`,
      ),
    );
  });
  it("`bodylink estop` latches the stop, --status shows it, --reset needs a reason and releases it", async () => {
    expect((await cli("estop", "--status")).stdout).toMatch(/emergency stop: not latched\ndefault stop category on this body: 1/);
    const stop = await cli("estop", "--category", "0", "--reason", "cli test");
    expect(stop.code).toBe(0);
    expect(stop.stdout).toMatch(/emergency stop: LATCHED \(category 0, body in its safe state\) by cli: cli test since /);
    const json = JSON.parse((await cli("estop", "--status", "--json")).stdout) as { latched: boolean; source: string };
    expect(json).toMatchObject({ latched: true, source: "cli" });
    const noReason = await cli("estop", "--reset");
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/^bodylink: --reset needs --reason/);
    expect((await cli("estop", "--category", "2")).code).toBe(2);
    const reset = await cli("estop", "--reset", "--reason", "area clear");
    expect(reset.stdout).toMatch(/emergency stop: reset; nothing moves until a client takes control and commands/);
    expect((await cli("estop", "--status")).stdout).toMatch(/not latched/);
  }, 60_000);
  it("several runtimes side by side: ls lists them, --robot chooses, none chosen among several is a clear error", async () => {
    const second = spawn(process.execPath, [...bin, "serve", "--body", "p7", "--name", "arm-1", "--api-port", "0"], { env });
    let out2 = "";
    second.stdout!.on("data", (d) => {
      out2 += String(d);
    });
    try {
      const t0 = Date.now();
      while (!/Ctrl-C to stop/.test(out2)) {
        if (Date.now() - t0 > 30_000) throw new Error(`second serve did not start: ${out2}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out2).toMatch(/^runtime: arm-1 \(pid \d+\)$/m);
      const ls = await cli("ls");
      expect(ls.code).toBe(0);
      const rows = ls.stdout.trim().split("\n");
      expect(rows[0]).toMatch(/^NAME\s+BODY\s+LINK\s+PID\s+UPTIME\s+SERVES$/);
      expect(rows).toHaveLength(3);
      expect(ls.stdout).toMatch(/^arm-1\s+p7\s+sim\s+\d+\s+\d+s\s+http:\/\/127\.0\.0\.1:\d+$/m);
      expect(ls.stdout).toMatch(new RegExp(`^nao-[\\w-]+\\s+nao\\s+sim\\s+\\d+\\s+\\S+( \\S+)?\\s+http://127\\.0\\.0\\.1:\\d+ lola:${lolaPath}$`, "m"));
      const json = JSON.parse((await cli("ls", "--json")).stdout) as { name: string; body: string; apiUrl: string }[];
      expect(json.map((r) => r.body).sort()).toEqual(["nao", "p7"]);
      const which = await cli("state", "--json");
      expect(which.code).toBe(1);
      expect(which.stderr.trim()).toMatch(/^bodylink: 2 runtimes are running \(arm-1, nao-[\w-]+\); choose one with --robot NAME \(or --url\) \[BL_ERR_CLI_WHICH_ROBOT\]$/);
      const arm = await cli("state", "--json", "--robot", "arm-1");
      expect((JSON.parse(arm.stdout) as { body: string }).body).toBe("p7");
      const none = await cli("state", "--robot", "nope");
      expect(none.stderr).toMatch(/no runtime named nope is running on this machine \(running: arm-1, nao-/);
    } finally {
      const exited = new Promise((r) => second.once("exit", r));
      second.kill("SIGINT");
      await exited;
    }
    expect((await cli("ls", "--json")).stdout).not.toMatch(/arm-1/);
  }, 60_000);
  it("stops cleanly on SIGINT: socket file and runtime record removed", async () => {
    expect(existsSync(lolaPath)).toBe(true);
    const name = /^runtime: ([\w-]+) \(pid \d+\)$/m.exec(out)![1]!;
    expect(existsSync(join(dir, `${name}.json`))).toBe(true);
    const exited = new Promise<number | null>((r) => server.on("exit", (code) => r(code)));
    server.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(existsSync(lolaPath)).toBe(false);
    expect(existsSync(join(dir, `${name}.json`))).toBe(false);
  });
});
