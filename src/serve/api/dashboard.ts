/**
 * The dashboard: a read-only status page for any body, served by the robot API at `GET /` with its
 * assets under `/dashboard/…` (docs/dashboard.md). The page is plain DOM and runs the real client
 * SDK: `web/main.ts` and everything it imports (src/client, the bodies' joint tables) are bundled
 * with esbuild into one ES module, in memory, on the first request for it (once per process), so
 * `npm start` needs no build step and no build output is written anywhere.
 *
 * The routes are hidden from the OpenAPI document (`schema.hide`): they are a page for people, not
 * part of the API the document describes. Only a fixed set of files is served (no path from the
 * request ever reaches the file system).
 *
 * Prepare side only (allocates): nothing here runs in the cycle.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import { BodylinkError } from "../../errors.js";

/** web/ (same depth from src/serve/api and from dist/serve/api). */
const WEB_DIR = fileURLToPath(new URL("../../../web/", import.meta.url));

/** The page may load only what this server serves; the stream is same-origin ('self' covers ws:). */
const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  readonly contentType: string;
  /** Loads the bytes; called once, the promise is kept. */
  readonly load: () => Promise<string>;
}

const ASSETS: Readonly<Record<string, Asset>> = {
  "index.html": { contentType: "text/html; charset=utf-8", load: () => readFile(`${WEB_DIR}index.html`, "utf8") },
  "style.css": { contentType: "text/css; charset=utf-8", load: loadStyle },
  "main.js": { contentType: "text/javascript; charset=utf-8", load: () => bundle("main.ts") },
  // The fleet page (docs/fleet.md), served when the runtime joined a fleet.
  "fleet.html": { contentType: "text/html; charset=utf-8", load: () => readFile(`${WEB_DIR}fleet.html`, "utf8") },
  "fleet.css": { contentType: "text/css; charset=utf-8", load: () => readFile(`${WEB_DIR}fleet.css`, "utf8") },
  "fleet.js": { contentType: "text/javascript; charset=utf-8", load: () => bundle("fleet.ts") },
};

// One copy per process: every server (and every test app) serves the same bytes. A failed load is
// forgotten so the next request tries again (e.g. after fixing a syntax error in web/).
const loaded = new Map<string, Promise<string>>();

function load(name: string, asset: Asset): Promise<string> {
  let p = loaded.get(name);
  if (!p) {
    p = asset.load();
    loaded.set(name, p);
    p.catch(() => loaded.delete(name));
  }
  return p;
}

/** web/style.css after uPlot's own stylesheet (one request; the page's rules win). */
async function loadStyle(): Promise<string> {
  const uplotCss = fileURLToPath(import.meta.resolve("uplot/dist/uPlot.min.css"));
  const [u, own] = await Promise.all([readFile(uplotCss, "utf8"), readFile(`${WEB_DIR}style.css`, "utf8")]);
  return `${u}\n${own}`;
}

/** Bundle web/ENTRY and its imports into one ES module (esbuild, in memory). */
async function bundle(entry: string): Promise<string> {
  // esbuild is loaded only when the page is asked for: the API itself never needs it.
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [`${WEB_DIR}${entry}`],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
    legalComments: "none",
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for web/${entry}`);
  return file.text;
}

async function serve(reply: FastifyReply, name: string): Promise<FastifyReply> {
  const asset = ASSETS[name]!;
  let body: string;
  try {
    body = await load(name, asset);
  } catch (e) {
    throw new BodylinkError("BL_ERR_API_INTERNAL", `dashboard asset ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return reply
    .header("content-type", asset.contentType)
    .header("cache-control", "no-cache")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("content-security-policy", CONTENT_SECURITY_POLICY)
    .send(body);
}

/**
 * Add `GET /` (the page) and `GET /dashboard/:file` (main.js, style.css) to `app`, hidden from the
 * OpenAPI document.
 */
export function registerDashboard(app: Pick<FastifyInstance, "get">, opts: { fleet?: boolean } = {}): void {
  const hidden = { schema: { hide: true } };
  const files = new Set(["main.js", "style.css", ...(opts.fleet ? ["fleet.js", "fleet.css"] : [])]);
  app.get("/", hidden, async (_req, reply) => serve(reply, "index.html"));
  if (opts.fleet) app.get("/fleet", hidden, async (_req, reply) => serve(reply, "fleet.html"));
  app.get<{ Params: { file: string } }>("/dashboard/:file", hidden, async (req, reply) => {
    const name = req.params.file;
    if (!files.has(name)) throw new BodylinkError("BL_ERR_API_NO_ROUTE", "GET", `/dashboard/${name}`);
    return serve(reply, name);
  });
}
