/**
 * The NAO's feet from above (SVG, millimetres): both soles where the forward kinematics puts them
 * (relative to the point between the two soles), the eight FSRs at Aldebaran's positions
 * (src/bodies/nao/feet.ts) sized and shaded by load, each foot's weight and centre of pressure
 * as a dot, the support polygon (convex hull of the loaded sensors), and the bumpers at the toes.
 *
 * Screen axes: robot x (forward) is up, robot y (left) is left. Inside each foot group the
 * coordinates are that ankle frame's: cx = −y·1000, cy = −x·1000, so the CoP dot's cx/cy read
 * back as the stream's center_of_pressure (the browser test checks exactly that).
 */
import { FSR_POSITIONS_M } from "../src/bodies/nao/feet.js";
import { NAO_FRAME_INDEX as NF, type NaoKinematics } from "../src/bodies/nao/kinematics.js";
import type { FootState, TouchState } from "../src/client/index.js";
import { fmt, setAttr, setText, svg } from "./util.js";

/** A sensor counts as touching the ground above this, kg. */
const LOADED_KG = 0.1;
/** Sole outline in the ankle frame, mm (x forward, y left), left foot; the right one mirrors y. */
const SOLE_LEFT_MM: ReadonlyArray<readonly [number, number]> = [
  [100, 40], [108, 22], [110, 0], [106, -22], [95, -33], [-40, -30], [-52, -20], [-55, 0], [-52, 26], [-40, 42], [80, 46],
];

interface FootDrawing {
  readonly group: SVGGElement;
  readonly sensors: SVGCircleElement[];
  readonly values: SVGTextElement[];
  readonly cop: SVGCircleElement;
  readonly weight: SVGTextElement;
  readonly bumper: SVGPathElement;
}

export class FeetView {
  readonly root: SVGSVGElement;
  readonly #feet: [FootDrawing, FootDrawing];
  readonly #hull: SVGPolygonElement;
  readonly #total: SVGTextElement;
  // Foot placement in the view (mm, screen coordinates) and yaw (rad), from the kinematics.
  readonly #place = [
    { x: -50, y: 0, yaw: 0 },
    { x: 50, y: 0, yaw: 0 },
  ];

  constructor(host: HTMLElement) {
    this.root = svg("svg", { viewBox: "-190 -150 380 260", role: "img", "aria-label": "Both feet from above: pressure sensors, centre of pressure, support polygon" });
    this.root.classList.add("feet-svg");
    this.#hull = svg("polygon", { class: "support", points: "" });
    this.root.append(this.#hull);
    this.#feet = [this.#foot("left"), this.#foot("right")];
    this.#total = svg("text", { x: 0, y: 100, class: "total", "text-anchor": "middle" });
    this.root.append(this.#total);
    host.append(this.root);
  }

  #foot(side: "left" | "right"): FootDrawing {
    const s = side === "left" ? 1 : -1;
    const group = svg("g", { class: `foot ${side}`, "data-foot": side });
    const outline = SOLE_LEFT_MM.map(([x, y]) => `${-y * s},${-x}`).join(" ");
    group.append(svg("polygon", { class: "sole", points: outline }));
    const bumper = svg("path", { class: "bumper", d: `M ${-40 * s} -104 Q 0 -122 ${40 * s} -104`, "data-on": "false" });
    group.append(bumper);
    group.append(svg("circle", { class: "ankle", cx: 0, cy: 0, r: 3 }));
    const sensors: SVGCircleElement[] = [];
    const values: SVGTextElement[] = [];
    for (const [x, y] of FSR_POSITIONS_M[side]) {
      const cx = -y * 1000;
      const cy = -x * 1000;
      const c = svg("circle", { class: "fsr", cx, cy, r: 6 });
      const t = svg("text", { class: "fsr-value", x: cx, y: cy + 20, "text-anchor": "middle" });
      group.append(c, t);
      sensors.push(c);
      values.push(t);
    }
    const cop = svg("circle", { class: "cop", cx: 0, cy: 0, r: 7, "data-x-m": "0", "data-y-m": "0" });
    const weight = svg("text", { class: "weight", x: 0, y: 80, "text-anchor": "middle" });
    group.append(cop, weight);
    this.root.append(group);
    return { group, sensors, values, cop, weight, bumper };
  }

  /** Place the soles as the kinematics has them (call with an updated NaoKinematics). */
  placeFrom(k: NaoKinematics): void {
    const p = k.poses;
    const lx = p[12 * NF.LSole + 9]!, ly = p[12 * NF.LSole + 10]!;
    const rx = p[12 * NF.RSole + 9]!, ry = p[12 * NF.RSole + 10]!;
    const mx = (lx + rx) / 2, my = (ly + ry) / 2;
    const yaw = (f: number) => Math.atan2(p[12 * f + 3]!, p[12 * f]!);
    this.#place[0] = { x: -(ly - my) * 1000, y: -(lx - mx) * 1000, yaw: yaw(NF.LSole) };
    this.#place[1] = { x: -(ry - my) * 1000, y: -(rx - mx) * 1000, yaw: yaw(NF.RSole) };
    for (let i = 0; i < 2; i++) {
      const q = this.#place[i]!;
      // Robot yaw (counter-clockwise seen from above) is counter-clockwise on screen too: SVG's rotate is clockwise.
      setAttr(this.#feet[i]!.group, "transform", `translate(${q.x.toFixed(1)} ${q.y.toFixed(1)}) rotate(${(-q.yaw * 180 / Math.PI).toFixed(1)})`);
    }
  }

  update(f: FootState | null, t: TouchState | null): void {
    const hull: Array<[number, number]> = [];
    for (let i = 0; i < 2; i++) {
      const d = this.#feet[i]!;
      const side = i === 0 ? "left" : "right";
      const kg = f ? (i === 0 ? f.leftPressureKg : f.rightPressureKg) : null;
      const cop = f ? (i === 0 ? f.leftCenterOfPressureM : f.rightCenterOfPressureM) : null;
      const weight = f ? (i === 0 ? f.leftWeightKg : f.rightWeightKg) : null;
      for (let k = 0; k < 4; k++) {
        const v = kg?.[k] ?? null;
        const load = v === null ? 0 : Math.max(0, v);
        setAttr(d.sensors[k]!, "r", (5 + Math.min(16, Math.sqrt(load) * 7)).toFixed(1));
        setAttr(d.sensors[k]!, "data-loaded", String(load > LOADED_KG));
        setText(d.values[k]!, fmt(v, 2));
        if (load > LOADED_KG) {
          const [x, y] = FSR_POSITIONS_M[side][k]!;
          hull.push(this.#toView(i, -y * 1000, -x * 1000));
        }
      }
      const loaded = weight !== null && weight >= 0.001 && cop !== null;
      d.cop.style.display = loaded ? "" : "none";
      if (cop) {
        setAttr(d.cop, "cx", (-cop[1]! * 1000).toFixed(2));
        setAttr(d.cop, "cy", (-cop[0]! * 1000).toFixed(2));
        setAttr(d.cop, "data-x-m", String(cop[0]));
        setAttr(d.cop, "data-y-m", String(cop[1]));
      }
      setText(d.weight, weight === null ? "—" : `${fmt(weight, 2)} kg`);
      const bumper = t ? (i === 0 ? t.leftFoot : t.rightFoot) : false;
      setAttr(d.bumper, "data-on", String(bumper));
    }
    setAttr(this.#hull, "points", convexHull(hull).map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "));
    setText(this.#total, f ? `total ${fmt(f.leftWeightKg + f.rightWeightKg, 2)} kg` : "no foot data");
  }

  /** A point in foot `i`'s group coordinates → the view's. */
  #toView(i: number, cx: number, cy: number): [number, number] {
    const q = this.#place[i]!;
    const c = Math.cos(-q.yaw), s = Math.sin(-q.yaw);
    return [q.x + c * cx - s * cy, q.y + s * cx + c * cy];
  }
}

/** Andrew's monotone chain; returns the hull counter-clockwise (any orientation draws the same). */
export function convexHull(points: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const p = [...points].map(([x, y]) => [x, y] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o: [number, number], a: [number, number], b: [number, number]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: Array<[number, number]> = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper: Array<[number, number]> = [];
  for (let i = p.length - 1; i >= 0; i--) {
    const q = p[i]!;
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, q) <= 0) upper.pop();
    upper.push(q);
  }
  return [...lower.slice(0, -1), ...upper.slice(0, -1)];
}
