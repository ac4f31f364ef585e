/**
 * The NAO's feet from above (SVG, millimetres): both soles where the forward kinematics puts them
 * (relative to the point between the two soles), the eight FSRs at Aldebaran's positions
 * (src/bodies/nao/feet.ts) sized and shaded by load, each foot's weight and centre of pressure
 * as a dot, the support polygon (convex hull of the loaded sensors), the centre of mass's ground
 * projection (from the kinematics and Aldebaran's masses, seen along gravity) and whether it is over
 * the support polygon, and the bumpers at the toes.
 *
 * Screen axes: robot x (forward) is up, robot y (left) is left. Inside each foot group the
 * coordinates are that ankle frame's: cx = −y·1000, cy = −x·1000, so the CoP dot's cx/cy read
 * back as the stream's center_of_pressure (the browser test checks exactly that).
 */
import { FSR_POSITIONS_M } from "../src/bodies/nao/feet.js";
import { NAO_FRAME_INDEX as NF, type NaoKinematics } from "../src/bodies/nao/kinematics.js";
import { rotationXYZ } from "../src/bodies/tny360/kinematics.js";
import type { FootState, TouchState } from "../src/client/index.js";
import { fmt, setAttr, setText, svg } from "./util.js";

/** A sensor counts as touching the ground above this, kg. */
const LOADED_KG = 0.1;
/** Sole outline in the ankle frame, mm (x forward, y left), left foot; the right one mirrors y. */
const SOLE_LEFT_MM: ReadonlyArray<readonly [number, number]> = [
  [100, 40],
  [108, 22],
  [110, 0],
  [106, -22],
  [95, -33],
  [-40, -30],
  [-52, -20],
  [-55, 0],
  [-52, 26],
  [-40, 42],
  [80, 46],
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
  readonly #com: SVGGElement;
  readonly #comText: SVGTextElement;
  /** The centre of mass projected on the ground, view mm (null: not known). */
  #comView: [number, number] | null = null;
  readonly #tiltR = new Float64Array(9);
  // Foot placement in the view (mm, screen coordinates) and yaw (rad), from the kinematics.
  readonly #place = [
    { x: -50, y: 0, yaw: 0 },
    { x: 50, y: 0, yaw: 0 },
  ];

  constructor(host: HTMLElement) {
    this.root = svg("svg", { viewBox: "-190 -150 380 276", role: "img", "aria-label": "Both feet from above: pressure sensors, centre of pressure, support polygon" });
    this.root.classList.add("feet-svg");
    this.#hull = svg("polygon", { class: "support", points: "" });
    this.root.append(this.#hull);
    this.#feet = [this.#foot("left"), this.#foot("right")];
    this.#total = svg("text", { x: 0, y: 100, class: "total", "text-anchor": "middle" });
    // The centre of mass's ground projection: a ringed cross, on top of everything.
    this.#com = svg("g", { class: "com", "data-x-m": "", "data-y-m": "", "data-inside": "" });
    this.#com.append(svg("circle", { cx: 0, cy: 0, r: 6 }), svg("path", { d: "M -10 0 H 10 M 0 -10 V 10" }));
    this.#com.style.display = "none";
    this.#comText = svg("text", { x: 0, y: 118, class: "com-text", "text-anchor": "middle" });
    this.root.append(this.#total, this.#com, this.#comText);
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

  /**
   * Place the soles and the centre of mass as the kinematics has them (call with an updated
   * NaoKinematics), seen along gravity: `tilt` is the torso's [roll, pitch] (the inertial unit's).
   */
  placeFrom(k: NaoKinematics, tilt: readonly number[] | null = null): void {
    const p = k.poses;
    const R = this.#tiltR;
    rotationXYZ(tilt?.[0] ?? 0, tilt?.[1] ?? 0, 0, R);
    // x, y of a torso-frame point once the torso is tilted (the ground's frame, up to yaw).
    const gx = (x: number, y: number, z: number) => R[0]! * x + R[1]! * y + R[2]! * z;
    const gy = (x: number, y: number, z: number) => R[3]! * x + R[4]! * y + R[5]! * z;
    const ls = 12 * NF.LSole + 9;
    const rs = 12 * NF.RSole + 9;
    const lx = gx(p[ls]!, p[ls + 1]!, p[ls + 2]!),
      ly = gy(p[ls]!, p[ls + 1]!, p[ls + 2]!);
    const rx = gx(p[rs]!, p[rs + 1]!, p[rs + 2]!),
      ry = gy(p[rs]!, p[rs + 1]!, p[rs + 2]!);
    const mx = (lx + rx) / 2,
      my = (ly + ry) / 2;
    const c = k.centerOfMass;
    const cx = gx(c[0]!, c[1]!, c[2]!) - mx,
      cy = gy(c[0]!, c[1]!, c[2]!) - my;
    this.#comView = [-cy * 1000, -cx * 1000];
    setAttr(this.#com, "transform", `translate(${this.#comView[0].toFixed(1)} ${this.#comView[1].toFixed(1)})`);
    setAttr(this.#com, "data-x-m", cx.toFixed(5));
    setAttr(this.#com, "data-y-m", cy.toFixed(5));
    this.#com.style.display = "";
    const yaw = (f: number) => Math.atan2(p[12 * f + 3]!, p[12 * f]!);
    this.#place[0] = { x: -(ly - my) * 1000, y: -(lx - mx) * 1000, yaw: yaw(NF.LSole) };
    this.#place[1] = { x: -(ry - my) * 1000, y: -(rx - mx) * 1000, yaw: yaw(NF.RSole) };
    for (let i = 0; i < 2; i++) {
      const q = this.#place[i]!;
      // Robot yaw (counter-clockwise seen from above) is counter-clockwise on screen too: SVG's rotate is clockwise.
      setAttr(this.#feet[i]!.group, "transform", `translate(${q.x.toFixed(1)} ${q.y.toFixed(1)}) rotate(${((-q.yaw * 180) / Math.PI).toFixed(1)})`);
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
    const h = convexHull(hull);
    setAttr(this.#hull, "points", h.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "));
    // Static balance at a glance: is the centre of mass over the support polygon?
    const com = this.#comView;
    const inside = com && h.length >= 3 ? insideConvex(h, com) : null;
    setAttr(this.#com, "data-inside", inside === null ? "" : String(inside));
    setText(
      this.#comText,
      !com ? "" : inside === null ? "centre of mass (+): no support polygon" : inside ? "centre of mass (+): over the support polygon" : "centre of mass (+): OUTSIDE the support polygon",
    );
    setText(this.#total, f ? `total ${fmt(f.leftWeightKg + f.rightWeightKg, 2)} kg` : "no foot data");
  }

  /** A point in foot `i`'s group coordinates → the view's. */
  #toView(i: number, cx: number, cy: number): [number, number] {
    const q = this.#place[i]!;
    const c = Math.cos(-q.yaw),
      s = Math.sin(-q.yaw);
    return [q.x + c * cx - s * cy, q.y + s * cx + c * cy];
  }
}

/** Whether `p` is inside (or on) the convex polygon `hull` (counter-clockwise, as convexHull returns it; SVG's y down flips only the sense, not the test). */
export function insideConvex(hull: ReadonlyArray<readonly [number, number]>, p: readonly [number, number]): boolean {
  let sign = 0;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i]!;
    const b = hull[(i + 1) % hull.length]!;
    const cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
    if (cross === 0) continue;
    const s = cross > 0 ? 1 : -1;
    if (sign === 0) sign = s;
    else if (s !== sign) return false;
  }
  return true;
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
