/**
 * The SDK's REST calls: headers (the client marker, the token, the lease), the answer parsed, and
 * a refusal turned into ApiError with the server's code. Prepare side; browser-safe.
 */
import { LEASE_HEADER } from "../bodies/link.js";
import { BodylinkError, type ErrorCode } from "../errors.js";
import { ApiError } from "./errors.js";
import type { ErrorAnswer } from "./messages.js";
import type { FetchLike } from "./options.js";

/** An ApiError with a code of the table, for a failure the SDK finds itself (status from the table). */
export function localError(code: ErrorCode, ...args: Array<string | number>): ApiError {
  const e = new BodylinkError(code, ...args);
  return new ApiError({ code: e.code, status: e.status, message: e.message });
}

/** Where and how a client calls its runtime. */
export interface RestTarget {
  /** Base URL of the REST API, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly fetch: FetchLike;
  readonly token: string | undefined;
}

/** One REST call; resolves the parsed answer or rejects with ApiError (status 0: nothing answered). */
export async function restCall<T>(to: RestTarget, method: string, path: string, body?: unknown, leaseId?: string): Promise<T> {
  // x-bodylink-client: every request is non-simple, so the server can tell it from a blind
  // cross-origin POST (docs/security.md), even without a body.
  const headers: Record<string, string> = { accept: "application/json", "x-bodylink-client": "sdk" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (to.token) headers.authorization = `Bearer ${to.token}`;
  if (leaseId) headers[LEASE_HEADER] = leaseId;
  let res: Awaited<ReturnType<FetchLike>>;
  try {
    res = await to.fetch(to.url + path, body === undefined ? { method, headers } : { method, headers, body: JSON.stringify(body) });
  } catch (cause) {
    const e = new BodylinkError("BL_ERR_CLI_NO_RUNTIME", to.url);
    throw new ApiError({ code: e.code, status: 0, message: e.message }, { cause });
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const p = parsed as Partial<ErrorAnswer> | null;
    throw new ApiError({
      code: p?.code ?? "BL_ERR_API_INTERNAL",
      status: res.status,
      message: p?.message ?? `HTTP ${res.status} from ${method} ${path}: ${text.slice(0, 200)}`,
      ...(p?.holder ? { holder: p.holder } : {}),
      ...(p?.problems ? { problems: p.problems } : {}),
    });
  }
  return parsed as T;
}

/** The stand-in when there is no fetch at all: every call fails, saying what to pass. */
export async function missingFetch(): Promise<never> {
  throw new TypeError("no fetch implementation: pass { fetch } to connect()");
}
