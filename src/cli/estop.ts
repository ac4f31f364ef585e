/**
 * `bodylink estop`: latch the running runtime's emergency stop, show it, or reset it. Talks to
 * the robot API (POST /v1/estop, GET /v1/estop, POST /v1/estop/reset); needs no lease.
 */
import type { Command } from "commander";
import type { EstopAnswer, EstopStateAnswer } from "../client/messages.js";
import { apiUrl, getJson, type UrlOption } from "./inspect.js";
import { CliError } from "./errors.js";

interface EstopOptions extends UrlOption {
  reset?: boolean;
  status?: boolean;
  category?: 0 | 1;
  reason?: string;
  json?: boolean;
}

export function formatEstop(e: EstopAnswer): string {
  if (!e.latched) return "emergency stop: not latched";
  const since = e.since_ms === null ? "" : ` since ${new Date(e.since_ms).toISOString()}`;
  const phase = e.phase === "settling" ? "settling into its safe posture" : "body in its safe state";
  return `emergency stop: LATCHED (category ${e.category}, ${phase}) by ${e.source}: ${e.reason}${since}\nreset with: bodylink estop --reset --reason "why it is safe"`;
}

function parseCategory(v: string): 0 | 1 {
  if (v === "0" || v === "1") return Number(v) as 0 | 1;
  throw new CliError(`--category must be 0 (cut at once) or 1 (safe posture, then cut), got ${JSON.stringify(v)}`, 2);
}

export function registerEstop(program: Command): void {
  program
    .command("estop")
    .description("emergency stop the running runtime (latched until --reset); no lease needed")
    .option("--category <0|1>", "0: cut at once; 1: reach a safe posture within a bounded time, then cut (default: the body's, see --status)", parseCategory)
    .option("--reason <text>", "why (logged; required with --reset)")
    .option("--reset", "release the latch; nothing moves until a client takes control and commands")
    .option("--status", "only show the latch")
    .option("--json", "print JSON")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .addHelpText("after", "\nExamples:\n  bodylink estop                         stop with the body's default category\n  bodylink estop --category 0            cut at once (a standing NAO falls)\n  bodylink estop --reset --reason \"area clear\"")
    .action(async (o: EstopOptions) => {
      if (o.reset && o.status) throw new CliError("--reset and --status exclude each other", 2);
      if (o.reset && o.category !== undefined) throw new CliError("--category applies to a stop, not to --reset", 2);
      if (o.reset && !o.reason?.trim()) throw new CliError('--reset needs --reason "why it is safe to go on"', 2);
      const base = apiUrl(o, true)!;
      let answer: EstopAnswer & Partial<EstopStateAnswer> & { was_latched?: boolean };
      if (o.status) answer = (await getJson(base, "/v1/estop")) as EstopStateAnswer;
      else if (o.reset) answer = (await getJson(base, "/v1/estop/reset", { reason: o.reason, source: "cli" })) as EstopAnswer & { was_latched: boolean };
      else answer = (await getJson(base, "/v1/estop", { source: "cli", reason: o.reason ?? "emergency stop (bodylink estop)", ...(o.category === undefined ? {} : { category: o.category }) })) as EstopAnswer;
      if (o.json) return console.log(JSON.stringify(answer, null, 2));
      if (o.reset && answer.was_latched === false) console.log("emergency stop: was not latched; nothing to reset");
      else if (o.reset) console.log("emergency stop: reset; nothing moves until a client takes control and commands");
      else console.log(formatEstop(answer));
      if (o.status && answer.default_category !== undefined) console.log(`default stop category on this body: ${answer.default_category}`);
    });
}
