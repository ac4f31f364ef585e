/**
 * `bodylink fleet ls | state | estop | reset`: the fleet over NATS (docs/fleet.md). Each command
 * connects to the broker (--fleet, else BODYLINK_FLEET, else nats://127.0.0.1:4222), asks, and
 * leaves. `estop` and `reset` wait for every robot's answer and exit non-zero when one is missing.
 */
import type { Command } from "commander";
import { isErrorAnswer, FleetClient, type ScatterResult } from "../fleet/client.js";
import { DEFAULT_FLEET_URL } from "../fleet/connect.js";
import type { FleetHealth } from "../fleet/subjects.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { CliError, parseIntOption } from "./errors.js";
import { formatState } from "./inspect.js";
import { formatUptime, table } from "./ls.js";
import { addFleetCredentialOptions, type FleetFlags as ServeFleetFlags, fleetConnectOptions } from "./serve.js";

type FleetFlags = ServeFleetFlags & { json?: boolean };

function withConnection(cmd: Command): Command {
  return addFleetCredentialOptions(cmd.option("--fleet <url>", `the fleet's NATS server (default: BODYLINK_FLEET, else ${DEFAULT_FLEET_URL})`)).option("--json", "print JSON");
}

async function withFleet<T>(o: FleetFlags, f: (c: FleetClient) => Promise<T>): Promise<T> {
  const c = await FleetClient.connect(fleetConnectOptions(o), "bodylink fleet (CLI)");
  try {
    return await f(c);
  } finally {
    await c.close().catch(() => undefined);
  }
}

const fmtEstop = (e: FleetHealth["estop"]) => (e.latched ? `LATCHED${e.phase && e.phase !== "none" ? ` (${e.phase})` : ""}` : "-");
const fmtControl = (c: FleetHealth["control"]) => (c ? `${c.owner} (${c.source})` : "-");

/** Every present robot with its health (asked in parallel; "no answer" when it does not answer in time). */
async function overview(c: FleetClient) {
  const robots = await c.robots();
  return Promise.all(
    robots.map(async (r) => {
      const h = await c.health(r.name, 1500).catch(() => null);
      return { presence: r, health: h && !isErrorAnswer(h) ? h : null };
    }),
  );
}

function printScatter(r: ScatterResult, what: string, json: boolean | undefined): void {
  if (json) {
    console.log(JSON.stringify(r, null, 2));
  } else {
    const rows = r.replies
      .slice()
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((x) => [x.name, x.ok ? "ok" : `refused: ${x.error?.message ?? "?"}`, x.estop.latched ? `LATCHED (${x.estop.source ?? "?"}: ${x.estop.reason ?? ""})` : "not latched"]);
    for (const m of r.missing) rows.push([m, "NO ANSWER", "?"]);
    if (rows.length) console.log(table(["NAME", what.toUpperCase(), "E-STOP"], rows));
    const resent = r.resent ? ` (sent again ${r.resent} time${r.resent === 1 ? "" : "s"} to robots that had not answered)` : "";
    console.log(`${r.replies.length} answered in ${r.elapsedMs.toFixed(1)} ms${resent}${r.missing.length ? `; ${r.missing.length} did not answer: ${r.missing.join(", ")}` : ""}`);
  }
  if (r.missing.length) throw new CliError(`${what}: no answer from ${r.missing.join(", ")}`, 1, "BL_ERR_FLEET_NO_ANSWER");
  if (r.replies.some((x) => !x.ok)) throw new CliError(`${what}: refused by some robots`);
}

export function registerFleet(program: Command): void {
  const fleet = program.command("fleet").description("the fleet over NATS: list robots, their state, stop or reset all of them (docs/fleet.md)");

  withConnection(fleet.command("ls").description("every robot in the fleet: body, host, link, battery, cycle, control holder, e-stop")).action(async (o: FleetFlags) => {
    const rows = await withFleet(o, overview);
    if (o.json) return console.log(JSON.stringify(rows, null, 2));
    if (rows.length === 0) return console.log("no robot is in the fleet (start one with `bodylink serve --fleet URL`)");
    const now = Date.now();
    console.log(
      table(
        ["NAME", "BODY", "HOST", "LINK", "BATTERY", "CYCLE", "CONTROL", "E-STOP", "UPTIME"],
        rows.map(({ presence: p, health: h }) => [
          p.name,
          p.body,
          p.host,
          h ? h.link : "no answer",
          h?.battery_charge != null ? `${Math.round(h.battery_charge * 100)}%` : "-",
          h ? `${h.cycle.late_cycles}/${h.cycle.cycles} late` : "-",
          h ? fmtControl(h.control) : "-",
          h ? fmtEstop(h.estop) : "-",
          formatUptime(now - Date.parse(p.started_at)),
        ]),
      ),
    );
  });

  withConnection(fleet.command("state").description("one robot's state (REST units), or every robot's health with no NAME").argument("[name]", "the robot (`bodylink fleet ls`)")).action(
    async (name: string | undefined, o: FleetFlags) => {
      await withFleet(o, async (c) => {
        if (name === undefined) {
          const rows = await overview(c);
          return console.log(JSON.stringify(rows.map((r) => r.health ?? { name: r.presence.name, health: null }), null, o.json ? 2 : undefined));
        }
        const s = await c.request<Record<string, unknown>>(name, "state");
        if (isErrorAnswer(s)) throw new CliError(`${name}: ${s.message}`, 1, s.code as ErrorCode);
        console.log(o.json ? JSON.stringify(s, null, 2) : formatState(s));
      });
    },
  );

  withConnection(
    fleet
      .command("estop")
      .description("latch the emergency stop of every robot (--all) or the named ones; each stays stopped until reset")
      .argument("[names...]", "robots to stop (or --all)")
      .option("--all", "every robot in the fleet")
      .option("--category <c>", "0: cut at once; 1: safe posture first, then cut (default: each body's own)", parseIntOption("--category", 0, 1))
      .option("--reason <text>", "recorded with the e-stop", "fleet e-stop (CLI)")
      .option("--wait-ms <ms>", "how long to wait for every robot's answer; a robot that has not answered is sent the stop again every 250 ms until then", parseIntOption("--wait-ms", 100, 60000), 2000),
  ).action(async (names: string[], o: FleetFlags & { all?: boolean; category?: 0 | 1; reason: string; waitMs: number }) => {
    const targets = targetsOf(names, o.all);
    await withFleet(o, async (c) => {
      const r = await c.estop(targets, { ...(o.category !== undefined ? { category: o.category } : {}), reason: o.reason, by: `cli:${process.env.USER ?? process.pid}` }, { maxWaitMs: o.waitMs });
      printScatter(r, "estop", o.json);
    });
  });

  withConnection(
    fleet
      .command("reset")
      .description("reset the e-stop of every robot (--all) or the named ones; nothing moves until a client takes control and commands")
      .argument("[names...]", "robots to reset (or --all)")
      .option("--all", "every robot in the fleet")
      .requiredOption("--reason <text>", "why it is safe to reset (recorded)")
      .option("--wait-ms <ms>", "how long to wait for every robot's answer", parseIntOption("--wait-ms", 100, 60000), 2000),
  ).action(async (names: string[], o: FleetFlags & { all?: boolean; reason: string; waitMs: number }) => {
    const targets = targetsOf(names, o.all);
    await withFleet(o, async (c) => printScatter(await c.reset(targets, { reason: o.reason, by: `cli:${process.env.USER ?? process.pid}` }, { maxWaitMs: o.waitMs }), "reset", o.json));
  });
}

function targetsOf(names: string[], all: boolean | undefined): string[] | null {
  if (all && names.length) throw new CliError("give robot names or --all, not both", 2);
  if (!all && names.length === 0) throw new CliError("name the robots, or pass --all for every robot in the fleet", 2);
  for (const n of names) if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(n)) throw new BodylinkError("BL_ERR_FLEET_CONFIG", `${JSON.stringify(n)} is not a robot name`);
  return all ? null : names;
}
