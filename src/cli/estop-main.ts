/**
 * `bodylink estop …` alone: the same command as in main.ts, in a program that loads nothing else, so
 * a stop typed in a hurry starts in the time of Node itself plus the stop's few modules (the whole
 * CLI loads the servers, fastify, NATS and MuJoCo's glue: seconds on a loaded machine).
 * bin/bodylink.js comes here when the first argument is `estop`.
 */
import { registerEstop } from "./estop.js";
import { runCli } from "./program.js";

const code = await runCli([registerEstop]);
if (code !== 0) process.exit(code);
