/**
 * Who may talk to a runtime's HTTP and WebSocket servers (docs/security.md).
 * One rule set, used by the robot API (fastify onRequest hook, which also sees WebSocket upgrades)
 * and by the TNY-360 API server (its `upgrade` handler):
 *
 * 1. **Host** (against DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1 is
 *    same-origin with itself, not with us): the Host header's name must be a loopback name, the
 *    bound address (for a wildcard bind, any of this machine's addresses and its hostname), or one
 *    given with `--allow-host` ("*" allows any). Else 421.
 * 2. **Token**, when one is set (required off loopback): `Authorization: Bearer <token>`, or
 *    `?token=` (a browser cannot set headers on a WebSocket, nor can the TNY-360 vendor SDK; the
 *    dashboard page passes it on from its own URL, as Jupyter's does). Compared in constant time
 *    (SHA-256 of both, then timingSafeEqual: neither length nor content leaks). Else 401. The
 *    dashboard's page and script hold no robot data and load without it.
 * 3. **Origin** on every WebSocket upgrade and every state-changing request (not GET/HEAD/OPTIONS):
 *    allowed when absent (programs: curl, the SDK in Node, the TNY-360 SDK), when it is this
 *    server's own origin (`http://<Host>`), or when listed with `--allow-origin` ("*" allows any).
 *    Else 403.
 * 4. **Non-simple**: a POST must carry `Content-Type: application/json` or an `x-bodylink-*`
 *    header (PUT and DELETE are never simple: a browser always asks first). A browser sends neither cross-origin without a CORS preflight, which this
 *    server never grants, so no `fetch(…, { mode: "no-cors" })` or form post can act. Else 415.
 *
 * Prepare side only (runs per request, never in the cycle).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { hostname, networkInterfaces } from "node:os";
import { BodylinkError } from "../errors.js";

export interface WebAccessOptions {
  /** Extra names (or addresses) accepted in the Host header; "*" accepts any. */
  allowHosts?: readonly string[];
  /** Extra origins (scheme://host[:port]) allowed to open WebSockets and change state; "*" allows any. */
  allowOrigins?: readonly string[];
  /** When set, every request must present it (Bearer header, or ?token= on a WebSocket upgrade). */
  token?: string | null;
}

/** The parts of a request the checks read (node's IncomingMessage and fastify's request both fit). */
export interface AccessRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"];
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** True for an address or name that stays on this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::ffff:127.0.0.1";
}

/**
 * Refuse to serve off loopback without a token (docs/security.md): anyone on the network could
 * otherwise move the robot. Throws the one-line error `serve` prints.
 */
export function requireTokenOffLoopback(host: string, token: string | null | undefined): void {
  if (!isLoopbackHost(host) && !token) throw new BodylinkError("BL_ERR_WEB_TOKEN_NEEDED", host);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The name part of a Host header: "127.0.0.1:8780" → "127.0.0.1", "[::1]:80" → "::1". */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") > 0 ? h.indexOf("]") : undefined);
  const colon = h.lastIndexOf(":");
  return colon > 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** Client-supplied text for a message: printable ASCII only, bounded. */
function shown(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}

export class WebAccess {
  readonly #names = new Set<string>();
  readonly #anyHost: boolean;
  readonly #origins: Set<string>;
  readonly #anyOrigin: boolean;
  readonly #token: Buffer | null;

  /** `boundHost`: the address the server listens on (a wildcard adds this machine's addresses). */
  constructor(boundHost: string, opts: WebAccessOptions = {}) {
    for (const n of LOOPBACK_NAMES) this.#names.add(n);
    const bound = hostName(boundHost.includes(":") && !boundHost.startsWith("[") ? `[${boundHost}]` : boundHost);
    this.#names.add(bound);
    if (bound === "0.0.0.0" || bound === "::") {
      this.#names.add(hostname().toLowerCase());
      for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) this.#names.add(a.address.toLowerCase());
    }
    const extra = opts.allowHosts ?? [];
    this.#anyHost = extra.includes("*");
    for (const h of extra) this.#names.add(hostName(h));
    const origins = opts.allowOrigins ?? [];
    this.#anyOrigin = origins.includes("*");
    this.#origins = new Set(origins.map((o) => o.replace(/\/+$/, "").toLowerCase()));
    this.#token = opts.token ? digest(opts.token) : null;
  }

  /** True when a token is required. */
  get tokenRequired(): boolean {
    return this.#token !== null;
  }

  /**
   * The refusal for this request, or null when it may proceed. `upgrade`: a WebSocket handshake;
   * `page`: a static page that holds no robot data (the dashboard's HTML and script), served
   * without the token so that a browser can load it, as Jupyter serves its login page.
   */
  check(req: AccessRequest, { upgrade = false, page = false }: { upgrade?: boolean; page?: boolean } = {}): BodylinkError | null {
    const host = first(req.headers.host) ?? "";
    const name = hostName(host);
    if (!this.#anyHost && !this.#names.has(name) && !isLoopbackHost(name)) return new BodylinkError("BL_ERR_WEB_HOST", shown(host));
    if (this.#token && !page && !this.#tokenPresented(req)) return new BodylinkError("BL_ERR_WEB_TOKEN");
    const method = (req.method ?? "GET").toUpperCase();
    const changes = !SAFE_METHODS.has(method);
    if (upgrade || changes) {
      const origin = first(req.headers.origin);
      if (origin !== undefined && !this.#originAllowed(origin, host)) {
        return new BodylinkError("BL_ERR_WEB_ORIGIN", shown(origin), upgrade ? "open a WebSocket to" : `send ${method} requests to`);
      }
    }
    if (method === "POST" && !nonSimple(req)) return new BodylinkError("BL_ERR_WEB_SIMPLE_REQUEST", method);
    return null;
  }

  #originAllowed(origin: string, host: string): boolean {
    const o = origin.toLowerCase();
    if (this.#anyOrigin || this.#origins.has(o)) return true;
    // Same origin: the page was loaded from the very host:port this request is addressed to.
    return o === `http://${host.toLowerCase()}` || o === `https://${host.toLowerCase()}`;
  }

  #tokenPresented(req: AccessRequest): boolean {
    const token = this.#token!;
    const auth = first(req.headers.authorization);
    const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
    if (m && timingSafeEqual(digest(m[1]!), token)) return true;
    const q = tokenFromUrl(req.url);
    return q !== null && timingSafeEqual(digest(q), token);
  }
}

/** `?token=` of a request URL, or null. */
export function tokenFromUrl(url: string | undefined): string | null {
  if (!url) return null;
  const i = url.indexOf("?");
  if (i < 0) return null;
  return new URLSearchParams(url.slice(i + 1)).get("token");
}

/** The URL with any token in its query replaced by "***" (for logs). */
export function redactToken(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/g, "$1***");
}

/** A request a browser could not send cross-origin without a preflight. */
function nonSimple(req: AccessRequest): boolean {
  const type = first(req.headers["content-type"]);
  if (type && /^application\/json\s*(;|$)/i.test(type)) return true;
  for (const k of Object.keys(req.headers)) if (k.startsWith("x-bodylink-")) return true;
  return false;
}
