/**
 * The NAO's body panel: the feet from above, touch and bumpers, sonar, head, battery, motor boards
 * (GET /v1/boards) and the preferences (GET /v1/preferences, with a search box).
 */
import { NaoKinematics } from "../../src/bodies/nao/kinematics.js";
import type { BodyClient } from "../../src/client/index.js";
import { FeetView } from "../feet.js";
import { dl, sub } from "../panels.js";
import { errorText, fmt, make, setText } from "../util.js";
import type { BodyPanel } from "./common.js";

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

export function naoPanel(host: HTMLElement, c: BodyClient<"nao">): BodyPanel<"nao"> {
  const kin = new NaoKinematics();
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
  boardTable.innerHTML =
    '<thead><tr><th scope="col">Board</th><th scope="col">Type</th><th scope="col" class="num">Version</th><th scope="col" class="num">Serial</th><th scope="col">Status</th></tr></thead><tbody></tbody>';
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
      const b = (await c.nao.fetchBoards()) as Array<{
        name: string;
        type: string;
        accepted: boolean;
        reason: string | null;
        config_version: number | null;
        serial: number | null;
        serial_mismatch: boolean;
      }>;
      const tb = boardTable.tBodies[0]!;
      tb.replaceChildren(
        ...b.map((x) => {
          const tr = make("tr");
          const st = make("td", undefined, x.accepted ? "accepted" : `rejected: ${x.reason ?? "?"}`);
          st.dataset.level = x.accepted ? "ok" : "bad";
          tr.append(
            make("th", undefined, x.name),
            make("td", undefined, x.type),
            make("td", "num", x.config_version === null ? "—" : String(x.config_version)),
            make("td", "num", x.serial === null ? "—" : String(x.serial) + (x.serial_mismatch ? " (≠ stored)" : "")),
            st,
          );
          return tr;
        }),
      );
      if (b.length === 0) tb.append(Object.assign(make("tr"), { innerHTML: '<td colspan="5">no handshake yet</td>' }));
      const p = (await c.nao.fetchPreferences()) as { body_id: string; body_version: string; values: Array<{ key: string; value: number | string; unit: string }> };
      const pb = prefTable.tBodies[0]!;
      pb.replaceChildren(
        ...p.values.map((x) => {
          const tr = make("tr");
          tr.append(make("th", undefined, x.key), make("td", "num", String(x.value)), make("td", undefined, x.unit));
          return tr;
        }),
      );
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
      const j = c.getJointState();
      if (j) kin.update(j.angles);
      feet.placeFrom(kin, m ? m.imu.roll_pitch : null);
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
