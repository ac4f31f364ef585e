/**
 * Every CLI failure leaves through here: `reportError` turns whatever was thrown (a BodylinkError,
 * a CliError, commander's usage error, a Node system error from listen or a socket) into ONE line
 * on stderr, `bodylink: <message> [<code>]` with a code from src/errors.ts (docs/errors.md), and
 * an exit code: 2 for usage errors, 1 otherwise. Commands throw; they never print errors
 * themselves or call process.exit with a message.
 */
import { CommanderError } from "commander";
import { BodylinkError, type ErrorCode } from "../errors.js";

/**
 * CLI failure with a code: pass the table's code that fits (the default is BL_ERR_CLI_USAGE for
 * exit 2, else BL_ERR_CLI_FAILED, whose message is only this one).
 */
export class CliError extends Error {
  readonly code: ErrorCode;
  constructor(
    message: string,
    readonly exitCode = 1,
    code?: ErrorCode,
  ) {
    super(message);
    this.name = "CliError";
    this.code = code ?? (exitCode === 2 ? "BL_ERR_CLI_USAGE" : "BL_ERR_CLI_FAILED");
  }
}

/** A usage error (exit 2): `bodylink: <what> (see `bodylink <command> --help`) [BL_ERR_CLI_USAGE]`. */
export function usageError(what: string, command = ""): UsageError {
  return Object.assign(new BodylinkError("BL_ERR_CLI_USAGE", what, command ? `bodylink ${command}` : "bodylink"), {
    exitCode: 2 as const,
    usage: { what, command },
  });
}
export type UsageError = BodylinkError & { exitCode: 2; usage: { what: string; command: string } };

/**
 * A usage error thrown without its command (an option parser does not know which command it
 * serves) pointed at that command's --help; anything else unchanged. main.ts wraps every option
 * parser with it.
 */
export function withCommand(e: unknown, command: string): unknown {
  if (e instanceof CliError && e.exitCode === 2 && e.code === "BL_ERR_CLI_USAGE") return usageError(e.message, command);
  const usage = (e as Partial<UsageError>)?.usage;
  if (e instanceof BodylinkError && usage && usage.command === "" && command !== "") return usageError(usage.what, command);
  return e;
}

export function parseIntOption(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === "" || !Number.isInteger(n) || n < min || n > max) throw usageError(`${name} must be an integer in ${min}..${max}, got ${JSON.stringify(v)}`);
    return n;
  };
}

export function parseChoice<T extends string>(name: string, choices: readonly T[]) {
  return (v: string): T => {
    if (!(choices as readonly string[]).includes(v)) throw new CliError(`${name} must be one of ${choices.join(", ")}, got ${JSON.stringify(v)}`, 2);
    return v as T;
  };
}

/**
 * What went wrong while binding a server (`what`: "robot API", "TNY-360 API") to host:port, in
 * the error table's words; anything else is returned unchanged.
 */
export function listenError(e: unknown, what: string, host: string, port: number, portFlag: string): unknown {
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case "EADDRINUSE":
      return new BodylinkError("BL_ERR_SERVE_PORT_IN_USE", what, port, host, portFlag);
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return new BodylinkError("BL_ERR_SERVE_BAD_HOST", host, "no such host or address");
    case "EADDRNOTAVAIL":
      return new BodylinkError("BL_ERR_SERVE_BAD_HOST", host, "not an address of this machine");
    case "EACCES":
      return new BodylinkError("BL_ERR_SERVE_LISTEN", `${what} on ${host}:${port}`, port < 1024 ? "ports below 1024 need root; choose a higher one" : "permission denied");
    default:
      return e;
  }
}

/** A warning: one line on stderr, `bodylink: warning: <what>`; the command goes on. */
export function warn(what: string): void {
  console.error(`bodylink: warning: ${what}`);
}

/** Print `e` as one line on stderr; returns the exit code. */
export function reportError(e: unknown): number {
  const line = (msg: string, code: ErrorCode) => console.error(`bodylink: ${msg.replace(/\s*\n\s*/g, "; ")} [${code}]`);
  if (e instanceof CommanderError) {
    if (e.exitCode === 0) return 0; // --help, --version
    // commander's message reads "error: unknown option '--x'"; its own printing is silenced (main.ts)
    // ("unknown command 'x'\n(Did you mean y?)" becomes one sentence)
    const msg = e.message.replace(/^error:\s*/, "").replace(/\s*\n\(Did you mean (.*)\?\)/, " (did you mean $1?)");
    const command = (e as CommanderError & { commandPath?: string }).commandPath ?? "";
    line(usageError(msg, command).message, "BL_ERR_CLI_USAGE");
    return 2;
  }
  if (e instanceof CliError) {
    line(e.message, e.code);
    return e.exitCode;
  }
  if (e instanceof BodylinkError) {
    line(e.message, e.code);
    return (e as BodylinkError & { exitCode?: number }).exitCode ?? 1;
  }
  const err = e as NodeJS.ErrnoException;
  if (err?.code === "EPIPE") return 0; // the reader went away (`| head`): nothing left to say
  line(new BodylinkError("BL_ERR_CLI_INTERNAL", err?.message ?? String(e)).message, "BL_ERR_CLI_INTERNAL");
  return 1;
}
