/**
 * `npm start` under a supervisor that signals only npm's pid (issue 14 item 12). npm forwards
 * SIGTERM to its child; with `sh -c "node …"` that child was the shell, which died and left the
 * runtime running as an orphan, its LoLA socket and runtime record in place. The start script execs
 * the runtime, so npm's child is the runtime itself and takes the one stop path.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dirs: string[] = [];
const strays: number[] = [];
afterAll(() => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent pid from /proc/PID/stat (field 4, after the parenthesised command name). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

async function until(what: string, ok: () => boolean, out: () => string): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    // A hang guard, not a timing assertion: the load on the shared machine decides how long it takes.
    if (Date.now() - t0 > 60_000) throw new Error(`${what}: ${out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("npm start", () => {
  it("stops when only npm's pid gets SIGTERM: the runtime is npm's child and leaves no socket or record", async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } };
    expect(pkg.scripts.start).toMatch(/^exec node bin\/bodylink\.js serve\b/);

    const dir = mkdtempSync(join(tmpdir(), "bodylink-npm-start-"));
    dirs.push(dir);
    const lolaPath = join(dir, "robocup");
    const runtimeDir = join(dir, "rt");
    // The user's default (vitest.config.ts sets the kinematic one for the suite): npm start serves the physics NAO.
    const env: NodeJS.ProcessEnv = { ...process.env, BODYLINK_RUNTIME_DIR: runtimeDir, npm_config_update_notifier: "false" };
    delete env.BODYLINK_SIM;
    const npm: ChildProcess = spawn("npm", ["start", "--", "--api-port", "0", "--lola-path", lolaPath], { env });
    strays.push(npm.pid!);
    let out = "";
    npm.stdout!.on("data", (d) => {
      out += String(d);
    });
    npm.stderr!.on("data", (d) => {
      out += String(d);
    });
    const npmExited = new Promise<void>((resolve) => npm.once("exit", () => resolve()));

    await until(
      "serve did not start",
      () => /Ctrl-C to stop/.test(out),
      () => out,
    );
    expect(out).toMatch(/MuJoCo physics \(models\/nao\.xml; it starts crouched and limp\)/);
    const runtimePid = Number(/runtime: \S+ \(pid (\d+)\)/.exec(out)?.[1]);
    expect(runtimePid).toBeGreaterThan(0);
    strays.push(runtimePid);
    expect(parentOf(runtimePid), out).toBe(npm.pid);
    expect(existsSync(lolaPath)).toBe(true);
    // The runtime record and its local e-stop socket (docs/security.md), both gone after the stop.
    expect(readdirSync(runtimeDir).sort()).toEqual([expect.stringMatching(/\.estop$/), expect.stringMatching(/\.json$/)]);

    npm.kill("SIGTERM"); // npm's pid only, as a supervisor does
    await until(
      "the runtime outlived npm",
      () => !alive(runtimePid),
      () => out,
    );
    await npmExited;
    expect(out).toMatch(/SIGTERM: stopping/);
    expect(existsSync(lolaPath)).toBe(false);
    expect(readdirSync(runtimeDir)).toEqual([]);
  }, 120_000);
});
