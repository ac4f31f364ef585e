/**
 * The command line's frame: a program of the commands it is given, usage errors routed to the right
 * --help, every error one line on stderr with a code (reportError in errors.ts) and a non-zero exit
 * (2 for usage errors). main.ts runs it with every command; estop-main.ts with `estop` alone, so a
 * stop typed in a hurry loads none of the servers' modules (bin/bodylink.js picks the entry).
 */
import { Command, type CommanderError } from "commander";
import { reportError, withCommand } from "./errors.js";

/** Adds one command (or a family) to the program. */
export type RegisterCommand = (program: Command) => void;

export function buildProgram(commands: readonly RegisterCommand[]): Command {
  const program = new Command("bodylink").description("A runtime between a robot's body and the software that drives it (NAO v6, AIRBOT P7, TNY-360). Simulator by default.").version("0.1.0");
  for (const register of commands) register(program);
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

export async function runCli(commands: readonly RegisterCommand[], argv = process.argv): Promise<number> {
  // `bodylink state --watch | head -n 1`: a closed pipe ends the command quietly, not with a stack
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    process.exit(reportError(e));
  });
  try {
    await buildProgram(commands).parseAsync(argv);
    return 0;
  } catch (e) {
    return reportError(withCommand(e, running));
  }
}
