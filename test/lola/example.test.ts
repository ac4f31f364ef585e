/** The example client (examples/lola-client.ts) runs as documented against a real-time runtime. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it, type TestContext } from "vitest";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { type LolaServer, startLolaServer } from "../../src/serve/lola/server.js";
import { TestLolaClient, tmpSocketPath } from "./client.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

function runExample(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "examples/lola-client.ts", ...args], { cwd: root });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (b) => (stdout += b));
    p.stderr.on("data", (b) => (stderr += b));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A real-time NAO serving LoLA on its own socket, closed when the test `t` ends (its own: some tests run concurrently). */
async function realTimeServer(t: TestContext): Promise<{ robot: NaoRobot; server: LolaServer; logs: string[]; warnings: string[] }> {
  const robot = await NaoRobot.create();
  await robot.start();
  const logs: string[] = [];
  const warnings: string[] = [];
  const server = await startLolaServer(robot, {
    path: tmpSocketPath(),
    log: (l, m) => {
      logs.push(m);
      if (l === "warn") warnings.push(m);
    },
  });
  t.onTestFinished(async () => {
    await server.close();
    await robot.stop();
  });
  return { robot, server, logs, warnings };
}

describe("examples/lola-client.ts", () => {
  it("connects, prints battery and accelerometer, nods the head with a stiffness ramp and leaves it off", async (t) => {
    const { robot, server, logs, warnings } = await realTimeServer(t);
    const owners: string[] = [];
    robot.authority.on("acquired", (i) => owners.push(i.owner));
    const r = await runExample([server.path, "--seconds", "2"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/connected to .*: body P0000073A07S94700012 \(version 6\.0\.0\)/);
    expect(r.stdout).toMatch(/battery \d+ % \(-?\d+\.\d\d A\) {2}accelerometer -?\d+\.\d\d -?\d+\.\d\d -?\d+\.\d\d m\/s²/);
    expect(r.stdout.match(/done after \d+ cycles/g)).toEqual(["done after 167 cycles"]); // once: no cycle after the last
    // LoLA has no release: a client that ends while in control is the normal end, not a warning.
    expect(logs.some((l) => /lola:client#1 disconnected while in control/.test(l))).toBe(true);
    expect(warnings).toEqual([]);
    expect(owners[0]).toBe("lola:client#1");
    expect(logs.some((l) => /lola:client#1 disconnected \(\d+ sensor messages sent, 0 dropped, 167 commands\)/.test(l))).toBe(true);
    // The example's last command (stiffness 0) may land after the last cycle before it exited.
    await expect.poll(() => robot.state.stiffness[0], { timeout: 10_000 }).toBe(0);
  });

  // The next three run concurrently (vitest runs consecutive concurrent tests together): the default
  // 6 s is a wait, beside which the others' example processes start and end (alone one after the
  // other, the three took ~12 s).
  it.concurrent("takes a lone socket path (no --seconds) and runs the default 6 s", async (t) => {
    const { server } = await realTimeServer(t);
    const r = await runExample([server.path]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`connected to ${server.path}:`);
    expect(r.stdout.match(/done after \d+ cycles/g)).toEqual(["done after 500 cycles"]);
  }, 30_000);

  it.concurrent("fails with one line, no stack trace, when nothing serves the socket or a flag is wrong", async ({ expect }) => {
    const missing = tmpSocketPath();
    const r = await runExample([missing, "--seconds", "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([`lola-client: could not connect to the LoLA socket ${missing}: ENOENT; is a runtime serving it (bodylink serve)?`]);
    const bad = await runExample(["--seconds", "1"]);
    expect(bad.stderr.trim()).toBe("lola-client: --seconds must be at least 2 (1 s ramp up, 1 s ramp down)");
    expect(bad.code).toBe(1);
  }, 30_000);

  it.concurrent("prints the server's reason when it is refused", async (t) => {
    const { server } = await realTimeServer(t);
    const holder = await TestLolaClient.connect(server.path);
    t.onTestFinished(() => holder.close());
    const r = await runExample([server.path, "--seconds", "2"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the server closed the connection: bodylink LoLA: client#2 refused: lola:client#1 is the controlling client/);
  });
});
