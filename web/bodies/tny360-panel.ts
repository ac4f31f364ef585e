/**
 * The TNY-360's body panel: odometry with its path, gait and smooth phase, paw contacts, power, the
 * enable mask, the error counters.
 */
import { LEG_NAMES } from "../../src/bodies/tny360/joints.js";
import { dl, sub } from "../panels.js";
import { fmt, make, setAttr, setText, svg } from "../util.js";
import type { BodyPanel } from "./common.js";

const PATH_POINTS = 1200;

export function tny360Panel(host: HTMLElement): BodyPanel<"tny360"> {
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
      if (!m || m.seq === lastSeq) return;
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
