/**
 * `bodylink serve`'s options (the CLI's flags as one object; tests and benches pass them to
 * startRuntime) and the defaults they name. Apart from serve.ts so the bodies' serve entries
 * (src/cli/bodies/) read them without importing serve.
 */
import type { WakeMode } from "../runtime/clock.js";
import { SIM_KINDS, type SimKind } from "../bodies/sim-world.js";
import type { LogFormat, Logger, LogLevel } from "../serve/logger.js";
import { usageError } from "./errors.js";

export const VERSION = "0.1.0";
export const DEFAULT_API_PORT = 8780;
export const DEFAULT_LOLA_PATH = "/tmp/robocup";
/** Our LoLA socket's default on top of an upstream LoLA (which keeps /tmp/robocup). */
export const DEFAULT_UPSTREAM_LOLA_PATH = "/tmp/bodylink";

export interface ServeOptions {
  body: string;
  /**
   * How the body's core (in its own thread) waits for its next cycle (MonotonicClock's wake modes).
   * Defaults to WORKER_WAKE_DEFAULT, chosen by `npm run bench -- wake` (docs/performance.md).
   */
  coreWake?: WakeMode;
  /** The blocking wake-up's lead, ms (0..2), or "auto" (the default: learned; runtime/clock.ts). */
  coreSpinMs?: number | "auto";
  /** The runtime's name (unique on this machine; the robot's name in a fleet). Default: body and host, made unique. */
  name?: string;
  usb?: boolean;
  /**
   * NAO: run on top of the robot's own LoLA at this socket (`true`: /tmp/robocup) instead of the
   * chest board (docs/lola.md, "On a stock robot"). Our LoLA socket then defaults to /tmp/bodylink.
   */
  lolaUpstream?: string | boolean;
  /** With `lolaUpstream`: no message for this long is a stall (link lost), ms. Defaults to 60 (5 cycles). */
  lolaUpstreamStallMs?: number;
  host: string;
  /** Default: 8780, or a free port when 8780 is taken. 0 picks a free port. */
  apiPort?: number;
  lola: boolean;
  /** Default: /tmp/robocup while no other runtime serves it, else `<runtime dir>/<name>.lola`. */
  lolaPath?: string;
  lolaReaders: number;
  lolaGraceMs: number;
  acceptBoardVersion: number[];
  seed: number;
  /** NAO, P7 and TNY-360 simulators: the body's mechanics, "physics" (MuJoCo) or "kinematic"; default: $BODYLINK_SIM, else physics (simKindOf; docs/simulation.md). */
  sim?: SimKind;
  /**
   * Simulators: lockstep time (runtime/lockstep.ts): a cycle runs when the controlling LoLA client
   * has answered the last one (NAO), or as many as a robot API client asks for (POST /v1/sim/step,
   * every body); deterministic, as fast as the client. The robot runs on the main thread then.
   */
  lockstep?: boolean;
  tny: boolean;
  /** Default: 5621, or a free port when 5621 is taken. */
  tnyPort?: number;
  tnyHost?: string;
  /** Join this fleet (NATS URL: nats://HOST:PORT, tls://HOST:PORT); docs/fleet.md. */
  fleet?: string;
  /** State messages per second on bodylink.NAME.state (default 10). */
  fleetRate?: number;
  fleetUser?: string;
  fleetPassword?: string;
  fleetToken?: string;
  fleetNkey?: string;
  fleetCreds?: string;
  fleetCa?: string;
  /** A fleet identity's bundle (`bodylink fleet init`): its NKey, its signing key, the fleet's trusted keys; also the broker's URL. */
  fleetDir?: string;
  /** Join a broker without credentials, and count what cannot be verified (docs/security.md): only on a broker nobody else reaches. */
  fleetInsecure?: boolean;
  /** An operator's bundle whose key signs the /fleet page's resets (else robots refuse them). */
  fleetOperatorDir?: string;
  /** Presence TTL, ms (default 5000): a killed runtime leaves the fleet within it. */
  fleetTtlMs?: number;
  /**
   * Where the runtime logs (the safety log, the fleet bridge, the recorder, the robot API's internal
   * errors): serve/logger.ts. Defaults to a JSON log on stderr (nothing with `quiet`).
   */
  logger?: Logger;
  /** `serve --log-format`: pretty | json (default: pretty on a terminal, else json). Read by runServe. */
  logFormat?: LogFormat;
  /** `serve --log-level` (default info). Read by runServe. */
  logLevel?: LogLevel;
  /** `serve --log-file`: append the log to this file instead of stderr. Read by runServe. */
  logFile?: string;
  /** Collect V8's young generation between cycles at most this often, ms; 0 leaves it to V8. Defaults to 100. */
  gcEveryMs?: number;
  /**
   * The body's core latches a category-1 e-stop ("host unresponsive") when the main thread's event
   * loop has not run for this long once the runtime serves, ms (src/rt/host-watch.ts). Defaults to
   * DEFAULT_HOST_TIMEOUT_MS (1000).
   */
  hostTimeoutMs?: number;
  /** Log nothing (tests, benches), when no `logger` is given. */
  quiet?: boolean;
  /** Record to this MCAP file (docs/recordings.md). */
  record?: string;
  /** With `record`: start a new file every this many MB. */
  splitMb?: number;
  /** With `record`: stop recording after this many seconds. */
  duration?: number;
  /** With `record`: called when the recording ends by itself (null: `duration` reached; else the failure). */
  onRecordingStop?: (reason: string | null) => void;
  /** Host header names accepted besides loopback and the bound address ("*": any). */
  allowHost?: string[];
  /** Origins allowed to open WebSockets and change state besides the runtime's own pages ("*": any). */
  allowOrigin?: string[];
  /** Token every API and TNY-360 client must present; defaults to $BODYLINK_TOKEN; required off loopback. */
  token?: string;
  /** NAO: group (name or gid) given read/write on the LoLA socket (0660); else it is 0600. */
  lolaGroup?: string;
  /** Most state-stream subscribers at once. Defaults to the stream's default. */
  maxSubscribers?: number;
  /** Most robot API connections at once (the stalest idle one makes room); defaults to 1024, within the descriptor reserve. */
  maxConnections?: number;
  /** Serve the recording's channels live over the Foxglove WebSocket protocol: true for port 8765, or a port. */
  foxglove?: true | number;
}

/**
 * The simulator's mechanics when neither `--sim` nor $BODYLINK_SIM says: MuJoCo. Its cycle fits
 * the budget (docs/simulation.md, "Which one `npm start` gives you"), and a body that can fall,
 * slip and sag is the one a walking engine, a balance controller or a policy is checked against.
 */
export const DEFAULT_SIM: SimKind = "physics";

/**
 * The mechanics under a simulated body: `--sim`, else $BODYLINK_SIM, else {@link DEFAULT_SIM};
 * undefined with the NAO's real-body flags (--usb, --lola-upstream: no simulator, and no MuJoCo
 * loaded for nothing). The TNY-360's entry ignores it with --tny-host itself. A $BODYLINK_SIM that
 * names no mechanics is a usage error, not silently the default.
 */
export function simKindOf(o: Pick<ServeOptions, "sim" | "usb" | "lolaUpstream">, env: NodeJS.ProcessEnv = process.env): SimKind | undefined {
  if (o.sim) return o.sim;
  if (o.usb || o.lolaUpstream) return undefined;
  const fromEnv = env.BODYLINK_SIM;
  if (fromEnv === undefined || fromEnv === "") return DEFAULT_SIM;
  if (!(SIM_KINDS as readonly string[]).includes(fromEnv)) throw usageError(`BODYLINK_SIM=${JSON.stringify(fromEnv)}: choose ${SIM_KINDS.join(" or ")}`, "serve");
  return fromEnv as SimKind;
}
