/**
 * `bodylink estop`: latch the running runtimes' emergency stop, show it, or reset it. Needs no lease.
 *
 * A stop goes to every runtime on this machine unless `--robot NAME` (or `--url`) picks one (an
 * e-stop typed in a hurry must stop, not ask which); `--all` says so explicitly. For each runtime it
 * tries the local e-stop socket first (serve/estop-socket.ts: served by the real-time core's thread,
 * so HTTP exhaustion or a wedged main thread cannot hold it back), then the robot API
 * (POST /v1/estop). Every runtime's answer is printed; one that confirmed nothing makes the exit
 * non-zero and is named. `--status` and `--reset` talk to one runtime's API (GET /v1/estop,
 * POST /v1/estop/reset): a reset stays a deliberate act on one robot, checked by the API's rules.
 */
import type { Command } from "commander";
import type { EstopAnswer, EstopStateAnswer } from "../client/messages.js";
import { requestEstopSocket } from "../serve/estop-socket.js";
import { getJson } from "./http.js";
import { CliError, usageError } from "./errors.js";
import { apiUrlFor as apiUrl, chooseRuntime, findRuntime, listRuntimes, type RuntimeRecord, type TargetOptions as UrlOption } from "./discovery.js";
import { BodylinkError } from "../errors.js";

interface EstopOptions extends UrlOption {
  reset?: boolean;
  status?: boolean;
  all?: boolean;
  category?: 0 | 1;
  reason?: string;
  json?: boolean;
}

/** How long the local socket gets before the API is tried, ms (a core turns its event loop every cycle: 4–12 ms). */
const SOCKET_TIMEOUT_MS = 1000;

export function formatEstop(e: EstopAnswer): string {
  if (!e.latched) return "emergency stop: not latched";
  const since = e.since_ms === null ? "" : ` since ${new Date(e.since_ms).toISOString()}`;
  const phase = e.phase === "settling" ? "settling into its safe posture" : "body in its safe state";
  return `emergency stop: LATCHED (category ${e.category}, ${phase}) by ${e.source}: ${e.reason}${since}`;
}

const RESET_HINT = 'reset with: bodylink estop --reset --reason "why it is safe"';

function parseCategory(v: string): 0 | 1 {
  if (v === "0" || v === "1") return Number(v) as 0 | 1;
  throw new CliError(`--category must be 0 (cut at once) or 1 (safe posture, then cut), got ${JSON.stringify(v)}`, 2);
}

type Target = Pick<RuntimeRecord, "name" | "apiUrl"> & { estopPath?: string | null };
type Stopped = { name: string; via: "local socket" | "robot API"; answer: EstopAnswer } | { name: string; error: string };

/**
 * How long a stop waits for a runtime that is still starting (its record claims the name before the
 * body opens) to serve its e-stop socket or API, ms. Its body is not commanded before it serves them.
 */
const STARTING_WAIT_MS = 5000;

/** A runtime still starting: wait (bounded) until its record names a way to stop it; null if it never did. */
async function whenServing(t: Target): Promise<Target | null> {
  if (t.estopPath || t.apiUrl || !isLocalRecord(t)) return t;
  process.stderr.write(`bodylink: ${t.name} is starting; waiting up to ${STARTING_WAIT_MS / 1000} s for its e-stop socket\n`);
  const until = Date.now() + STARTING_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    const now = findRuntime(t.name);
    if (!now) return null;
    if (now.estopPath || now.apiUrl) return now;
  }
  return null;
}

const isLocalRecord = (t: Target): t is RuntimeRecord => "pid" in t;

/** Stop one runtime: its local socket first, the robot API when the socket does not answer. */
async function stopOne(target: Target, req: { source: string; reason: string; category?: 0 | 1 }): Promise<Stopped> {
  const t = await whenServing(target);
  if (!t) {
    const gone = !findRuntime(target.name);
    return { name: target.name, error: gone ? "it exited while starting" : `still starting after ${STARTING_WAIT_MS / 1000} s: no e-stop socket or robot API yet` };
  }
  let socketProblem = "";
  if (t.estopPath) {
    try {
      const r = await requestEstopSocket(t.estopPath, { op: "estop", ...req }, SOCKET_TIMEOUT_MS);
      if (r.ok) return { name: t.name, via: "local socket", answer: r.estop };
      socketProblem = r.message;
    } catch (e) {
      socketProblem = (e as Error).message;
    }
  }
  if (!t.apiUrl) return { name: t.name, error: `no robot API${socketProblem ? `, and the local socket: ${socketProblem}` : ""}` };
  try {
    return { name: t.name, via: "robot API", answer: (await getJson(t.apiUrl, "/v1/estop", req)) as EstopAnswer };
  } catch (e) {
    return { name: t.name, error: `${(e as Error).message}${socketProblem ? ` (the local socket: ${socketProblem})` : ""}` };
  }
}

/** The runtimes a stop goes to: --url's, --robot's, else every one running here. */
function stopTargets(o: EstopOptions): Target[] {
  if (o.all && (o.robot !== undefined || o.url)) throw usageError("--all stops every runtime on this machine; it excludes --robot and --url", "estop");
  if (o.url) return [{ name: o.url, apiUrl: o.url.replace(/\/$/, ""), estopPath: null }];
  if (o.robot !== undefined) return [chooseRuntime(o.robot)];
  const all = listRuntimes();
  if (all.length === 0) throw new BodylinkError("BL_ERR_CLI_NOT_RUNNING");
  return all;
}

export function registerEstop(program: Command): void {
  program
    .command("estop")
    .description("emergency stop every runtime on this machine (or --robot NAME's), latched until --reset; no lease needed")
    .option("--category <0|1>", "0: cut at once; 1: reach a safe posture within a bounded time, then cut (default: the body's, see --status)", parseCategory)
    .option("--reason <text>", "why (logged; required with --reset)")
    .option("--reset", "release the latch of one runtime; nothing moves until a client takes control and commands")
    .option("--status", "only show the latch")
    .option("--all", "stop every runtime on this machine (what a stop without --robot does)")
    .option("--json", "print JSON")
    .option("--url <url>", "robot API base URL (default: the runtimes running on this machine)")
    .option("--robot <name>", "only the runtime of this name on this machine (`bodylink ls`); --status and --reset need it when several run")
    .addHelpText(
      "after",
      "\nA stop tries each runtime's local e-stop socket (in its runtime directory) first, then its robot API;\na runtime still starting is waited for up to 5 s (its socket comes up with its body, before its API).\n\nExamples:\n  bodylink estop                         stop every runtime here with its body's default category\n  bodylink estop --robot nao-1           stop one\n  bodylink estop --category 0            cut at once (a standing NAO falls)\n  bodylink estop --reset --reason \"area clear\"",
    )
    .action(async (o: EstopOptions) => {
      if (o.reset && o.status) throw new CliError("--reset and --status exclude each other", 2);
      if (o.reset && o.category !== undefined) throw new CliError("--category applies to a stop, not to --reset", 2);
      if (o.reset && !o.reason?.trim()) throw new CliError('--reset needs --reason "why it is safe to go on"', 2);
      if (o.all && (o.reset || o.status)) throw new CliError("--all applies to a stop; --reset and --status take one runtime (--robot NAME)", 2);
      if (o.status || o.reset) return statusOrReset(o);
      const targets = stopTargets(o);
      const req = { source: "cli", reason: o.reason ?? "emergency stop (bodylink estop)", ...(o.category === undefined ? {} : { category: o.category }) };
      const results = await Promise.all(targets.map((t) => stopOne(t, req)));
      const failed = results.filter((r): r is Extract<Stopped, { error: string }> => "error" in r);
      if (o.json) {
        const rows = results.map((r) => ("error" in r ? r : { name: r.name, via: r.via, ...r.answer }));
        console.log(JSON.stringify(targets.length === 1 && failed.length === 0 ? (results[0] as Extract<Stopped, { answer: EstopAnswer }>).answer : rows, null, 2));
      } else if (targets.length === 1 && failed.length === 0) {
        console.log(`${formatEstop((results[0] as Extract<Stopped, { answer: EstopAnswer }>).answer)}\n${RESET_HINT}`);
      } else {
        console.log(`stopping ${targets.length} runtime${targets.length === 1 ? "" : "s"}: ${targets.map((t) => t.name).join(", ")}`);
        for (const r of results) console.log("error" in r ? `${r.name}: NOT STOPPED: ${r.error}` : `${r.name}: ${formatEstop(r.answer)} (via ${r.via})`);
        if (failed.length < results.length) console.log(`${RESET_HINT} --robot NAME`);
      }
      if (failed.length > 0) throw new CliError(`the emergency stop was not confirmed by ${failed.map((f) => f.name).join(", ")}`, 1);
    });
}

async function statusOrReset(o: EstopOptions): Promise<void> {
  const base = apiUrl(o, true)!;
  let answer: EstopAnswer & Partial<EstopStateAnswer> & { was_latched?: boolean };
  if (o.status) answer = (await getJson(base, "/v1/estop")) as EstopStateAnswer;
  else answer = (await getJson(base, "/v1/estop/reset", { reason: o.reason, source: "cli" })) as EstopAnswer & { was_latched: boolean };
  if (o.json) return console.log(JSON.stringify(answer, null, 2));
  if (o.reset && answer.was_latched === false) console.log("emergency stop: was not latched; nothing to reset");
  else if (o.reset) console.log("emergency stop: reset; nothing moves until a client takes control and commands");
  else console.log(answer.latched ? `${formatEstop(answer)}\n${RESET_HINT}` : formatEstop(answer));
  if (o.status && answer.default_category !== undefined) console.log(`default stop category on this body: ${answer.default_category}`);
}
