/**
 * Every error bodylink reports to a user, in one table (fastify's lib/errors.js habit).
 * Codes are `BL_ERR_<AREA>_<WHAT>`; each has an HTTP status for the robot API and a message that
 * says what to try next. docs/errors.md lists exactly these codes (a test checks it).
 */

export const ERRORS = {
  BL_ERR_LINK_NO_DEVICE: {
    status: 503,
    message: "no chest board found (USB vendor id 0xffff); is the robot powered and is this the robot's head? For the simulator: `bodylink serve` without --usb, the chest-board tools with --sim",
  },
  BL_ERR_LINK_USB_UNAVAILABLE: { status: 503, message: "the usb package could not be loaded (%s); reinstall with `npm ci`" },
  BL_ERR_LINK_BUSY: { status: 409, message: "the chest board is held by a running runtime (%s); stop it first: Ctrl-C in its terminal, or kill %s (on a stock robot: systemctl stop lola hal)" },
  BL_ERR_LINK_LOST: { status: 503, message: "the body link is down: %s" },
  BL_ERR_CORE_UNRESPONSIVE: { status: 503, message: "the real-time core does not answer (%s); see GET /v1/health" },
  BL_ERR_CORE_DIED: { status: 503, message: "the real-time core died (%s); the body was sent its safe state" },
  BL_ERR_BODY_FINALIZED: { status: 503, message: "this runtime was shut down; create a new one" },
  BL_ERR_PREFS_CRC: { status: 500, message: "preference block CRC mismatch: stored %s, computed %s; the block was not used" },
  BL_ERR_PREFS_READ: { status: 500, message: "preference piece at offset %s failed: %s" },
  BL_ERR_PREFS_UNAVAILABLE: { status: 404, message: "this body link has no preference block: %s; `bodylink state` shows RobotConfig's body id and version" },
  BL_ERR_AUTH_HELD: { status: 409, message: "control is held by %s until %s; wait for its lease to expire or ask it to release" },
  BL_ERR_AUTH_REQUIRED: { status: 403, message: "this command needs control authority: acquire a lease (POST /v1/control) and send its id in the x-bodylink-lease header" },
  BL_ERR_AUTH_UNKNOWN_LEASE: { status: 403, message: "lease %s is not held (expired or released); acquire a new one" },
  BL_ERR_ESTOP_LATCHED: { status: 409, message: "%s; nothing moves until it is reset: POST /v1/estop/reset with a reason, or `bodylink estop --reset --reason TEXT`" },
  BL_ERR_ESTOP_SOCKET_RESET: {
    status: 403,
    message: "the local e-stop socket only stops: reset through the robot API, which checks who may (`bodylink estop --reset --reason TEXT`, or POST /v1/estop/reset)",
  },
  BL_ERR_CMD_INVALID: { status: 400, message: "invalid command: %s" },
  BL_ERR_CMD_UNSUPPORTED: { status: 404, message: "this body (%s) has no %s" },
  BL_ERR_CMD_JOINT_FAULT: { status: 409, message: "joint %s has error id %s and is stopped; diagnose the fault, then clear it (clearError) before commanding motion" },
  BL_ERR_STATE_NONE: { status: 503, message: "no current state yet: the body has not completed a cycle" },
  BL_ERR_LOLA_SOCKET: { status: 500, message: "cannot serve LoLA on %s: %s" },
  BL_ERR_LOLA_CONFIG: { status: 500, message: "cannot build the LoLA sensor message: %s" },
  BL_ERR_RECORD_OPEN: { status: 500, message: "cannot create the recording %s: %s; check the directory exists and is writable" },
  BL_ERR_RECORD_WRITE: { status: 500, message: "recording stopped: %s; the runtime goes on (free disk space, or record to another disk)" },
  BL_ERR_RECORD_READ: { status: 400, message: "cannot read %s: %s" },
  BL_ERR_VERIFY_INPUT: { status: 400, message: "cannot verify: %s" },
  BL_ERR_REPLAY_INPUT: { status: 400, message: "cannot replay: %s" },
  BL_ERR_EXPORT_INPUT: { status: 400, message: "cannot export: %s" },
  BL_ERR_VERIFY_DIFFERENT: { status: 422, message: "%s values differ (in %s of %s LoLA messages); the first differences are listed above" },
  BL_ERR_CLI_NO_RUNTIME: { status: 503, message: "no runtime answers at %s; start one with `bodylink serve` (or pass --url)" },
  BL_ERR_CLI_NOT_RUNNING: { status: 503, message: "no runtime is running on this machine; start one with `bodylink serve` (or pass --url http://HOST:PORT)" },
  BL_ERR_CLI_NO_SUCH_ROBOT: { status: 404, message: "no runtime named %s is running on this machine (running: %s); `bodylink ls` lists them" },
  BL_ERR_CLI_WHICH_ROBOT: { status: 409, message: "%s runtimes are running (%s); choose one with --robot NAME (or --url)" },
  BL_ERR_RUNTIME_DIR: { status: 500, message: "runtime directory %s %s; fix it, or point BODYLINK_RUNTIME_DIR at a directory only you own" },
  BL_ERR_RUNTIME_NAME_TAKEN: { status: 409, message: "a runtime named %s is already running (%s); stop it first, or choose another --name" },
  BL_ERR_FLEET_CONFIG: { status: 400, message: "fleet configuration: %s" },
  BL_ERR_FLEET_UNREACHABLE: { status: 503, message: "cannot reach the fleet's NATS server at %s: %s; is nats-server running (with JetStream: -js) and are the credentials right?" },
  BL_ERR_FLEET_NO_ROBOT: { status: 404, message: "no robot named %s is in the fleet (present: %s); `bodylink fleet ls` lists them" },
  BL_ERR_FLEET_NO_ANSWER: { status: 504, message: "%s did not answer within %s ms (it may have left the fleet or lost the broker)" },
  BL_ERR_FLEET_LEASE_STORE: { status: 503, message: "the fleet lease could not be recorded in the %s bucket (%s); control was not granted" },
  BL_ERR_FLEET_RATE_LIMITED: { status: 429, message: "%s: too many fleet requests (%s); slow down and retry (e-stops are never limited)" },
  BL_ERR_FLEET_BUSY: { status: 503, message: "%s is working on %s fleet requests already; retry shortly (e-stops are never queued behind them)" },
  BL_ERR_FLEET_INSECURE: {
    status: 400,
    message:
      "--fleet %s has no credentials: anyone who reaches the broker could see and stop every robot; give the robot its identity (--fleet-dir DIR from `bodylink fleet init`, or --fleet-nkey/--fleet-creds/--fleet-user/--fleet-token), or pass --fleet-insecure on a broker only you can reach",
  },
  BL_ERR_FLEET_UNSIGNED: {
    status: 403,
    message:
      "this fleet command moves the robot or releases its e-stop, so it needs an operator's signature: send it with `bodylink fleet …` and your operator key (--fleet-dir), or sign it as docs/fleet.md says",
  },
  BL_ERR_FLEET_SIGNATURE: { status: 403, message: "the operator's signature was refused: %s" },
  BL_ERR_FLEET_NO_OPERATORS: {
    status: 403,
    message:
      "this robot trusts no operator key, so over the fleet it can be seen and stopped but not commanded or reset; trust one with `bodylink fleet keys add DIR operator NAME` and give the robot its new bundle",
  },
  BL_ERR_FLEET_UNVERIFIED: { status: 502, message: "%s answered but the answer could not be verified against the robot keys this client knows (%s); a forged answer is not an answer" },
  BL_ERR_CLI_USAGE: { status: 400, message: "%s (see `%s --help`)" },
  BL_ERR_CLI_FAILED: { status: 500, message: "%s" },
  BL_ERR_CLI_INTERNAL: { status: 500, message: "internal error: %s; this is a bug, please report it with the command line that caused it" },
  BL_ERR_SERVE_PORT_IN_USE: { status: 409, message: "the %s port %s on %s is in use (another bodylink, or another program); choose another with %s (0 picks a free one)" },
  BL_ERR_SERVE_BAD_HOST: { status: 400, message: "cannot bind to --host %s: %s; give an address of this machine (127.0.0.1: loopback only, 0.0.0.0: every interface)" },
  BL_ERR_SERVE_LISTEN: { status: 500, message: "cannot serve the %s: %s" },
  BL_ERR_CLI_CONFIG: { status: 400, message: "%s has %s problem%s (each listed above with its key's path); fix the file, then check it with `bodylink config print --config FILE`" },
  BL_ERR_LOG_FILE: { status: 500, message: "cannot write the log to %s: %s; check the directory exists and is writable, or leave out --log-file (the log then goes to stderr)" },
  BL_ERR_API_BAD_REQUEST: { status: 400, message: "invalid request: %s" },
  BL_ERR_API_NO_ROUTE: { status: 404, message: "no route %s %s; GET /openapi.json lists every route" },
  BL_ERR_API_INTERNAL: { status: 500, message: "internal error: %s; this is a bug, please report it with the request that caused it" },
  BL_ERR_API_BODY_TOO_LARGE: { status: 413, message: "request body too large: this route takes at most %s bytes; send one command per request" },
  BL_ERR_API_STREAM_FULL: { status: 503, message: "the state stream has its maximum of %s subscribers; close one, or start serve with a higher --max-subscribers" },
  BL_ERR_WEB_HOST: {
    status: 421,
    message: "Host %s is not served here: only loopback names, the bound address and --allow-host names are (a page reaching us through another name, as DNS rebinding does, is refused)",
  },
  BL_ERR_WEB_ORIGIN: { status: 403, message: "a page from origin %s may not %s this runtime: only its own pages, programs that send no Origin, and --allow-origin origins may" },
  BL_ERR_WEB_SIMPLE_REQUEST: { status: 415, message: "%s requests that change state need Content-Type: application/json or an x-bodylink-* header (so that no web page can send them blind)" },
  BL_ERR_WEB_TOKEN: { status: 401, message: "this runtime needs its token: send Authorization: Bearer <token> (on a WebSocket also ?token=<token>); serve printed it, or see BODYLINK_TOKEN" },
  BL_ERR_WEB_TOKEN_NEEDED: { status: 400, message: "--host %s is not loopback: pass --token <secret> or set BODYLINK_TOKEN, else anyone on the network could move the robot" },
  BL_ERR_CLIENT_WRONG_BODY: { status: 409, message: "the server at %s serves a %s body, not %s; check the URL or the expectBody option" },
  BL_ERR_CLIENT_NOT_THIS_BODY: { status: 409, message: "%s is for a %s body; the server at %s serves %s (narrow on client.body, or connect with expectBody)" },
  BL_ERR_CLIENT_NO_WEBSOCKET: { status: 500, message: 'no WebSocket implementation; pass { WebSocket } to connect() (in Node 20: import WebSocket from "ws")' },
  BL_ERR_CLIENT_CLOSED: { status: 499, message: "the client was closed; connect() again" },
  BL_ERR_CLIENT_NO_STATE: { status: 504, message: "no %s from %s within %s ms; is the body's link up? (GET /v1/health says)" },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** An error with a stable code, an HTTP status and a message formatted from the table. */
export class BodylinkError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, ...args: Array<string | number>) {
    let i = 0;
    super(ERRORS[code].message.replace(/%s/g, () => String(args[i++] ?? "?")));
    this.name = "BodylinkError";
    this.code = code;
    this.status = ERRORS[code].status;
  }
}

/** Words for the file-system errors a user meets (a path mistyped, a directory given, a full disk). */
const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
  ENOSPC: "no space left on the device",
  EROFS: "a read-only file system",
  EMFILE: "too many open files",
};

/** What a file-system error means, in words (Node's own message for anything else). */
export function fileErrorText(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && FILE_ERRORS[code]) return FILE_ERRORS[code];
  return e instanceof Error ? e.message : String(e);
}
