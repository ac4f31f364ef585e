/**
 * Where the chest-board tools (`prefs`, `boards`, `chest …`) get their answers, so none of them
 * answers from a simulator without saying so:
 * - a NAO runtime on this machine (or --url): its robot API (prefs, boards) or a refusal because it
 *   holds the board (chest tools); a runtime of another body: refused, that body has no chest board;
 * - otherwise the real chest board over USB (the default, as Aldebaran's tools do);
 * - `--sim`: the simulated board, said in the first line of the output.
 */
import { hasChestBoard } from "../bodies/parts.js";
import { BodylinkError } from "../errors.js";
import { chooseRuntime, listRuntimes, type RuntimeRecord, type TargetOptions } from "./discovery.js";
import { usageError } from "./errors.js";

export interface BoardFlags extends TargetOptions {
  usb?: boolean;
  sim?: boolean;
}

export type BoardSource = { readonly kind: "api"; readonly base: string; readonly runtime: RuntimeRecord | null } | { readonly kind: "usb" } | { readonly kind: "sim" };

/** The first line a simulated answer starts with. */
export const SIM_NOTE = "simulated chest board (--sim): not a robot's values";

/** Pick the source for a tool that reads through the robot API when a runtime runs (prefs, boards). */
export async function readSource(o: BoardFlags, command: string): Promise<BoardSource> {
  if (o.sim && o.usb) throw usageError("--sim and --usb exclude each other", command);
  if (o.sim) return { kind: "sim" };
  if (o.url) {
    const base = o.url.replace(/\/$/, "");
    const body = await bodyAt(base);
    if (!hasChestBoard(body)) throw new BodylinkError("BL_ERR_CMD_UNSUPPORTED", `${body} at ${base}`, "chest board (prefs and boards are the NAO's)");
    return { kind: "api", base, runtime: null };
  }
  if (o.robot === undefined && listRuntimes().length === 0) return { kind: "usb" };
  const r = chooseRuntime(o.robot);
  if (!hasChestBoard(r.body)) throw noChestBoard(r);
  if (!r.apiUrl) throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${r.name} (it serves no robot API yet)`);
  return { kind: "api", base: r.apiUrl, runtime: r };
}

/**
 * Pick the board for a chest tool: it needs the board itself, so a running NAO runtime (on USB
 * first) refuses, and so does a runtime of a body without one.
 */
export function toolSource(o: BoardFlags, command: string): Exclude<BoardSource, { kind: "api" }> {
  if (o.sim && o.usb) throw usageError("--sim and --usb exclude each other", command);
  if (o.sim) return { kind: "sim" };
  const all = listRuntimes();
  const naos = all.filter((x) => hasChestBoard(x.body));
  const holder = naos.find((x) => x.transport === "usb") ?? naos[0];
  if (holder) throw new BodylinkError("BL_ERR_LINK_BUSY", `${holder.name}, pid ${holder.pid}, ${holder.transport}`, holder.pid);
  if (all[0]) throw noChestBoard(all[0]);
  return { kind: "usb" };
}

function noChestBoard(r: RuntimeRecord): BodylinkError {
  return new BodylinkError("BL_ERR_CMD_UNSUPPORTED", `${r.body}, the runtime ${r.name}, pid ${r.pid}`, "chest board (the chest-board tools are the NAO's; --sim reads the simulated one)");
}

async function bodyAt(base: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${base}/v1/info`);
  } catch (e) {
    throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${base} (${(e as Error).cause ?? (e as Error).message})`);
  }
  const info = (await res.json().catch(() => null)) as { body?: string } | null;
  if (!res.ok || typeof info?.body !== "string") throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${base} (GET /v1/info answered ${res.status})`);
  return info.body;
}
