/**
 * `bodylink serve`'s flags and the command itself, without what it runs: `--help`, a usage error
 * and every other command start without loading the servers (fastify, NATS, MuJoCo's glue, pino:
 * seconds on a loaded machine). The action loads serve.ts when it runs. `record` and
 * `config print` take the same flags (addServeOptions); `bodylink fleet …` the fleet's credentials.
 */
import type { Command } from "commander";
import { BODY_KINDS, bodyChoicesText, isBodyKind } from "../bodies/registry.js";
import { SIM_KINDS } from "../bodies/sim-world.js";
import { DEFAULT_FLEET_URL } from "../fleet/subjects.js";
import { DEFAULT_HOST_TIMEOUT_MS, HOST_TIMEOUT_RANGE_MS } from "../rt/core-shm.js";
import { WAKE_MODES, WORKER_WAKE_DEFAULT } from "../runtime/clock.js";
import { DEFAULT_FOXGLOVE_PORT } from "../serve/foxglove/constants.js";
import { LOG_FORMATS, LOG_LEVELS } from "../serve/log.js";
import { parseChoice, parseIntOption, usageError } from "./errors.js";
import { DEFAULT_API_PORT, DEFAULT_LOLA_PATH, DEFAULT_UPSTREAM_LOLA_PATH } from "./serve-options.js";
import type { RawServeOptions } from "./serve.js";

/** The credential flags `serve --fleet` and `bodylink fleet …` share. */
export function addFleetCredentialOptions(cmd: Command): Command {
  return cmd
    .option("--fleet-user <user>", "NATS user (password: --fleet-password or BODYLINK_FLEET_PASSWORD)")
    .option("--fleet-password <password>", "NATS password (prefer BODYLINK_FLEET_PASSWORD: argv is visible to other users)")
    .option("--fleet-token <token>", "NATS token (prefer BODYLINK_FLEET_TOKEN)")
    .option("--fleet-nkey <file>", "NATS NKey seed file")
    .option("--fleet-creds <file>", "NATS .creds file (JWT and seed)")
    .option("--fleet-ca <file>", "CA certificate for tls:// fleets")
    .option("--fleet-dir <dir>", "this identity's bundle from `bodylink fleet init` (NKey, signing key, the fleet's keys, the broker's URL; default: $BODYLINK_FLEET_DIR)")
    .option("--fleet-insecure", "allow a broker without credentials and count answers that cannot be verified (only on a broker nobody else can reach)");
}

/** A body the registry has: refused as the flags are read, before serve loads anything. */
function parseBody(v: string): string {
  if (!isBodyKind(v)) throw usageError(`unknown body ${JSON.stringify(v)}; choose ${bodyChoicesText()}`);
  return v;
}

function parseSpinMs(v: string): number | "auto" {
  if (v === "auto") return v;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < 0 || n > 2) throw usageError(`--core-spin-ms must be "auto" or a number of ms in 0..2, got ${JSON.stringify(v)}`);
  return n;
}

/** The options `serve` and `record` share: the body's first, the fleet's credentials with the fleet's, the log's last. */
export function addServeOptions(cmd: Command): Command {
  cmd
    .option("--body <body>", BODY_KINDS.join(" | "), parseBody, "nao")
    .option("--config <file>", "read these options from a YAML (or JSON) file, per robot; flags override it (docs/operations.md; `bodylink config print` shows the result)")
    .option(
      "--core-wake <mode>",
      `the body's real-time core (in its own thread) waits for its next cycle by: ${WAKE_MODES.join(" | ")} (default ${WORKER_WAKE_DEFAULT}; docs/architecture.md, Wake-up)`,
      parseChoice("--core-wake", WAKE_MODES),
    )
    .option(
      "--core-spin-ms <ms>",
      'with --core-wake wait or block: end the futex wait this long before each deadline and spin the rest, 0..2 ms, or "auto" (learned from how late the futex wakes on this machine; the default, but for the NAO, whose default is 0: no spin)',
      parseSpinMs,
    )
    .option("--name <name>", "this runtime's name: unique on this machine, the robot's name in a fleet (default: BODY-HOST, then BODY-HOST-2 …)")
    .option("--usb", "NAO: talk to the real chest board over USB instead of the simulator")
    .option(
      "--lola-upstream [path]",
      `NAO: on a stock robot, run on top of its own LoLA at PATH (default ${DEFAULT_LOLA_PATH}) instead of the chest board; our LoLA socket then defaults to ${DEFAULT_UPSTREAM_LOLA_PATH}`,
    )
    .option("--lola-upstream-stall-ms <ms>", "NAO, with --lola-upstream: no message for this long is a stall (link lost, stiffness 0)", parseIntOption("--lola-upstream-stall-ms", 24, 60000), 60)
    .option("--host <address>", "address the servers bind to (loopback unless told otherwise)", "127.0.0.1")
    .option("--api-port <port>", `robot API port; 0 picks a free one (default: ${DEFAULT_API_PORT}, or a free one when that is taken)`, parseIntOption("--api-port", 0, 65535))
    .option("--no-lola", "NAO: do not open the LoLA socket")
    .option(
      "--lola-path <path>",
      `NAO: LoLA socket path (default: ${DEFAULT_LOLA_PATH}, ${DEFAULT_UPSTREAM_LOLA_PATH} with --lola-upstream, or <runtime dir>/NAME.lola when another runtime serves that)`,
    )
    .option("--lola-readers <n>", "NAO: read-only LoLA clients allowed besides the controlling one", parseIntOption("--lola-readers", 0, 16), 0)
    .option("--lola-grace-ms <ms>", "NAO: how long a silent LoLA client's last command stays in force", parseIntOption("--lola-grace-ms", 50, 60000), 100)
    .option("--accept-board-version <v...>", "NAO: accepted motor-board configuration versions", (v: string, prev: number[] | undefined) => [
      ...(prev ?? []),
      parseIntOption("--accept-board-version", 0, 255)(v),
    ])
    .option("--seed <n>", "simulator seed", parseIntOption("--seed", 0, 2 ** 31 - 1), 1)
    .option(
      "--lockstep",
      "simulators: simulated time advances one cycle each time the controlling LoLA client answers (NAO) or a robot API client asks (POST /v1/sim/step, every body); deterministic, faster than real time (docs/simulation.md)",
    )
    .option(
      "--sim <mechanics>",
      `NAO, P7 and TNY-360 simulators: the body under the chest board, the arm service or the firmware, ${SIM_KINDS.join(" | ")} (default: $BODYLINK_SIM, else physics: MuJoCo, it can fall; kinematic cannot; docs/simulation.md)`,
      parseChoice("--sim", SIM_KINDS),
    )
    .option("--lola-group <group>", "NAO: let this group (name or gid) use the LoLA socket too (mode 0660; default 0600, this user only)")
    .option("--token <secret>", "every API and TNY-360 client must present this token (default: $BODYLINK_TOKEN); required with a --host other than loopback")
    .option("--allow-host <name...>", 'Host header names accepted besides loopback names and the bound address ("*": any; against DNS rebinding)')
    .option("--allow-origin <origin...>", "web origins (http://host:port) allowed to open the stream and TNY-360 WebSockets and to send commands, besides the runtime's own pages")
    .option("--max-subscribers <n>", "most state-stream subscribers at once", parseIntOption("--max-subscribers", 1, 100000))
    .option(
      "--max-connections <n>",
      "most robot API connections at once; at the limit the stalest idle one makes room (default 1024, never more than the descriptor limit less its reserve)",
      parseIntOption("--max-connections", 16, 1000000),
    )
    .option("--no-tny", "TNY-360: do not open the TNY-360 API server")
    .option("--tny-port <port>", "TNY-360: API server port (default: 5621, or a free one when that is taken)", parseIntOption("--tny-port", 0, 65535))
    .option("--tny-host <host>", "TNY-360: drive a real robot at this address instead of the simulator")
    .option("--fleet [url]", `join a fleet over NATS (default ${DEFAULT_FLEET_URL}; tls://HOST:PORT for TLS; docs/fleet.md)`)
    .option("--fleet-rate <hz>", "state messages per second on bodylink.NAME.state", parseIntOption("--fleet-rate", 1, 50))
    .option("--fleet-ttl-ms <ms>", "presence TTL: a killed runtime leaves the fleet within it (same for the whole fleet)", parseIntOption("--fleet-ttl-ms", 1000, 60000))
    .option("--fleet-operator-dir <dir>", "an operator's bundle whose key signs the /fleet page's resets (without one, robots refuse them)");
  return addFleetCredentialOptions(cmd)
    .option(
      "--gc-every-ms <ms>",
      "collect V8's young generation between cycles at most this often, so it never stops a cycle at random (0: leave it to V8)",
      parseIntOption("--gc-every-ms", 0, 60000),
      100,
    )
    .option(
      "--host-timeout-ms <ms>",
      `the body's core latches a category-1 e-stop ("host unresponsive") when the main thread has not answered for this long (default ${DEFAULT_HOST_TIMEOUT_MS}; docs/architecture.md, "Heartbeat")`,
      parseIntOption("--host-timeout-ms", HOST_TIMEOUT_RANGE_MS[0], HOST_TIMEOUT_RANGE_MS[1]),
    )
    .option("--split-mb <mb>", "with a recording: start a new file every N MB (files FILE-0001.mcap, FILE-0002.mcap, ...)", parseIntOption("--split-mb", 1, 1_000_000))
    .option("--duration <s>", "with a recording: stop recording after N seconds", parseIntOption("--duration", 1, 31_536_000))
    .option(
      "--foxglove [port]",
      `serve the recording's channels live to Foxglove (foxglove.websocket.v1; default port ${DEFAULT_FOXGLOVE_PORT}, same access rules as the API)`,
      parseIntOption("--foxglove", 0, 65535),
    )
    .option("--log-format <format>", `the log's lines: ${LOG_FORMATS.join(" | ")} (default: pretty on a terminal, json otherwise: a file, a pipe, journald)`, parseChoice("--log-format", LOG_FORMATS))
    .option("--log-level <level>", `log this level and above: ${LOG_LEVELS.join(" | ")} (default info)`, parseChoice("--log-level", LOG_LEVELS))
    .option("--log-file <file>", "append the log to FILE instead of stderr (rotate it with logrotate's copytruncate; docs/operations.md)");
}

export function registerServe(program: Command): void {
  addServeOptions(program.command("serve").description("run the runtime: a body (simulated unless told otherwise) and its servers"))
    .option("--record <file>", "record everything to an MCAP file while serving (docs/recordings.md)")
    .action(async (_raw: RawServeOptions, cmd: Command) => {
      const [{ optionsWithConfig }, { runServe }] = await Promise.all([import("./config.js"), import("./serve.js")]);
      const { opts } = await optionsWithConfig(cmd);
      await runServe(opts as RawServeOptions, { given: (key) => ["cli", "config"].includes(cmd.getOptionValueSource(key) ?? "") });
    });
}
