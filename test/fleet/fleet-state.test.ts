/**
 * `bodylink fleet state`: with no name, a table of every robot (JSON only with --json); with a
 * name, the robot's state with who holds control (not "control: unknown"); an unknown name is one
 * line that lists the robots present.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { cli, expectOneErrorLine } from "../support/cli.js";
import { type ClosedFleet, startClosedFleet } from "../support/fleet.js";
import { hasNats } from "../support/nats.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

const runDir = useRuntimeDir("bodylink-fleet-state-");

describe.skipIf(!hasNats)("bodylink fleet state", { timeout: 60_000 }, () => {
  let fleet: ClosedFleet;
  let rt: RunningRuntime;
  const env = () => ({ ...process.env, BODYLINK_RUNTIME_DIR: runDir });

  beforeAll(async () => {
    fleet = await startClosedFleet({ robots: ["arm-s"], operators: ["alice"] });
    rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body: "p7", seed: 2, name: "arm-s", fleet: fleet.url, fleetDir: fleet.bundle("arm-s") });
    await rt.fleet!.joined();
    expect((await rt.robot.authority.acquire("cell-operator", "api", 60_000)).ok).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await rt?.close();
    await fleet?.close();
  });

  it("with no name: a table of every robot, not a JSON line; --json gives the JSON", async () => {
    const r = await cli(env(), "fleet", "state", "--fleet", fleet.url, "--fleet-dir", fleet.bundle("alice"));
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+BODY\s+LINK\s+CYCLE\s+CONTROL\s+E-STOP/);
    expect(lines[1]).toMatch(/^arm-s\s+p7\s+ok\s+.*cell-operator \(api\)/);
    const j = await cli(env(), "fleet", "state", "--json", "--fleet", fleet.url, "--fleet-dir", fleet.bundle("alice"));
    expect(JSON.parse(j.stdout)).toEqual([expect.objectContaining({ name: "arm-s" })]);
  });

  it("with a name: the state, and who holds control", async () => {
    const r = await cli(env(), "fleet", "state", "arm-s", "--fleet", fleet.url, "--fleet-dir", fleet.bundle("alice"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/control: held by "cell-operator" \(api\) until \d{4}-/);
    expect(r.stdout).not.toContain("control: unknown");
  });

  it("an unknown name: one line listing who is present", async () => {
    const r = await cli(env(), "fleet", "state", "ghost", "--fleet", fleet.url, "--fleet-dir", fleet.bundle("alice"));
    const msg = expectOneErrorLine(r, "BL_ERR_FLEET_NO_ROBOT");
    expect(msg).toMatch(/^(state: )?no robot named ghost is in the fleet \(present: arm-s\); `bodylink fleet ls` lists them$/);
  });
});
