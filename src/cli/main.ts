/**
 * `bodylink`: the command line. Every command has --help; errors are one line on stderr and a
 * non-zero exit (2 for usage errors).
 */
import { Command, CommanderError } from "commander";
import { BodylinkError } from "../errors.js";
import { registerChest } from "./chest.js";
import { CliError } from "./errors.js";
import { registerEstop } from "./estop.js";
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
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerServe(program);
  registerLs(program);
  registerRecord(program);
  registerLolaDump(program);
  registerVerify(program);
  registerReplay(program);
  registerFleet(program);
  registerInspect(program);
  registerChest(program);
  registerEstop(program);
  return program;
}

export async function main(argv = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof CliError) {
      console.error(`bodylink: ${e.message}`);
      return e.exitCode;
    }
    if (e instanceof BodylinkError) {
      console.error(`bodylink: ${e.message} [${e.code}]`);
      return 1;
    }
    console.error(`bodylink: ${(e as Error).message ?? e}`);
    return 1;
  }
}

const code = await main();
if (code !== 0) process.exit(code);
