/**
 * What every generated MJCF model (bodies/<body>/mjcf.ts) writes the same way: numbers as text and
 * the inertia of a primitive shape. Pure.
 */

/** A primitive: its inertia is inferred from it, and it may also collide. Positions in the link's frame, m. */
export type MjcfShape =
  | { readonly kind: "box"; readonly half: readonly [number, number, number]; readonly at: readonly [number, number, number] }
  | { readonly kind: "capsule"; readonly from: readonly [number, number, number]; readonly to: readonly [number, number, number]; readonly r: number }
  | { readonly kind: "sphere"; readonly r: number; readonly at: readonly [number, number, number] };

/** A number as MJCF text: 9 significant digits (the tables' values exactly, sums without float noise), no "-0". */
export function mjcfNum(x: number): string {
  const v = Number(x.toPrecision(9));
  return Object.is(v, -0) || v === 0 ? "0" : String(v);
}

/** Numbers as MJCF text, space-separated. */
export const mjcfVec = (v: readonly number[]): string => v.map(mjcfNum).join(" ");

/** Principal moments (Ixx, Iyy, Izz) of a solid shape of mass m. Capsules count as cylinders. */
export function shapeInertia(s: MjcfShape, m: number): [number, number, number] {
  if (s.kind === "sphere") {
    const i = 0.4 * m * s.r * s.r;
    return [i, i, i];
  }
  if (s.kind === "box") {
    const [a, b, c] = s.half;
    return [(m * (b * b + c * c)) / 3, (m * (a * a + c * c)) / 3, (m * (a * a + b * b)) / 3];
  }
  const d = [s.to[0] - s.from[0], s.to[1] - s.from[1], s.to[2] - s.from[2]];
  const h = Math.hypot(d[0]!, d[1]!, d[2]!);
  const along = 0.5 * m * s.r * s.r;
  const across = (m * (3 * s.r * s.r + h * h)) / 12;
  // Principal axis: the segment's dominant component (the segments here run along one axis).
  const k = d.map(Math.abs).indexOf(Math.max(...d.map(Math.abs)));
  return [0, 1, 2].map((i) => (i === k ? along : across)) as [number, number, number];
}
