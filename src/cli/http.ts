/**
 * The CLI's one HTTP call to a runtime's robot API, kept apart from inspect.ts so `bodylink estop`
 * (src/cli/estop-main.ts) loads it without the servers' modules.
 */
import { BodylinkError } from "../errors.js";
import { CliError } from "./errors.js";

/** GET (or, with `body`, POST as JSON) one API path; one clear error when it fails. */
export async function getJson(base: string, path: string, post?: unknown): Promise<unknown> {
  let res: Response;
  try {
    // BODYLINK_TOKEN: the runtime's token, when it has one (serve --token; docs/security.md).
    const token = process.env.BODYLINK_TOKEN;
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    res = await fetch(base + path, post === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(post) });
  } catch (e) {
    throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${base} (${(e as Error).cause ?? (e as Error).message})`);
  }
  const body = (await res.json().catch(() => null)) as { message?: string; code?: string } | null;
  if (!res.ok) throw new CliError(`${path}: ${res.status} ${body?.message ?? ""}`.trim(), 1, (body?.code as BodylinkError["code"] | undefined) ?? "BL_ERR_CLI_FAILED");
  return body;
}
