/**
 * The fleet page (served at /fleet when the runtime joined a fleet; docs/fleet.md). It asks its own
 * runtime's robot API, which answers from the runtime's NATS connection: GET /v1/fleet once a
 * second, POST /v1/fleet/estop (stop all), POST /v1/fleet/reset. Plain DOM; rows keyed by name.
 */

interface EstopView {
  readonly latched: boolean;
  readonly reason: string | null;
  readonly source: string | null;
  readonly phase: string;
}

interface HealthView {
  readonly link: string;
  readonly battery_charge: number | null;
  readonly cycle: { readonly cycles: number; readonly late_cycles: number; readonly jitter_p99_ms: number };
  readonly control: { readonly owner: string; readonly source: string } | null;
  readonly estop: EstopView;
}

interface RobotView {
  readonly name: string;
  readonly body: string;
  readonly host: string;
  readonly urls: { readonly api: string | null };
  readonly health: HealthView | null;
  readonly health_age_ms: number | null;
}

interface ScatterView {
  readonly replies: readonly { readonly name: string; readonly ok: boolean; readonly estop: EstopView }[];
  readonly missing: readonly string[];
  readonly unverified: readonly string[];
  readonly elapsed_ms: number;
}

const REFRESH_MS = 1000;
/** A robot whose last health is older than this is shown as stale. */
const STALE_MS = 3000;
const TOKEN = new URLSearchParams(location.search).get("token");

function el(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`fleet page: #${id} is missing`);
  return e;
}

async function api<T>(path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...(TOKEN ? { authorization: `Bearer ${TOKEN}` } : {}) };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method: body === undefined ? "GET" : "POST", headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const json = (await res.json()) as T & { message?: string };
  if (!res.ok) throw new Error(json.message ?? `${res.status}`);
  return json;
}

const rows = new Map<string, HTMLTableRowElement>();

function cell(row: HTMLTableRowElement, i: number, text: string, level?: "ok" | "warn" | "bad"): void {
  const td = row.cells[i]!;
  if (td.textContent !== text) td.textContent = text;
  if (level) td.dataset.level = level;
  else delete td.dataset.level;
}

function rowFor(name: string): HTMLTableRowElement {
  let row = rows.get(name);
  if (row) return row;
  row = document.createElement("tr");
  row.dataset.name = name;
  for (let i = 0; i < 9; i++) row.append(document.createElement(i === 0 ? "th" : "td"));
  row.cells[0]!.setAttribute("scope", "row");
  const reset = document.createElement("button");
  reset.type = "button";
  reset.textContent = "Reset";
  reset.hidden = true;
  reset.addEventListener("click", () => void resetRobots([name]));
  rows.set(name, row);
  (el("robots") as HTMLTableElement).tBodies[0]!.append(row);
  row.cells[8]!.append(document.createElement("a"), " ", reset);
  return row;
}

function render(robots: readonly RobotView[]): void {
  const seen = new Set<string>();
  for (const r of robots) {
    seen.add(r.name);
    const row = rowFor(r.name);
    const h = r.health;
    const stale = !h || (r.health_age_ms ?? 0) > STALE_MS;
    cell(row, 0, r.name);
    cell(row, 1, r.body);
    cell(row, 2, r.host);
    cell(row, 3, h ? (stale ? `${h.link} (stale)` : h.link) : "no answer", !h || stale ? "warn" : h.link === "ok" ? "ok" : "bad");
    cell(row, 4, h?.battery_charge != null ? `${Math.round(h.battery_charge * 100)} %` : "–");
    cell(row, 5, h ? `${h.cycle.late_cycles} late of ${h.cycle.cycles}, jitter p99 ${h.cycle.jitter_p99_ms.toFixed(2)} ms` : "–", h && h.cycle.late_cycles > 0 ? "warn" : undefined);
    cell(row, 6, h?.control ? `${h.control.owner} (${h.control.source})` : "nobody");
    cell(row, 7, h ? (h.estop.latched ? `LATCHED: ${h.estop.source ?? "?"}: ${h.estop.reason ?? ""}` : "clear") : "?", h?.estop.latched ? "bad" : "ok");
    const link = row.cells[8]!.querySelector("a")!;
    if (r.urls.api && link.getAttribute("href") !== `${r.urls.api}/`) {
      link.href = `${r.urls.api}/`;
      link.textContent = "dashboard";
    }
    row.cells[8]!.querySelector("button")!.hidden = !h?.estop.latched;
  }
  for (const [name, row] of rows) {
    if (seen.has(name)) continue;
    row.remove();
    rows.delete(name);
  }
}

function say(r: ScatterView, what: string): void {
  const latched = r.replies.filter((x) => x.estop.latched).length;
  el("result").textContent =
    `${what}: ${r.replies.length} answered in ${r.elapsed_ms.toFixed(0)} ms (${latched} latched)${r.missing.length ? `; NO ANSWER from ${r.missing.join(", ")}` : ""}${r.unverified.length ? `; forged or unverifiable answers ignored: ${r.unverified.join(", ")}` : ""}`;
}

async function stopAll(): Promise<void> {
  try {
    say(await api<ScatterView>("/v1/fleet/estop", { reason: "fleet page: stop all" }), "Stop all");
  } catch (e) {
    el("result").textContent = `Stop all failed: ${(e as Error).message}`;
  }
  void refresh();
}

async function resetRobots(names: readonly string[] | null): Promise<void> {
  const reason = prompt(`Why is it safe to reset ${names ? names.join(", ") : "every robot"}?`);
  if (!reason) return;
  try {
    say(await api<ScatterView>("/v1/fleet/reset", { ...(names ? { names } : {}), reason }), "Reset");
  } catch (e) {
    el("result").textContent = `Reset failed: ${(e as Error).message}`;
  }
  void refresh();
}

async function refresh(): Promise<void> {
  try {
    const f = await api<{ self: string; connection: string; robots: RobotView[] }>("/v1/fleet");
    el("self").textContent = `(from ${f.self})`;
    el("connection").textContent = `${f.robots.length} robot${f.robots.length === 1 ? "" : "s"} in the fleet`;
    render(f.robots);
  } catch (e) {
    el("connection").textContent = `fleet unavailable: ${(e as Error).message}`;
  }
}

el("stop-all").addEventListener("click", () => void stopAll());
el("reset-all").addEventListener("click", () => void resetRobots(null));
void refresh();
setInterval(() => void refresh(), REFRESH_MS);
