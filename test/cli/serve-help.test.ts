/**
 * `bodylink serve --help` reads in the order a new user needs: the body first, the fleet's
 * credential flags with the fleet's flags (not six of them before --body), the log's last.
 */
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/serve-command.js";
import { DEFAULT_SIM, simKindOf } from "../../src/cli/serve-options.js";

function serveHelpFlags(): string[] {
  const program = new Command("bodylink");
  registerServe(program);
  const help = program.commands.find((c) => c.name() === "serve")!.helpInformation();
  return [...help.matchAll(/^ {2}(--[\w-]+)/gm)].map((m) => m[1]!);
}

describe("serve --help", () => {
  it("lists --body first and --config next", () => {
    expect(serveHelpFlags().slice(0, 2)).toEqual(["--body", "--config"]);
  });
  it("keeps every --fleet-* flag together, after --fleet", () => {
    const flags = serveHelpFlags();
    const fleet = flags.map((f, i) => [f, i] as const).filter(([f]) => f === "--fleet" || f.startsWith("--fleet-"));
    expect(fleet[0]![0]).toBe("--fleet");
    const first = fleet[0]![1];
    expect(fleet.map(([, i]) => i)).toEqual(fleet.map((_, k) => first + k)); // contiguous
    expect(fleet.map(([f]) => f)).toEqual(
      expect.arrayContaining(["--fleet-user", "--fleet-password", "--fleet-token", "--fleet-nkey", "--fleet-creds", "--fleet-ca", "--fleet-dir", "--fleet-insecure"]),
    );
  });
  it("ends with the log's flags (then --record, serve's own)", () => {
    const flags = serveHelpFlags();
    expect(flags.slice(-4)).toEqual(["--log-format", "--log-level", "--log-file", "--record"]);
  });
});

describe("serve's mechanics when --sim is not given", () => {
  it("is physics, or $BODYLINK_SIM; --sim wins; a real body has none; a bad $BODYLINK_SIM is a usage error", () => {
    expect(DEFAULT_SIM).toBe("physics");
    expect(simKindOf({}, {})).toBe("physics");
    expect(simKindOf({}, { BODYLINK_SIM: "" })).toBe("physics");
    expect(simKindOf({}, { BODYLINK_SIM: "kinematic" })).toBe("kinematic");
    expect(simKindOf({ sim: "physics" }, { BODYLINK_SIM: "kinematic" })).toBe("physics");
    expect(simKindOf({ sim: "kinematic" }, {})).toBe("kinematic");
    expect(simKindOf({ usb: true }, {})).toBeUndefined();
    expect(simKindOf({ lolaUpstream: "/tmp/robocup" }, {})).toBeUndefined();
    expect(() => simKindOf({}, { BODYLINK_SIM: "mujoco" })).toThrow(/BODYLINK_SIM="mujoco": choose physics or kinematic/);
  });
  it("is said in --help", () => {
    const program = new Command("bodylink");
    registerServe(program);
    const help = program.commands
      .find((c) => c.name() === "serve")!
      .helpInformation()
      .replace(/\s+/g, " ");
    expect(help).toMatch(/--sim <mechanics> .*physics \| kinematic \(default: \$BODYLINK_SIM, else physics/);
  });
});
