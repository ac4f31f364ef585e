/**
 * `bodylink`: the command line, every command (src/cli/program.ts is its frame). Every command has
 * --help; every error is one line on stderr with a code and a non-zero exit (2 for usage errors).
 * The modules here declare the commands and their flags only: each action loads what it runs when
 * it runs, so every command (and --help) starts without the servers, NATS, YAML or the recorder
 * (test/cli/lazy-commands.test.ts lists what each may load).
 */
import { registerChest } from "./chest.js";
import { registerConfig } from "./config.js";
import { registerEstop } from "./estop.js";
import { registerExport } from "./export.js";
import { registerInspect } from "./inspect.js";
import { registerFleet } from "./fleet.js";
import { registerLs } from "./ls.js";
import { registerLolaDump, registerRecord } from "./record.js";
import { registerReplay } from "./replay.js";
import { addServeOptions, registerServe } from "./serve-command.js";
import { registerVerify } from "./verify.js";
import { runCli } from "./program.js";

const code = await runCli([
  registerServe,
  (p) => registerConfig(p, addServeOptions),
  registerLs,
  registerRecord,
  registerLolaDump,
  registerVerify,
  registerReplay,
  registerExport,
  registerFleet,
  registerInspect,
  registerChest,
  registerEstop,
]);
if (code !== 0) process.exit(code);
