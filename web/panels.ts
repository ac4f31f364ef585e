/**
 * The body panel: what only one body has. NAO: the feet from above, touch and bumpers, sonar,
 * head, battery, motor boards (GET /v1/boards) and the preferences (GET /v1/preferences, with a
 * search box). P7: raw error ids per joint and the flange position from the kinematics.
 * TNY-360: odometry with its path, gait and smooth phase, paw contacts, power, the enable mask,
 * the error counters.
 */
import type { NaoKinematics } from "../src/bodies/nao/kinematics.js";
import { P7Kinematics } from "../src/bodies/p7/kinematics.js";
import { LEG_NAMES } from "../src/bodies/tny360/joints.js";
import type { BodyClient, BodylinkClient, StateMessage } from "../src/client/index.js";
import { FeetView } from "./feet.js";
import { errorText, fmt, make, setAttr, setText, svg } from "./util.js";

export interface BodyPanel {
  update(m: Readonly<StateMessage> | null): void;
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

function dl(parent: HTMLElement, items: ReadonlyArray<readonly [string, string]>): Record<string, HTMLElement> {
  const d = make("dl", "grid");
  const out: Record<string, HTMLElement> = {};
  for (const [id, label] of items) {
    const dd = make("dd", undefined, "—");
    dd.id = id;
    d.append(make("dt", undefined, label), dd);
    out[id] = dd;
  }
  parent.append(d);
  return out;
}

function sub(parent: HTMLElement, title: string, className = "sub"): HTMLElement {
  const s = make("div", className);
  s.append(make("h3", undefined, title));
  parent.append(s);
  return s;
}

// ---- NAO ----------------------------------------------------------------------------------------

export function naoPanel(host: HTMLElement, c: BodyClient<"nao">, kin: NaoKinematics): BodyPanel {
  host.classList.add("nao-panel");
  const feetBox = sub(host, "Feet from above (kg; dot = centre of pressure, shaded = support polygon)", "sub feet");
  feetBox.id = "feet";
  const feet = new FeetView(feetBox);
  const sensors = sub(host, "Sensors");
  const touch = make("ul", "touch");
  touch.id = "touch";
  for (const [key, label] of TOUCH_LABELS) touch.append(Object.assign(make("li", undefined, label), { id: `touch-${key}` }));
  sensors.append(touch);
  const v = dl(sensors, [
    ["battery", "Battery"],
    ["sonar", "Sonar left / right"],
    ["head", "Head supply"],
  ]);
  const sonarBars = make("div", "sonar-bars");
  const sonarL = make("div", "sonar-bar");
  const sonarR = make("div", "sonar-bar");
  sonarBars.append(sonarL, sonarR);
  sensors.append(sonarBars);

  const boards = sub(host, "Motor boards");
  const boardTable = make("table", "kv");
  boardTable.id = "boards";
  boardTable.innerHTML = '<thead><tr><th scope="col">Board</th><th scope="col">Type</th><th scope="col" class="num">Version</th><th scope="col" class="num">Serial</th><th scope="col">Status</th></tr></thead><tbody></tbody>';
  const boardScroll = make("div", "scroll short");
  boardScroll.append(boardTable);
  boards.append(boardScroll);

  const prefs = sub(host, "Preferences");
  const search = make("input");
  search.type = "search";
  search.id = "prefs-search";
  search.placeholder = "Search preferences…";
  search.setAttribute("aria-label", "Search preferences");
  const prefTable = make("table", "kv prefs");
  prefTable.id = "prefs";
  prefTable.innerHTML = '<thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">Unit</th></tr></thead><tbody></tbody>';
  const prefMeta = make("p", "meta");
  const prefScroll = make("div", "scroll short");
  prefScroll.append(prefTable);
  prefs.append(search, prefMeta, prefScroll);
  const filter = () => {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    const rows = prefTable.tBodies[0]!.rows;
    for (const r of Array.from(rows)) {
      const hit = q === "" || (r.textContent ?? "").toLowerCase().includes(q);
      r.hidden = !hit;
      if (hit) shown++;
    }
    setText(prefMeta, `${shown} of ${rows.length} values`);
  };
  search.addEventListener("input", filter);

  const loadStatic = async () => {
    try {
      const b = (await c.nao.fetchBoards()) as Array<{ name: string; type: string; accepted: boolean; reason: string | null; config_version: number | null; serial: number | null; serial_mismatch: boolean }>;
      const tb = boardTable.tBodies[0]!;
      tb.replaceChildren(
        ...b.map((x) => {
          const tr = make("tr");
          const st = make("td", undefined, x.accepted ? "accepted" : `rejected: ${x.reason ?? "?"}`);
          st.dataset.level = x.accepted ? "ok" : "bad";
          tr.append(make("th", undefined, x.name), make("td", undefined, x.type), make("td", "num", x.config_version === null ? "—" : String(x.config_version)), make("td", "num", x.serial === null ? "—" : String(x.serial) + (x.serial_mismatch ? " (≠ stored)" : "")), st);
          return tr;
        }),
      );
      if (b.length === 0) tb.append(Object.assign(make("tr"), { innerHTML: '<td colspan="5">no handshake yet</td>' }));
      const p = (await c.nao.fetchPreferences()) as { body_id: string; body_version: string; values: Array<{ key: string; value: number | string; unit: string }> };
      const pb = prefTable.tBodies[0]!;
      pb.replaceChildren(...p.values.map((x) => {
        const tr = make("tr");
        tr.append(make("th", undefined, x.key), make("td", "num", String(x.value)), make("td", undefined, x.unit));
        return tr;
      }));
      setText(prefs.querySelector("h3")!, `Preferences (body ${p.body_id}, version ${p.body_version})`);
      filter();
    } catch (e) {
      setText(prefMeta, `not available yet: ${errorText(e)}`);
      setTimeout(() => void loadStatic(), 3000);
    }
  };
  void loadStatic();

  return {
    update(m) {
      feet.placeFrom(kin, m?.body === "nao" ? m.imu.roll_pitch : null);
      const t = c.nao.getTouchState();
      feet.update(c.nao.getFootState(), t);
      for (const [key, label] of TOUCH_LABELS) {
        const li = document.getElementById(`touch-${key}`)!;
        const on = t ? t[key] : null;
        // Colour is not the only cue: the text says it too.
        setText(li, on === null ? `${label}: —` : on ? `${label}: touched` : label);
        li.dataset.on = String(on === true);
      }
      const b = c.nao.getBatteryState();
      // The stream carries LoLA's battery temperature scale (0.1 applied twice): ×10 is about °C.
      setText(v.battery!, b ? `${Math.round(b.charge * 100)} %, ${fmt(b.currentA, 2)} A, ${b.charging ? "charging" : "discharging"}, ≈ ${fmt(b.temperatureLola * 10, 0)} °C` : "—");
      const s = c.nao.getSonarState();
      setText(v.sonar!, s ? `${fmt(s.leftM, 2)} m / ${fmt(s.rightM, 2)} m` : "—");
      // Bars: the sonar reads up to about 5 m.
      sonarL.style.width = `${s ? Math.min(100, (s.leftM / 5) * 100) : 0}%`;
      sonarR.style.width = `${s ? Math.min(100, (s.rightM / 5) * 100) : 0}%`;
      const h = c.nao.getHeadState();
      setText(v.head!, h ? `${fmt(h.voltageV, 2)} V, ${fmt(h.powerW, 2)} W, face ${fmt(h.faceTemperatureC, 1)} °C` : "—");
    },
  };
}

// ---- P7 -------------------------------------------------------------------------------------------

export function p7Panel(host: HTMLElement, c: BodylinkClient): BodyPanel {
  const k = new P7Kinematics();
  const errs = sub(host, "Error ids (raw integers, 0 = normal)");
  const list = make("ul", "chips errors");
  list.id = "p7-errors";
  const items = Array.from({ length: 7 }, (_, i) => {
    const li = make("li", undefined, `joint${i + 1}: —`);
    list.append(li);
    return li;
  });
  errs.append(list);
  const v = dl(sub(host, "Arm"), [
    ["p7-flange", "Flange (kinematics), m"],
    ["p7-effort", "Largest effort"],
  ]);
  return {
    update() {
      const m = c.getMotorState();
      items.forEach((li, i) => {
        const id = m?.errorIds[i];
        setText(li, `joint${i + 1}: ${id === undefined ? "—" : id}`);
        li.dataset.on = String(id !== undefined && id !== 0);
      });
      const j = c.getJointState();
      if (j) {
        k.update(j.angles);
        setText(v["p7-flange"]!, `${fmt(k.flangeM[0])}, ${fmt(k.flangeM[1])}, ${fmt(k.flangeM[2])}`);
        let best = 0;
        for (let i = 1; i < j.efforts.length; i++) if (Math.abs(j.efforts[i]!) > Math.abs(j.efforts[best]!)) best = i;
        setText(v["p7-effort"]!, `joint${best + 1}: ${fmt(j.efforts[best], 2)} N·m`);
      }
    },
  };
}

// ---- TNY-360 --------------------------------------------------------------------------------------

const PATH_POINTS = 1200;

export function tnyPanel(host: HTMLElement): BodyPanel {
  const od = sub(host, "Odometry (path of the last minute; grid 0.1 m)", "sub odometry");
  const map = svg("svg", { viewBox: "-500 -500 1000 1000", role: "img", "aria-label": "Odometry path seen from above" });
  map.classList.add("odo-svg");
  const grid = svg("g", { class: "odo-grid" });
  for (let i = -5; i <= 5; i++) grid.append(svg("line", { x1: i * 100, y1: -500, x2: i * 100, y2: 500 }), svg("line", { x1: -500, y1: i * 100, x2: 500, y2: i * 100 }));
  const path = svg("polyline", { class: "odo-path", points: "" });
  const robot = svg("path", { class: "odo-robot", d: "M 30 0 L -20 -18 L -10 0 L -20 18 Z" });
  map.append(grid, path, robot);
  od.append(map);
  const odo = dl(od, [
    ["tny-odometry", "Position, yaw"],
    ["tny-speed", "Velocity (measured)"],
    ["tny-target", "Velocity (target)"],
  ]);
  const loco = sub(host, "Locomotion and power");
  const paws = make("ul", "chips paws");
  paws.id = "tny-paws";
  const pawItems = LEG_NAMES.map((n) => {
    const li = make("li", undefined, n);
    paws.append(li);
    return li;
  });
  loco.append(paws);
  const v = dl(loco, [
    ["tny-gait-now", "Gait, smooth phase"],
    ["tny-height-now", "Height"],
    ["tny-power", "Power"],
    ["tny-mask", "Enable mask"],
    ["tny-errors", "Errors"],
  ]);
  const mask = make("ul", "chips mask");
  mask.id = "tny-mask-bits";
  const bits = Array.from({ length: 14 }, (_, i) => {
    const li = make("li", undefined, String(i));
    li.title = `joint ${i}`;
    mask.append(li);
    return li;
  });
  loco.append(mask);
  const xs = new Float64Array(PATH_POINTS);
  const ys = new Float64Array(PATH_POINTS);
  let n = 0;
  let lastSeq = -1;
  return {
    update(m) {
      if (m?.body !== "tny360" || m.seq === lastSeq) return;
      lastSeq = m.seq;
      const o = m.odometry;
      if (n === PATH_POINTS) {
        xs.copyWithin(0, 1);
        ys.copyWithin(0, 1);
        n--;
      }
      xs[n] = o.x;
      ys[n] = o.y;
      n++;
      // Keep the robot in view: the map follows it in steps of 0.5 m.
      const cx = Math.round(o.x * 2) / 2;
      const cy = Math.round(o.y * 2) / 2;
      setAttr(map, "viewBox", `${(-cy * 1000 - 500).toFixed(0)} ${(-cx * 1000 - 500).toFixed(0)} 1000 1000`);
      grid.setAttribute("transform", `translate(${(-cy * 1000).toFixed(0)} ${(-cx * 1000).toFixed(0)})`);
      let pts = "";
      for (let i = 0; i < n; i += n > 600 ? 2 : 1) pts += `${(-ys[i]! * 1000).toFixed(1)},${(-xs[i]! * 1000).toFixed(1)} `;
      setAttr(path, "points", pts);
      setAttr(robot, "transform", `translate(${(-o.y * 1000).toFixed(1)} ${(-o.x * 1000).toFixed(1)}) rotate(${(-90 - (o.yaw * 180) / Math.PI).toFixed(1)})`);
      setText(odo["tny-odometry"]!, `x ${fmt(o.x, 3)} m, y ${fmt(o.y, 3)} m, yaw ${fmt(o.yaw, 2)} rad`);
      setText(odo["tny-speed"]!, `${fmt(o.vx, 2)}, ${fmt(o.vy, 2)} m/s, ${fmt(o.yaw_rate, 2)} rad/s`);
      const t = m.locomotion.target_velocity;
      setText(odo["tny-target"]!, `${fmt(t.x, 2)}, ${fmt(t.y, 2)} m/s, ${fmt(t.yaw, 2)} rad/s`);
      pawItems.forEach((li, i) => {
        const g = m.paws.grounded[i] === true;
        setText(li, `${LEG_NAMES[i]}: ${g ? "ground" : "air"}`);
        li.dataset.on = String(g);
      });
      setText(v["tny-gait-now"]!, `${m.locomotion.gait}, ${m.locomotion.smooth}`);
      setText(v["tny-height-now"]!, m.locomotion.height === null ? "—" : `${fmt(m.locomotion.height, 3)} m`);
      setText(v["tny-power"]!, `${fmt(m.power.voltage, 2)} V, ${fmt(m.power.current, 2)} A, ${fmt(m.power.power, 1)} W`);
      const em = m.locomotion.enabled_mask;
      setText(v["tny-mask"]!, `0x${em.toString(16).toUpperCase().padStart(4, "0")}`);
      bits.forEach((li, i) => {
        li.dataset.on = String((em & (1 << i)) !== 0);
      });
      setText(v["tny-errors"]!, `${m.errors.count} (last event ${m.errors.last_event_id}, last error ${m.errors.last_error_id})`);
    },
  };
}

