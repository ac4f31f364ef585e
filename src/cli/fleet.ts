/**
 * `bodylink fleet ls | state | estop | reset`: the fleet over NATS (docs/fleet.md). Each command
 * connects to the broker (--fleet, else BODYLINK_FLEET, else the --fleet-dir bundle's URL, else
 * nats://127.0.0.1:4222), asks, and leaves. `estop` and `reset` wait for every robot's signed
 * answer and exit non-zero when one is missing or forged.
 * `bodylink fleet init | keys`: a closed fleet's keys and broker configuration (roster.ts).
 */
import type { Command } from "commander";
import type { FleetClient, ScatterResult } from "../fleet/client.js";
import { DEFAULT_FLEET_URL, type FleetHealth } from "../fleet/subjects.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { CliError, parseIntOption } from "./errors.js";
import { type ControlAnswer, formatState } from "./state-view.js";
import { formatUptime, table } from "./ls.js";
import type { FleetFlags as ServeFleetFlags } from "./fleet-flags.js";
import { addFleetCredentialOptions } from "./serve-command.js";
import { type FleetRole, FLEET_ROLES } from "../fleet/broker-config.js";

type FleetFlags = ServeFleetFlags & { json?: boolean };

function withConnection(cmd: Command): Command {
  return addFleetCredentialOptions(cmd.option("--fleet <url>", `the fleet's NATS server (default: BODYLINK_FLEET, else ${DEFAULT_FLEET_URL})`)).option("--json", "print JSON");
}

/** NATS, the roster and the signatures are loaded when a command runs, not with the CLI. */
const fleetModules = () => Promise.all([import("../fleet/client.js"), import("../fleet/connect.js"), import("./fleet-flags.js")]);

async function withFleet<T>(o: FleetFlags, f: (c: FleetClient) => Promise<T>): Promise<T> {
  const [{ FleetClient }, { requireFleetCredentials }, { fleetBundleOf, fleetConnectOptions }] = await fleetModules();
  const bundle = fleetBundleOf(o);
  const opts = fleetConnectOptions(o, bundle);
  requireFleetCredentials(opts, o.fleetInsecure === true);
  const c = await FleetClient.connect(opts, "bodylink fleet (CLI)", { signer: bundle?.signingKey ?? null, ...(bundle ? { robots: bundle.robots } : {}), insecure: o.fleetInsecure === true });
  try {
    return await f(c);
  } finally {
    await c.close().catch(() => undefined);
  }
}

const fmtEstop = (e: FleetHealth["estop"]) => (e.latched ? `LATCHED${e.phase && e.phase !== "none" ? ` (${e.phase})` : ""}` : "-");
/** A fleet health's control as `formatState`'s control line takes it. */
function controlOf(c: FleetHealth["control"]): ControlAnswer {
  return c ? { held: true, holder: { owner: c.owner, source: c.source, expires_at: new Date(c.expires_at_epoch_ms).toISOString() } } : { held: false, holder: null };
}
const fmtControl = (c: FleetHealth["control"]) => (c ? `${c.owner} (${c.source})` : "-");

/** Every present robot with its health (asked in parallel; "no answer" when it does not answer in time). */
async function overview(c: FleetClient) {
  const { isErrorAnswer } = await import("../fleet/client.js");
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
      .map((x) => [
        x.name,
        `${x.ok ? "ok" : `refused: ${x.error?.message ?? "?"}`}${x.verified ? "" : " (UNVERIFIED)"}`,
        x.estop.latched ? `LATCHED (${x.estop.source ?? "?"}: ${x.estop.reason ?? ""})` : "not latched",
      ]);
    for (const m of r.missing) {
      const notes = [...(r.unverified.includes(m) ? ["forged or unverifiable answer ignored"] : []), ...(r.notPresent.includes(m) ? ["no presence record"] : [])];
      rows.push([m, `NO ANSWER${notes.length ? ` (${notes.join("; ")})` : ""}`, "?"]);
    }
    for (const u of r.unverified) if (!r.missing.includes(u)) rows.push([u, "forged or unverifiable answer ignored", "?"]);
    if (rows.length) console.log(table(["NAME", what.toUpperCase(), "E-STOP"], rows));
    const resent = r.resent ? ` (sent again ${r.resent} time${r.resent === 1 ? "" : "s"} to robots that had not answered)` : "";
    console.log(`${r.replies.length} answered in ${r.elapsedMs.toFixed(1)} ms${resent}${r.missing.length ? `; ${r.missing.length} did not answer: ${r.missing.join(", ")}` : ""}`);
  }
  if (r.missing.length)
    throw new CliError(
      `${what}: no answer from ${r.missing.join(", ")}${r.unverified.length ? ` (answers that did not verify were ignored: ${r.unverified.join(", ")})` : ""}`,
      1,
      "BL_ERR_FLEET_NO_ANSWER",
    );
  if (r.replies.some((x) => !x.ok)) throw new CliError(`${what}: refused by some robots`);
}

export function registerFleet(program: Command): void {
  const fleet = program.command("fleet").description("the fleet over NATS: list robots, their state, stop or reset all of them; make a closed fleet's keys (docs/fleet.md)");
  registerKeys(fleet);

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
        const { isErrorAnswer } = await import("../fleet/client.js");
        if (name === undefined) {
          const rows = await overview(c);
          if (o.json)
            return console.log(
              JSON.stringify(
                rows.map((r) => r.health ?? { name: r.presence.name, health: null }),
                null,
                2,
              ),
            );
          if (rows.length === 0) return console.log("no robot is in the fleet (start one with `bodylink serve --fleet URL`)");
          return console.log(
            table(
              ["NAME", "BODY", "LINK", "CYCLE", "CONTROL", "E-STOP"],
              rows.map(({ presence: p, health: h }) => [
                p.name,
                p.body,
                h ? h.link : "no answer",
                h ? `${h.cycle.late_cycles}/${h.cycle.cycles} late` : "-",
                h ? fmtControl(h.control) : "-",
                h ? fmtEstop(h.estop) : "-",
              ]),
            ),
          );
        }
        // The state, and who holds control (the robot's health says: a state message does not).
        const [s, h] = await Promise.all([c.request<Record<string, unknown>>(name, "state"), c.health(name).catch(() => null)]);
        if (isErrorAnswer(s)) throw new CliError(`${name}: ${s.message}`, 1, s.code as ErrorCode);
        const health = h && !isErrorAnswer(h) ? h : null;
        if (o.json) return console.log(JSON.stringify(health ? { ...s, control: health.control } : s, null, 2));
        console.log(formatState(s, undefined, health ? controlOf(health.control) : null));
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
      .option(
        "--wait-ms <ms>",
        "how long to wait for every robot's answer; a robot that has not answered is sent the stop again every 250 ms until then",
        parseIntOption("--wait-ms", 100, 60000),
        2000,
      ),
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

const collect = (v: string, prev: string[] = []) => [...prev, v];

function registerKeys(fleet: Command): void {
  fleet
    .command("init")
    .description("make a closed fleet in DIR: one identity per robot, operator and viewer (plus admin), their keys, the broker's config (docs/fleet.md)")
    .argument("<dir>", "the fleet directory (kept by the admin; each NAME/ inside goes to where NAME runs)")
    .requiredOption("--url <url>", "the broker as robots and operators reach it (nats://HOST:4222, tls://HOST:4222)")
    .option("--robot <name>", "a robot (repeat)", collect, [])
    .option("--operator <name>", "an operator: signs resets, leases and commands (repeat)", collect, [])
    .option("--viewer <name>", "a read-only identity (repeat)", collect, [])
    .option("--listen <host:port>", "where the broker listens (nats.conf)", "0.0.0.0:4222")
    .option("--store-dir <dir>", "the broker's JetStream store (default DIR/jetstream)")
    .action(async (dir: string, o: { url: string; robot: string[]; operator: string[]; viewer: string[]; listen: string; storeDir?: string }) => {
      const { initFleet } = await import("../fleet/roster.js");
      const r = initFleet(dir, { url: o.url, listen: o.listen, ...(o.storeDir ? { storeDir: o.storeDir } : {}), robots: o.robot, operators: o.operator, viewers: o.viewer });
      await printRoster(dir, r.identities);
      console.log(`\nbroker:  nats-server -c ${dir}/nats.conf`);
      console.log(`robots:  copy ${dir}/NAME/ to the robot, then bodylink serve --fleet-dir DIR`);
      console.log(`people:  bodylink fleet ls --fleet-dir ${dir}/OPERATOR   (secrets are 0600; keep ${dir} with the admin)`);
    });
  const keys = fleet.command("keys").description("the fleet's identities and keys: ls, add, remove (every bundle's trust.json and nats.conf are rewritten)");
  keys
    .command("ls")
    .description("every identity: role, NATS key, signing key id")
    .argument("<dir>", "the fleet directory (`bodylink fleet init`)")
    .action(async (dir: string) => printRoster(dir, (await import("../fleet/roster.js")).readRoster(dir).identities));
  keys
    .command("add")
    .description("add an identity; then redistribute its bundle, every trust.json, and reload the broker (nats-server --signal reload)")
    .argument("<dir>", "the fleet directory")
    .argument("<role>", FLEET_ROLES.join(" | "))
    .argument("<name>", "its name (a robot's is its serve --name)")
    .action(async (dir: string, role: string, name: string) => {
      if (!(FLEET_ROLES as readonly string[]).includes(role)) throw new CliError(`role must be one of ${FLEET_ROLES.join(", ")}`, 2);
      await printRoster(dir, (await import("../fleet/roster.js")).addIdentity(dir, role as FleetRole, name).identities);
    });
  keys
    .command("remove")
    .description("remove an identity: the broker and every trust.json forget its keys; redistribute and reload")
    .argument("<dir>", "the fleet directory")
    .argument("<name>", "the identity")
    .action(async (dir: string, name: string) => printRoster(dir, (await import("../fleet/roster.js")).removeIdentity(dir, name).identities));
}

async function printRoster(dir: string, ids: ReadonlyArray<{ name: string; role: string; nkey: string; sign?: `ed25519:${string}` }>): Promise<void> {
  const { keyIdOf } = await import("../fleet/sign.js");
  console.log(
    table(
      ["NAME", "ROLE", "NATS KEY", "SIGNING KEY", "BUNDLE"],
      ids.map((e) => [e.name, e.role, e.nkey, e.sign ? keyIdOf(e.sign) : "-", `${dir}/${e.name}/`]),
    ),
  );
}

function targetsOf(names: string[], all: boolean | undefined): string[] | null {
  if (all && names.length) throw new CliError("give robot names or --all, not both", 2);
  if (!all && names.length === 0) throw new CliError("name the robots, or pass --all for every robot in the fleet", 2);
  for (const n of names) if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(n)) throw new BodylinkError("BL_ERR_FLEET_CONFIG", `${JSON.stringify(n)} is not a robot name`);
  return all ? null : names;
}
