/**
 * The dashboard page's script (served bundled as /dashboard/main.js; see src/serve/api/dashboard.ts).
 * Read-only: it shows the state through the client SDK (the same `connect` programs use; getters
 * return frozen snapshots or null when the data is not current) and polls GET /v1/health once a
 * second. Its only command is the emergency stop, which needs no lease.
 *
 * Plain DOM, no framework. The rows are built once per connection; after that every frame only
 * writes text and a few attributes (at most one render per animation frame, whatever the rate).
 */
import { JOINT_LIMITS } from "../src/bodies/nao/joints.js";
import { P7_MAX_RAD, P7_MIN_RAD } from "../src/bodies/p7/joints.js";
import { JOINT_MAX_RAD as TNY_MAX_RAD, JOINT_MIN_RAD as TNY_MIN_RAD } from "../src/bodies/tny360/joints.js";
import { type BodyKind, type BodylinkClient, connect, type HealthAnswer, type LinkStatus, type StateMessage } from "../src/client/index.js";

const ESTOP_REASON = "dashboard";
const HEALTH_EVERY_MS = 1000;
/** Re-render this often even without messages, so a stalled stream shows as stale. */
const IDLE_RENDER_MS = 250;

interface Limit {
  readonly minRad: number;
  readonly maxRad: number;
}

interface JointRow {
  readonly name: string;
  readonly limit: Limit | null;
  readonly position: HTMLElement;
  readonly bar: HTMLElement;
  readonly mark: HTMLElement;
  readonly velocity: HTMLElement;
  readonly effort: HTMLElement;
  readonly temperature: HTMLElement;
}

function el(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`dashboard: #${id} is missing from index.html`);
  return e;
}

function make<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Write only when the text changed (saves layout work at 20 Hz). */
function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

function setLevel(e: HTMLElement, text: string, level: "ok" | "warn" | "bad"): void {
  setText(e, text);
  if (e.dataset.level !== level) e.dataset.level = level;
}

const fmt = (v: number | null | undefined, digits = 3): string => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(digits) : "—");

/** Joint limits by the body's joint names (the same tables the runtime clamps or refuses with). */
function limitsFor(body: BodyKind, names: readonly string[]): Array<Limit | null> {
  return names.map((name, i) => {
    switch (body) {
      case "nao":
        return (JOINT_LIMITS as Readonly<Record<string, Limit>>)[name] ?? null;
      case "p7":
        return i < P7_MIN_RAD.length ? { minRad: P7_MIN_RAD[i]!, maxRad: P7_MAX_RAD[i]! } : null;
      case "tny360":
        return i < TNY_MIN_RAD.length ? { minRad: TNY_MIN_RAD[i]!, maxRad: TNY_MAX_RAD[i]! } : null;
    }
    return null;
  });
}

function linkLevel(link: LinkStatus): "ok" | "warn" | "bad" {
  return link === "ok" ? "ok" : link === "degraded" || link === "starting" ? "warn" : "bad";
}

function status(text: string): void {
  setText(el("status"), `${new Date().toLocaleTimeString()}: ${text}`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---- emergency stop: works before the SDK is connected too (plain fetch) --------------------------

let client: BodylinkClient | null = null;

async function emergencyStop(): Promise<void> {
  const button = el("estop") as HTMLButtonElement;
  button.disabled = true;
  try {
    if (client) await client.emergencyStop(ESTOP_REASON);
    else {
      const r = await fetch("/v1/estop", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: ESTOP_REASON }) });
      if (!r.ok) throw new Error(`HTTP ${r.status}: ${(await r.text()).slice(0, 200)}`);
    }
    status("emergency stop sent; control revoked");
    void refreshHealth();
  } catch (e) {
    status(`emergency stop FAILED: ${errorText(e)}`);
  } finally {
    button.disabled = false;
  }
}

// ---- joints ------------------------------------------------------------------------------------

let rows: JointRow[] = [];

function buildJointRows(body: BodyKind, names: readonly string[]): void {
  const tbody = el("joints").querySelector("tbody")!;
  const limits = limitsFor(body, names);
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
    const temperature = make("td", "num", "—");
    tr.append(th, position, barCell, velocity, effort, temperature);
    tbody.append(tr);
    return { name, limit, position, bar, mark, velocity, effort, temperature };
  });
}

function renderJoints(c: BodylinkClient): void {
  const joints = c.getJointState();
  const motors = c.getMotorState();
  setText(el("effort-h"), `Effort (${joints?.effortUnit ?? "—"})`);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const v = joints?.angles[i];
    setText(row.position, fmt(v));
    setText(row.velocity, fmt(joints?.velocities[i]));
    setText(row.effort, fmt(joints?.efforts[i], 2));
    setText(row.temperature, fmt(motors?.temperatures[i], 0));
    if (v === undefined || !row.limit) {
      row.mark.hidden = true;
      row.bar.removeAttribute("aria-valuenow");
      continue;
    }
    const { minRad, maxRad } = row.limit;
    const frac = Math.min(1, Math.max(0, (v - minRad) / (maxRad - minRad)));
    row.mark.hidden = false;
    row.mark.style.left = `${(frac * 100).toFixed(2)}%`;
    row.bar.classList.toggle("near", frac < 0.03 || frac > 0.97);
    row.bar.setAttribute("aria-valuenow", v.toFixed(3));
    row.bar.setAttribute("aria-valuetext", `${v.toFixed(3)}, limits ${minRad} to ${maxRad}`);
  }
}

// ---- IMU and the NAO's own sensors --------------------------------------------------------------

function renderImu(c: BodylinkClient, msg: Readonly<StateMessage> | null): void {
  const imu = c.getImuState();
  const axes = ["x", "y", "z"] as const;
  for (let k = 0; k < 3; k++) {
    setText(el(`acc-${axes[k]}`), fmt(imu?.linearAcceleration[k], 2));
    setText(el(`gyr-${axes[k]}`), fmt(imu?.angularVelocity[k], 3));
  }
  let extra = "";
  const current = imu !== null && msg !== null;
  if (current && msg.body === "nao") extra = `roll ${fmt(msg.imu.roll_pitch[0])} rad, pitch ${fmt(msg.imu.roll_pitch[1])} rad (inertial unit)`;
  else if (current && msg.body === "tny360") extra = `orientation ${msg.imu.orientation.map((x) => fmt(x)).join(", ")}`;
  setText(el("imu-extra"), extra);
}

const TOUCH_LABELS = [
  ["chestButton", "Chest button"],
  ["headFront", "Head front"],
  ["headMiddle", "Head middle"],
  ["headRear", "Head rear"],
  ["leftHand", "Left hand"],
  ["rightHand", "Right hand"],
  ["leftFoot", "Left foot bumper"],
  ["rightFoot", "Right foot bumper"],
] as const;

function buildNao(): void {
  el("nao").hidden = false;
  const list = el("touch");
  list.replaceChildren(...TOUCH_LABELS.map(([key, label]) => Object.assign(make("li", undefined, label), { id: `touch-${key}` })));
}

function renderNao(c: BodylinkClient): void {
  const b = c.getBatteryState();
  // The stream carries LoLA's battery temperature scale (0.1 applied twice): ×10 is about °C.
  setText(
    el("battery"),
    b
      ? `${Math.round(b.charge * 100)} %, ${fmt(b.currentA, 2)} A, ${b.charging ? "charging" : "discharging"}, ≈ ${fmt(b.temperatureLola * 10, 0)} °C`
      : "—",
  );
  const s = c.getSonarState();
  setText(el("sonar"), s ? `${fmt(s.leftM, 2)} m / ${fmt(s.rightM, 2)} m` : "—");
  const h = c.getHeadState();
  setText(el("head"), h ? `${fmt(h.voltageV, 2)} V, ${fmt(h.powerW, 2)} W, face ${fmt(h.faceTemperatureC, 1)} °C` : "—");
  const f = c.getFootState();
  const feet = el("feet").querySelectorAll("tbody tr");
  const sides = [f ? [...f.leftPressureKg, f.leftWeightKg] : null, f ? [...f.rightPressureKg, f.rightWeightKg] : null];
  for (let side = 0; side < feet.length; side++) {
    const cells = feet[side]!.querySelectorAll("td");
    for (let k = 0; k < cells.length; k++) setText(cells[k]!, fmt(sides[side]?.[k], 2));
  }
  const t = c.getTouchState();
  for (const [key, label] of TOUCH_LABELS) {
    const li = el(`touch-${key}`);
    const on = t ? t[key] : null;
    // Colour is not the only cue: the text says it too.
    setText(li, on === null ? `${label}: —` : on ? `${label}: touched` : label);
    li.dataset.on = String(on === true);
  }
}

// ---- health ------------------------------------------------------------------------------------

async function refreshHealth(): Promise<void> {
  if (!client) return;
  try {
    renderHealth(await client.fetchHealth());
  } catch (e) {
    setLevel(el("control"), "unknown", "warn");
    status(`health unavailable: ${errorText(e)}`);
  }
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
  const dl = el("health");
  if (dl.children.length !== items.length * 2) dl.replaceChildren(...items.flatMap(([k]) => [make("dt", undefined, k), make("dd")]));
  for (let i = 0; i < items.length; i++) setText(dl.children[i * 2 + 1] as HTMLElement, items[i]![1]);
  dl.dataset.updated = String(Date.now());

  const holder = h.control;
  if (holder) setLevel(el("control"), `${holder.owner} (${holder.source}) until ${new Date(holder.expires_at_epoch_ms).toLocaleTimeString()}`, "warn");
  else setLevel(el("control"), "nobody", "ok");
  const safety = el("safety");
  safety.hidden = !h.safety_reason;
  setText(safety, h.safety_reason ? `Safety: ${h.safety_reason}` : "");
}

// ---- wiring ------------------------------------------------------------------------------------

let framePending = false;

function render(): void {
  framePending = false;
  const c = client;
  if (!c) return;
  const msg = c.getBodyState();
  renderJoints(c);
  renderImu(c, msg);
  if (c.body === "nao") renderNao(c);
  const age = c.ageMs();
  setText(el("age"), Number.isFinite(age) ? `${Math.max(0, age).toFixed(0)} ms` : "—");
}

function scheduleRender(): void {
  if (framePending) return;
  framePending = true;
  requestAnimationFrame(render);
}

function setUp(c: BodylinkClient): void {
  client = c;
  const body = c.body!;
  setText(el("body-name"), body === "nao" ? "NAO v6" : body === "p7" ? "AIRBOT P7" : "TNY-360");
  document.title = `bodylink dashboard: ${body}`;
  setText(el("joints-meta"), body === "nao" ? "(rad; hands: opening 0..1, 0 closed; velocities estimated)" : "(rad)");
  buildJointRows(body, c.jointNames);
  if (body === "nao") buildNao();
  setLevel(el("connection"), "connected", "ok");

  // Every message (complete or not) carries the link status; the getters return null unless it is ok/degraded.
  c.on("message", (m) => {
    setLevel(el("link"), m.link, linkLevel(m.link));
    scheduleRender();
  });
  c.subscribe(scheduleRender);
  c.on("disconnected", (e) => {
    setLevel(el("connection"), e.willReconnect ? "disconnected, retrying" : "disconnected", "bad");
    setLevel(el("link"), "unknown", "bad");
    scheduleRender();
  });
  c.on("reconnecting", (e) => setLevel(el("connection"), `reconnecting (attempt ${e.attempt})`, "warn"));
  c.on("open", () => setLevel(el("connection"), "connected", "ok"));
  c.on("error", (e) => status(errorText(e)));
  setInterval(scheduleRender, IDLE_RENDER_MS);
  setInterval(() => void refreshHealth(), HEALTH_EVERY_MS);
  void refreshHealth();
}

async function main(): Promise<void> {
  el("estop").addEventListener("click", () => void emergencyStop());
  for (;;) {
    try {
      setUp(await connect(location.origin, { owner: "dashboard" }));
      return;
    } catch (e) {
      setLevel(el("connection"), "not connected", "bad");
      status(`cannot connect to the robot API: ${errorText(e)}; retrying in 2 s`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

void main();
