/**
 * `bodylink`: the command line. Every command has --help; every error is one line on stderr with
 * a code (reportError in errors.ts) and a non-zero exit (2 for usage errors).
 */
import { Command, type CommanderError } from "commander";
import { registerChest } from "./chest.js";
import { registerEstop } from "./estop.js";
import { reportError, withCommand } from "./errors.js";
import { registerExport } from "./export.js";
import { registerInspect } from "./inspect.js";
import { registerFleet } from "./fleet.js";
import { registerLs } from "./ls.js";
import { registerLolaDump, registerRecord } from "./record.js";
import { registerReplay } from "./replay.js";
import { registerServe } from "./serve.js";
import { registerVerify } from "./verify.js";

export function buildProgram(): Command {
  const program = new Command("bodylink")
    .description("A runtime between a robot's body and the software that drives it (NAO v6, AIRBOT P7, TNY-360). Simulator by default.")
    .version("0.1.0");
  registerServe(program);
  registerLs(program);
  registerRecord(program);
  registerLolaDump(program);
  registerVerify(program);
  registerReplay(program);
  registerExport(program);
  registerFleet(program);
  registerInspect(program);
  registerChest(program);
  registerEstop(program);
  routeUsageErrors(program);
  // A usage error raised inside an action (e.g. `estop --reset` without --reason) points at the
  // --help of the command that was running, as the option parsers' errors do.
  program.hook("preAction", (_root, action) => {
    running = commandPathOf(action);
  });
  return program;
}

/** The command whose action runs now ("" before any). */
let running = "";

function commandPathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * Commander prints its own two-line errors and exits; instead, every command (including those
 * registered later by anyone, as long as it is before this runs) throws, tagged with its command
 * path so reportError can point at the right --help.
 */
function routeUsageErrors(cmd: Command, path: string[] = []): void {
  const commandPath = path.join(" ");
  cmd.configureOutput({ outputError: () => {} });
  cmd.exitOverride((e: CommanderError) => {
    throw Object.assign(e, { commandPath });
  });
  // An option's value parser fails with a usage error: point it at this command's --help.
  for (const opt of cmd.options) {
    const parse = opt.parseArg;
    if (!parse) continue;
    opt.parseArg = <T>(value: string, previous: T): T => {
      try {
        return parse(value, previous);
      } catch (e) {
        throw withCommand(e, commandPath);
      }
    };
  }
  for (const sub of cmd.commands) routeUsageErrors(sub, [...path, sub.name()]);
}

export async function main(argv = process.argv): Promise<number> {
  // `bodylink state --watch | head -n 1`: a closed pipe ends the command quietly, not with a stack
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    process.exit(reportError(e));
  });
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (e) {
    return reportError(withCommand(e, running));
  }
}

const code = await main();
if (code !== 0) process.exit(code);
