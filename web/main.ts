/**
 * The dashboard page's script (served bundled as /dashboard/main.js; see src/serve/api/dashboard.ts
 * and docs/dashboard.md). It reads the robot through the client SDK exactly as programs do (the
 * same `connect`, the same getters: frozen snapshots, or null when the data is not current), polls
 * GET /v1/health and GET /v1/estop once a second, and commands only under a lease it takes like
 * any client (teleop.ts); the emergency stop needs none.
 *
 * Every stream message adds one row to the plots' history (store.ts, allocation-free); drawing
 * happens at most once per animation frame (tables, 3D view, feet) and at most ten times a second
 * for the plots, which only redraw what is on screen.
 */
import { type BodyKind, type BodylinkClient, connect, type EstopAnswer, type HealthAnswer, type LinkStatus, type RobotClient, SAFETY_FAULT, type StateMessage } from "../src/client/index.js";
import { DASHBOARD_BODIES, type DashboardBody, type JointColumns, type Limit, type MessageOf, messageOf, type SimWorld, withClient, withEntry } from "./bodies/index.js";
import { type ChartSpec, PALETTE, Plots, type SeriesSpec, WINDOWS_S } from "./plots.js";
import { BodyView } from "./scene.js";
import { SeriesStore } from "./store.js";
import { holderText, Teleop } from "./teleop.js";
import { clockTime, el, errorText, fmt, type Level, make, setLevel, setText } from "./util.js";

const ESTOP_REASON = "dashboard button";
const POLL_EVERY_MS = 1000;
/** Re-render this often even without messages, so a stalled stream shows as stale. */
const IDLE_RENDER_MS = 250;
/** 120 s of history at the stream's 20 Hz, plus room. */
const HISTORY_ROWS = 2600;
const MAX_PLOTTED_JOINTS = 6;
const MAX_EVENTS = 300;

// ---- the page's access token ----------------------------------------------------------------------
// `serve --token` prints the dashboard's URL with ?token=… (like Jupyter): the SDK then sends it as
// a Bearer header on REST and as ?token= on the stream (docs/security.md).

const TOKEN = new URLSearchParams(location.search).get("token") ?? undefined;

// ---- shared state ---------------------------------------------------------------------------------

let client: RobotClient | null = null;
let teleop: Teleop | null = null;
let view: BodyView | null = null;
let plots: Plots | null = null;
/** The body panel, taking the client's newest message. */
let panel: ((m: Readonly<StateMessage> | null) => void) | null = null;
const store = new SeriesStore(HISTORY_ROWS);

function status(text: string): void {
  setText(el("status"), `${clockTime(Date.now())}: ${text}`);
}

// ---- event log ------------------------------------------------------------------------------------

function logEvent(kind: string, text: string, level: "info" | "warn" | "bad" = "info"): void {
  const list = el("events");
  const li = make("li");
  li.dataset.level = level;
  li.dataset.kind = kind;
  li.append(make("time", undefined, clockTime(Date.now())), make("span", "kind", kind), make("span", "text", text));
  list.prepend(li);
  while (list.children.length > MAX_EVENTS) list.lastElementChild?.remove();
}

// ---- emergency stop (works before the SDK is connected too) and its latch --------------------------

let estopLatched: boolean | null = null;

async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (TOKEN) headers.authorization = `Bearer ${TOKEN}`;
  const r = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await r.text();
  if (!r.ok) {
    let msg = text.slice(0, 200);
    try {
      msg = (JSON.parse(text) as { message?: string }).message ?? msg;
    } catch {}
    throw Object.assign(new Error(`HTTP ${r.status}: ${msg}`), { status: r.status });
  }
  return text ? JSON.parse(text) : null;
}

const WORLD_VIEW_NOTE = "Physics (MuJoCo): the robot where the simulator has it, over its floor; red discs mark the links touching the floor.";

/** The simulation bar beside the 3D view (a physics body only): simulated time, real-time factor, a fall. */
function renderSim(world: SimWorld | null): void {
  const bar = el("sim-bar");
  const was = !bar.hidden;
  bar.hidden = world === null;
  const body = client?.body;
  if ((world !== null) !== was && body) setText(el("view-note"), world ? WORLD_VIEW_NOTE : DASHBOARD_BODIES[body].viewNote);
  if (!world) return;
  setText(el("sim-text"), `simulated ${world.time_s.toFixed(1)} s, ${world.real_time_factor.toFixed(2)}× real time`);
  el("sim-fallen").hidden = !world.fallen;
}

/** "Reset simulation": the chosen pose, under this page's lease (as any command). */
async function simReset(): Promise<void> {
  const c = client;
  // The bar and its button show only with a physics world; the select holds this body's poses (setUp).
  const pose = el<HTMLSelectElement>("sim-pose").value;
  const reset = c
    ? withClient(c, (d, cc) => {
        const p = d.simReset.poses.find((x) => x === pose);
        return p === undefined ? null : () => d.simReset.reset(cc, p);
      })
    : null;
  if (!reset) return;
  if (!teleop?.held) {
    status("Take control first: a simulation reset needs the lease, as any command.");
    return;
  }
  try {
    const r = await reset();
    logEvent("command", `simulation reset to ${pose} (time ${r.timeS.toFixed(1)} s)`);
  } catch (e) {
    status(`simulation reset refused: ${errorText(e)}`);
    logEvent("command", `simulation reset refused: ${errorText(e)}`, "warn");
  }
}

async function emergencyStop(): Promise<void> {
  const button = el<HTMLButtonElement>("estop");
  button.disabled = true;
  try {
    if (client) await client.emergencyStop(ESTOP_REASON, { source: "dashboard" });
    else await api("POST", "/v1/estop", { reason: ESTOP_REASON, source: "dashboard" });
    status("emergency stop sent; control revoked");
    void poll();
  } catch (e) {
    status(`emergency stop FAILED: ${errorText(e)}`);
  } finally {
    button.disabled = false;
  }
}

async function resetEstop(): Promise<void> {
  const b = el<HTMLButtonElement>("estop-reset");
  b.disabled = true;
  try {
    if (client) await client.resetEstop("reset from the dashboard", { source: "dashboard" });
    else await api("POST", "/v1/estop/reset", { reason: "reset from the dashboard", source: "dashboard" });
    status("emergency stop reset: take control again to command the robot");
    void poll();
  } catch (e) {
    status(`reset refused: ${errorText(e)}`);
  } finally {
    b.disabled = false;
  }
}

/** The latch, as health reports it (GET /v1/health's `estop`, the same answer as GET /v1/estop). */
function renderEstop(h: HealthAnswer): void {
  const e: EstopAnswer | null = h.estop ?? null;
  // A runtime without the latch in its health: the stop shows through the safety reason.
  const latched = e ? e.latched : h.safety_code === "estop";
  const banner = el("estop-banner");
  banner.hidden = !latched;
  document.body.classList.toggle("estop-latched", latched);
  el("estop-reset").hidden = !e;
  if (latched) {
    const parts = e
      ? [
          e.since_ms ? `since ${clockTime(e.since_ms)}` : "",
          e.source ? `by ${e.source}` : "",
          e.reason ? `(${e.reason})` : "",
          e.category !== null ? `category ${e.category}` : "",
          e.phase !== "none" ? `phase: ${e.phase}` : "",
        ]
      : [h.safety_reason ?? "", "(this runtime's stop does not latch)"];
    setText(el("estop-text"), `${parts.filter(Boolean).join(" ")}. Commands are refused until it is reset.`);
  }
  if (estopLatched !== null && latched !== estopLatched)
    logEvent("e-stop", latched ? `emergency stop latched${e?.source ? ` by ${e.source}` : ""}${e?.reason ? `: ${e.reason}` : ""}` : "emergency stop reset", latched ? "bad" : "info");
  estopLatched = latched;
}

// ---- joints table ---------------------------------------------------------------------------------

interface JointRow {
  readonly limit: Limit | null;
  readonly position: HTMLElement;
  readonly bar: HTMLElement;
  readonly mark: HTMLElement;
  readonly velocity: HTMLElement;
  readonly effort: HTMLElement;
  readonly temperature: HTMLElement | null;
  readonly extra: HTMLElement | null;
}
let rows: JointRow[] = [];

function buildJointRows(body: BodyKind, names: readonly string[]): void {
  const head = el("joints-head");
  const d = DASHBOARD_BODIES[body];
  const cols = ["Joint", "Position", "Position within limits", "Velocity (rad/s)", "Effort", ...(d.temperatures ? ["Temp. (°C)"] : []), d.extraColumn];
  head.replaceChildren(
    ...cols.map((c, i) => {
      const th = make("th", i === 0 ? undefined : i === 2 ? "bar-col" : "num", c);
      th.scope = "col";
      if (c === "Effort") th.id = "effort-h";
      return th;
    }),
  );
  const tbody = el("joints").querySelector("tbody")!;
  tbody.replaceChildren();
  const limits = d.limits(names);
  rows = names.map((name, i) => {
    const limit = limits[i] ?? null;
    const tr = make("tr");
    const th = make("th", undefined, name);
    th.scope = "row";
    const position = make("td", "num", "—");
    const barCell = make("td");
    const bar = make("div", "bar");
    bar.setAttribute("role", "meter");
    bar.setAttribute("aria-label", `${name} position within its limits`);
    const mark = make("div", "mark");
    if (limit) {
      bar.setAttribute("aria-valuemin", String(limit.minRad));
      bar.setAttribute("aria-valuemax", String(limit.maxRad));
      bar.title = `limits ${limit.minRad} … ${limit.maxRad}`;
      if (limit.minRad < 0 && limit.maxRad > 0) {
        const zero = make("div", "zero");
        zero.style.left = `${(100 * -limit.minRad) / (limit.maxRad - limit.minRad)}%`;
        bar.append(zero);
      }
    }
    mark.hidden = true;
    bar.append(mark);
    barCell.append(bar);
    const velocity = make("td", "num", "—");
    const effort = make("td", "num", "—");
    const temperature = d.temperatures ? make("td", "num", "—") : null;
    const extra = make("td", "num", "—");
    tr.append(th, position, barCell, velocity, effort, ...(temperature ? [temperature] : []), extra);
    tbody.append(tr);
    return { limit, position, bar, mark, velocity, effort, temperature, extra };
  });
}

function renderJoints(c: BodylinkClient, m: Readonly<StateMessage> | null): void {
  const joints = c.getJointState();
  const motors = c.getMotorState();
  const effortH = document.getElementById("effort-h");
  if (effortH) setText(effortH, `Effort (${joints?.effortUnit ?? "—"})`);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    // A body without efforts (the TNY-360 on a real robot) has no joint model: read the message.
    const v = joints?.angles[i] ?? m?.joint_positions[i];
    setText(row.position, fmt(v));
    setText(row.velocity, fmt(joints?.velocities[i] ?? m?.joint_velocities[i]));
    setText(row.effort, fmt(joints?.efforts[i], 2));
    if (row.temperature) setText(row.temperature, fmt(motors?.temperatures[i], 0));
    if (row.extra && m) {
      const cell = withEntry(m, (d, mm) => d.extraCell(mm, i, motors));
      setText(row.extra, cell.text);
      row.extra.dataset.level = cell.bad ? "bad" : "";
    }
    if (v === undefined || !row.limit) {
      row.mark.hidden = true;
      row.bar.removeAttribute("aria-valuenow");
      continue;
    }
    const { minRad, maxRad } = row.limit;
    const frac = Math.min(1, Math.max(0, (v - minRad) / (maxRad - minRad)));
    row.mark.hidden = false;
    row.mark.style.left = `${(frac * 100).toFixed(2)}%`;
    row.bar.classList.toggle("near", !row.limit.endsAreNormal && (frac < 0.03 || frac > 0.97));
    row.bar.setAttribute("aria-valuenow", v.toFixed(3));
    row.bar.setAttribute("aria-valuetext", `${v.toFixed(3)}, limits ${minRad} to ${maxRad}`);
  }
}

function renderImu(c: BodylinkClient, msg: Readonly<StateMessage> | null): void {
  const imu = c.getImuState();
  const axes = ["x", "y", "z"] as const;
  for (let k = 0; k < 3; k++) {
    setText(el(`acc-${axes[k]}`), fmt(imu?.linearAcceleration[k], 2));
    setText(el(`gyr-${axes[k]}`), fmt(imu?.angularVelocity[k], 3));
  }
  setText(el("imu-extra"), imu && msg ? withEntry(msg, (d, m) => d.imuText(m)) : "");
}

// ---- recording (one row per stream message) and the charts -----------------------------------------

interface Health {
  periodP99: number;
  execP99: number;
  lateRate: number;
}
const healthNow: Health = { periodP99: Number.NaN, execP99: Number.NaN, lateRate: Number.NaN };
let prevSeq = -1;
let prevTimestampMs = 0;
let jointNames: readonly string[] = [];
let plottedJoints: string[] = [];

interface Columns {
  readonly acc: readonly Float64Array[];
  readonly gyr: readonly Float64Array[];
  readonly joints: readonly JointColumns[];
  readonly named: Readonly<Record<string, Float64Array>>;
}
let columns: Columns | null = null;

/** The store's columns, looked up once (they never move: the store slides rows in place). */
function makeColumns(): Columns {
  const named: Record<string, Float64Array> = {};
  for (const k of [
    "angle.roll",
    "angle.pitch",
    "angle.yaw",
    "battery.charge",
    "battery.current",
    "feet.left",
    "feet.right",
    "power.voltage",
    "power.current",
    "cycle.period",
    "cycle.period_p99",
    "cycle.exec_p99",
    "cycle.late_per_s",
  ])
    named[k] = store.column(k);
  return {
    acc: ["x", "y", "z"].map((a) => store.column(`acc.${a}`)),
    gyr: ["x", "y", "z"].map((a) => store.column(`gyr.${a}`)),
    joints: jointNames.map((n) => ({
      position: store.column(`${n}.position`),
      target: store.column(`${n}.target`),
      effort: store.column(`${n}.effort`),
      temperature: store.column(`${n}.temperature`),
      stiffness: store.column(`${n}.stiffness`),
    })),
    named,
  };
}

const num = (v: number | null | undefined): number => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN);
const recordBody = <K extends BodyKind>(d: DashboardBody<K>, m: Readonly<MessageOf<K>>): void => {
  const cols = columns!;
  const row = recordRow;
  const targets = teleop?.commanded() ?? null;
  for (let i = 0; i < cols.joints.length; i++) d.recordJoint(m, i, cols.joints[i]!, row, targets);
  d.recordNamed(m, putNamed);
};
let recordRow = 0;
const putNamed = (key: string, v: number | null | undefined): void => {
  columns!.named[key]![recordRow] = num(v);
};

/** One history row from one stream message (and the newest health numbers). */
function record(m: Readonly<StateMessage>): void {
  if (!columns) columns = makeColumns();
  const cols = columns;
  const row = store.push(m.epoch_ms / 1000);
  const put = (key: string, v: number | null | undefined) => {
    cols.named[key]![row] = num(v);
  };
  const imu = m.imu as { linear_acceleration: ReadonlyArray<number | null>; angular_velocity: ReadonlyArray<number | null> };
  for (let k = 0; k < 3; k++) {
    cols.acc[k]![row] = num(imu.linear_acceleration[k]);
    cols.gyr[k]![row] = num(imu.angular_velocity[k]);
  }
  recordRow = row;
  withEntry(m, recordBody);
  // Mean cycle period between two stream messages (the stream sends every ~50 ms, cycles run faster).
  if (prevSeq >= 0 && m.seq > prevSeq) put("cycle.period", (m.timestamp_ms - prevTimestampMs) / (m.seq - prevSeq));
  prevSeq = m.seq;
  prevTimestampMs = m.timestamp_ms;
  put("cycle.period_p99", healthNow.periodP99);
  put("cycle.exec_p99", healthNow.execP99);
  put("cycle.late_per_s", healthNow.lateRate);
}

function jointSeries(field: string): SeriesSpec[] {
  const out: SeriesSpec[] = [];
  plottedJoints.forEach((n, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    out.push({ key: `${n}.${field}`, label: n, color });
    if (field === "position") out.push({ key: `${n}.target`, label: `${n} target`, color, dash: [5, 4] });
  });
  return out;
}

function chartSpecs(body: BodyKind): ChartSpec[] {
  const xyz = (p: string): SeriesSpec[] => ["x", "y", "z"].map((a, i) => ({ key: `${p}.${a}`, label: a, color: PALETTE[i]! }));
  const specs: ChartSpec[] = [
    ...jointCharts(body).slice(0, 1),
    { id: "imu-acc", title: "Acceleration (m/s²)", axes: [{ scale: "a", label: "m/s²" }], series: xyz("acc") },
    { id: "imu-gyr", title: "Angular velocity (rad/s)", axes: [{ scale: "w", label: "rad/s" }], series: xyz("gyr") },
  ];
  const d = DASHBOARD_BODIES[body];
  if (d.anglesChart) specs.push(d.anglesChart);
  specs.push(...jointCharts(body).slice(1));
  specs.push({
    id: "cycle",
    title: "Cycle (ms) and late cycles per second",
    axes: [
      { scale: "ms", label: "ms" },
      { scale: "n", label: "late/s" },
    ],
    series: [
      { key: "cycle.period", label: "period (between messages)", color: PALETTE[0]! },
      { key: "cycle.period_p99", label: "period p99", color: PALETTE[1]! },
      { key: "cycle.exec_p99", label: "exec p99", color: PALETTE[2]! },
      { key: "cycle.late_per_s", label: "late/s", color: PALETTE[4]!, scale: "n" },
    ],
  });
  specs.push(...d.extraCharts);
  return specs;
}

function jointCharts(body: BodyKind): ChartSpec[] {
  const out: ChartSpec[] = [
    { id: "joints-position", title: "Joint position (rad; dashed = target)", axes: [{ scale: "rad", label: "rad" }], series: jointSeries("position") },
    { id: "joints-effort", title: DASHBOARD_BODIES[body].effort.title, axes: [{ scale: "e", label: DASHBOARD_BODIES[body].effort.unit }], series: jointSeries("effort") },
  ];
  if (DASHBOARD_BODIES[body].temperatures) out.push({ id: "joints-temperature", title: "Motor temperature (°C)", axes: [{ scale: "c", label: "°C" }], series: jointSeries("temperature") });
  return out;
}

function buildPlots(body: BodyKind): void {
  const p = new Plots(el("plots"), store, el("plots-state"));
  plots = p;
  for (const s of chartSpecs(body)) p.set(s);
  const win = el<HTMLSelectElement>("plots-window");
  win.replaceChildren(...WINDOWS_S.map((s) => Object.assign(make("option", undefined, `${s} s`), { value: String(s), selected: s === p.windowS })));
  win.addEventListener("change", () => p.setWindow(Number(win.value)));
  const pause = el<HTMLButtonElement>("plots-pause");
  const live = el<HTMLButtonElement>("plots-live");
  const sync = () => {
    pause.hidden = p.paused;
    live.hidden = !p.paused;
  };
  pause.addEventListener("click", () => {
    p.pause();
    sync();
  });
  live.addEventListener("click", () => {
    p.live();
    sync();
  });
  el("plots").addEventListener("pointerup", () => setTimeout(sync, 0)); // a drag-zoom pauses
  el("plots-csv").addEventListener("click", () => {
    const { text, rows } = p.csv();
    const a = make("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
    a.download = `bodylink-${body}-${new Date().toISOString().replace(/[:.]/g, "-")}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    status(`exported ${rows} rows of the visible window as CSV`);
  });
  const list = el("plots-joint-list");
  for (const n of jointNames) {
    const label = make("label", "chip");
    const box = make("input");
    box.type = "checkbox";
    box.value = n;
    box.checked = plottedJoints.includes(n);
    label.append(box, document.createTextNode(n));
    box.addEventListener("change", () => {
      if (box.checked && plottedJoints.length >= MAX_PLOTTED_JOINTS) {
        box.checked = false;
        status(`at most ${MAX_PLOTTED_JOINTS} joints at once`);
        return;
      }
      plottedJoints = jointNames.filter((x) => (x === n ? box.checked : plottedJoints.includes(x)));
      for (const s of jointCharts(body)) p.set(s);
    });
    list.append(label);
  }
}

// ---- health -----------------------------------------------------------------------------------------

let lastHealth: { late: number; atMs: number; errors: Readonly<Record<string, number>>; holder: string; safety: string | null } | null = null;

/** A lease ending by itself or being released is a normal state, not an alarm. */
/** A fault or the latched stop is an alarm; a body nobody commands is calm (SAFETY_FAULT). */
function safetyLevel(h: HealthAnswer): Level {
  return SAFETY_FAULT[h.safety_code] ? "bad" : "calm";
}

function renderHealth(h: HealthAnswer): void {
  const c = h.cycle;
  const ms = (v: number) => `${fmt(v, 2)} ms`;
  const items: Array<[string, string]> = [
    ["Link", h.link],
    ["Nominal period", ms(c.nominal_period_ms)],
    ["Period p50 / p99 / max", `${fmt(c.period_ms.p50, 2)} / ${fmt(c.period_ms.p99, 2)} / ${fmt(c.period_ms.max, 2)} ms`],
    ["Exec p50 / p99 / max", `${fmt(c.exec_ms.p50, 3)} / ${fmt(c.exec_ms.p99, 3)} / ${fmt(c.exec_ms.max, 3)} ms`],
    ["Jitter p99", ms(c.jitter_p99_ms)],
    ["Cycles (late)", `${c.cycles} (${c.late_cycles})`],
    ["GC between cycles", c.gc_collections ? `${c.gc_collections}, p99 ${fmt(c.gc_ms.p99, 2)} ms, max ${fmt(c.gc_ms.max, 2)} ms` : "left to V8"],
    ...Object.entries(h.errors).map(([k, v]): [string, string] => [`Errors: ${k}`, String(v)]),
    ["Stream", `${h.api.subscribers} subscribers, ${h.api.messages_sent} sent, ${h.api.messages_skipped} skipped; sending held the loop ≤ ${fmt(h.api.send_slice_ms.max, 2)} ms`],
  ];
  const dlist = el("health");
  if (dlist.children.length !== items.length * 2) dlist.replaceChildren(...items.flatMap(([k]) => [make("dt", undefined, k), make("dd")]));
  for (let i = 0; i < items.length; i++) setText(dlist.children[i * 2 + 1] as HTMLElement, items[i]![1]);
  dlist.dataset.updated = String(Date.now());

  const now = Date.now();
  healthNow.periodP99 = c.period_ms.p99;
  healthNow.execP99 = c.exec_ms.p99;
  healthNow.lateRate = lastHealth ? (Math.max(0, c.late_cycles - lastHealth.late) * 1000) / Math.max(1, now - lastHealth.atMs) : 0;

  const holder = h.control;
  const holderKey = holder ? `${holder.owner} (${holder.source})` : "";
  const mine = teleop?.held === true;
  if (holder) setLevel(el("control"), `${mine ? "this page: " : ""}${holderText(holder)}`, mine ? "ok" : "warn");
  else setLevel(el("control"), "nobody", "calm");
  el("control").dataset.holder = holder?.owner ?? "";
  const safety = el("safety");
  // the latched stop has its own banner
  safety.hidden = !h.safety_reason || h.safety_code === "estop";
  if (h.safety_reason) setLevel(safety, `Safety: ${h.safety_reason}`, safetyLevel(h));
  safety.dataset.code = h.safety_code;
  safety.setAttribute("role", h.safety_reason && safetyLevel(h) === "bad" ? "alert" : "status");

  if (lastHealth) {
    if (holderKey !== lastHealth.holder) logEvent("lease", holder ? `control taken by ${holderKey}` : `control released (was ${lastHealth.holder})`);
    const late = c.late_cycles - lastHealth.late;
    if (late > 0) logEvent("late", `${late} late cycle${late === 1 ? "" : "s"} (period p99 ${fmt(c.period_ms.p99, 2)} ms)`, "warn");
    for (const [k, v] of Object.entries(h.errors)) {
      const d = v - (lastHealth.errors[k] ?? 0);
      if (d > 0 && k !== "emergencyStops" && k !== "lateCycles") logEvent("fault", `${k} +${d} (total ${v})`, "warn");
    }
    if (h.safety_reason !== lastHealth.safety && h.safety_reason) logEvent("safety", h.safety_reason, safetyLevel(h) === "bad" ? "bad" : "info");
  }
  lastHealth = { late: c.late_cycles, atMs: now, errors: h.errors, holder: holderKey, safety: h.safety_reason };
}

async function poll(): Promise<void> {
  if (!client) return;
  try {
    const h = await client.fetchHealth();
    renderHealth(h);
    renderEstop(h);
  } catch (e) {
    setLevel(el("control"), "unknown", "warn");
    status(`health unavailable: ${errorText(e)}`);
  }
}

// ---- rendering ------------------------------------------------------------------------------------------

let framePending = false;
const FRAME_MEASURE = "bodylink:frame";
let frameMeasures = 0;
let lastLink: LinkStatus | null = null;

/** Tables, feet and the other text at most this often: 10 Hz is as fast as anyone reads numbers. */
const DOM_EVERY_MS = 100;
let lastDomMs = Number.NEGATIVE_INFINITY;

/**
 * One animation frame's work. The 3D view is told every new pose (it draws only when something
 * moved, capped in software WebGL); the plots (10 Hz) and the DOM text (10 Hz) never share a
 * frame, so no frame does both a redraw of the charts and a relayout of the tables.
 */
function render(now: number): void {
  framePending = false;
  const c = client;
  if (!c) return;
  const t0 = performance.now();
  const msg = c.getBodyState();
  const j = c.getJointState();
  const q = j?.angles ?? msg?.joint_positions ?? null;
  // A physics body's world (docs/simulation.md): the robot where the simulator has it, the ground, contacts, a fall.
  const world = msg ? withEntry(msg, (d, m) => d.world(m)) : null;
  if (view && q) {
    const tilt = msg ? withEntry(msg, (d, m) => d.tilt(m)) : null;
    view.setWorld(world);
    view.update(q, tilt, teleop?.commanded() ?? null);
  }
  if (plots?.due(now)) plots.tick(now);
  else if (now - lastDomMs >= DOM_EVERY_MS) {
    lastDomMs = now;
    renderJoints(c, msg);
    renderImu(c, msg);
    const age = c.ageMs();
    setText(el("age"), Number.isFinite(age) ? `${Math.max(0, age).toFixed(0)} ms` : "—");
    renderSim(world);
    panel?.(msg);
    plots?.tick(now); // not due: only the rows counter (it keeps counting while paused)
  }
  // User Timing for the frame-budget bench: the page's whole work in this frame; bounded.
  performance.measure(FRAME_MEASURE, { start: t0, end: performance.now() });
  if (++frameMeasures >= 1200) {
    performance.clearMeasures(FRAME_MEASURE);
    frameMeasures = 0;
  }
}

/** The body panel from the body's table entry, with the client typed for that body; it takes the client's messages (only its body's). */
function panelFor(c: RobotClient, host: HTMLElement): (m: Readonly<StateMessage> | null) => void {
  return withClient(c, (d, cc, kind) => {
    const p = d.panel(host, cc);
    return (m) => p.update(messageOf(kind, m));
  });
}

function scheduleRender(): void {
  if (framePending) return;
  framePending = true;
  requestAnimationFrame(render);
}

function setUp(c: RobotClient): void {
  client = c;
  const body = c.body;
  const d = DASHBOARD_BODIES[body];
  document.body.dataset.body = body;
  setText(el("body-name"), d.name);
  document.title = `bodylink: ${d.name}`;
  setText(el("joints-meta"), d.jointsMeta);
  jointNames = c.jointNames;
  plottedJoints = d.defaultPlotted.filter((n) => jointNames.includes(n));
  buildJointRows(body, jointNames);
  buildPlots(body);
  try {
    view = new BodyView(el("view3d"), body);
    setText(el("view-note"), d.viewNote);
  } catch (e) {
    setText(el("view-note"), `3D view unavailable (WebGL): ${errorText(e)}`);
  }
  const poses = el<HTMLSelectElement>("sim-pose");
  poses.replaceChildren(...d.simReset.poses.map((p) => new Option(String(p), String(p)))); // String(): shared code asks no body's pose type
  const host = el("body-panel");
  setText(el("body-h"), d.panelTitle);
  panel = panelFor(c, host);
  teleop = new Teleop(el("teleop"), c, logEvent);
  setLevel(el("connection"), "connected", "ok");
  logEvent("stream", `connected to ${body}`);

  c.on("message", (m) => {
    setLevel(el("link"), m.link, m.link === "ok" ? "ok" : m.link === "degraded" || m.link === "starting" ? "warn" : "bad");
    if (m.link !== lastLink) {
      if (lastLink !== null) logEvent("link", `link ${lastLink} → ${m.link}`, m.link === "ok" ? "info" : "bad");
      lastLink = m.link;
    }
    if (m.link === "ok" || m.link === "degraded") record(m);
    teleop?.state(m);
    scheduleRender();
  });
  c.on("disconnected", (e) => {
    setLevel(el("connection"), e.willReconnect ? "disconnected, retrying" : "disconnected", "bad");
    setLevel(el("link"), "unknown", "bad");
    logEvent("stream", `disconnected (${e.code}${e.reason ? `: ${e.reason}` : ""})`, "bad");
    scheduleRender();
  });
  c.on("reconnecting", (e) => setLevel(el("connection"), `reconnecting (attempt ${e.attempt})`, "warn"));
  c.on("open", (e) => {
    setLevel(el("connection"), "connected", "ok");
    if (e.reconnected) logEvent("stream", "reconnected");
  });
  c.on("error", (e) => status(errorText(e)));
  setInterval(scheduleRender, IDLE_RENDER_MS);
  setInterval(() => void poll(), POLL_EVERY_MS);
  void poll();
}

async function main(): Promise<void> {
  el("estop").addEventListener("click", () => void emergencyStop());
  el("estop-reset").addEventListener("click", () => void resetEstop());
  el("sim-reset").addEventListener("click", () => void simReset());
  for (;;) {
    try {
      setUp(await connect(location.origin, { owner: "dashboard", ...(TOKEN ? { token: TOKEN } : {}) }));
      return;
    } catch (e) {
      setLevel(el("connection"), "not connected", "bad");
      status(`cannot connect to the robot API: ${errorText(e)}; retrying in 2 s`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

void main();
