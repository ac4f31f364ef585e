/**
 * What the dashboard knows about a body, one entry per registry body (`index.ts`): words, limits,
 * the body panel, its teleoperation controls, its own charts and table cells, how its messages
 * fill the history, and its simulated world if it has one. Every part is typed for its body
 * (`MessageOf<K>`, `BodyClient<K>`), so a body's code never asks which body it is.
 */
import type { SimPoseOf } from "../../src/bodies/parts.js";
import type { BodyKind } from "../../src/bodies/registry.js";
import type { BodyClient, MotorState, NaoStateMessage, StateMessage } from "../../src/client/index.js";
import type { TeleopKit } from "../controls.js";
import type { ChartSpec, SeriesSpec } from "../plots.js";

export type MessageOf<K extends BodyKind> = Extract<StateMessage, { readonly body: K }>;

/** A simulated body's world (docs/simulation.md): simulated time, the real-time factor, a fall, the torso and contacts. */
export type SimWorld = NonNullable<NaoStateMessage["sim"]>;
/** The poses "Reset simulation" offers a body (the API's table of each: POST /v1/sim/reset). */
export type { SimPoseOf } from "../../src/bodies/parts.js";

/** The body panel: what only this body has. */
export interface BodyPanel<K extends BodyKind> {
  /** At most ten times a second, with the newest current message of this body (null while there is none). */
  update(m: Readonly<MessageOf<K>> | null): void;
}

/** A body's teleoperation controls, built into the teleop fieldset (enabled only while this page holds control). */
export interface BodyControls<K extends BodyKind> {
  /** Every message while this page holds control (slider labels, the pad). */
  onState(m: Readonly<MessageOf<K>>): void;
  /** Every message while it does not: the disabled controls show the body as measured (after an e-stop: stiffness 0). */
  onIdle(m: Readonly<MessageOf<K>>): void;
  /** When this page takes control: start from the measured pose, so nothing jumps. */
  onHeld(): void;
}

/** `m` as a message of `kind`, or null when it is another body's (the check the client's stream already made). */
export function messageOf<K extends BodyKind>(kind: K, m: Readonly<StateMessage> | null): Readonly<MessageOf<K>> | null {
  return m !== null && m.body === kind ? (m as Readonly<MessageOf<K>>) : null;
}

export interface Limit {
  readonly minRad: number;
  readonly maxRad: number;
  /** The ends are where the joint is meant to rest (a hand fully closed or open), not a stop to warn of. Defaults to false. */
  readonly endsAreNormal?: boolean;
}

/** One history row's per-joint columns (store.ts), written in place. */
export interface JointColumns {
  position: Float64Array;
  target: Float64Array;
  effort: Float64Array;
  temperature: Float64Array;
  stiffness: Float64Array;
}

export interface DashboardBody<K extends BodyKind> {
  /** Header and page title, e.g. "NAO v6". */
  readonly name: string;
  /** Units note beside the joints table's title. */
  readonly jointsMeta: string;
  /** Title of the body panel. */
  readonly panelTitle: string;
  /** Under the 3D view: where its model comes from. */
  readonly viewNote: string;
  /** Header of the joints table's last column. */
  readonly extraColumn: string;
  /** Whether the joints have temperature sensors (a column and a chart). */
  readonly temperatures: boolean;
  /** The effort chart's title and unit. */
  readonly effort: { readonly title: string; readonly unit: string };
  /** Joints plotted by default (those the body has). */
  readonly defaultPlotted: readonly string[];
  limits(names: readonly string[]): Array<Limit | null>;
  panel(host: HTMLElement, c: BodyClient<K>): BodyPanel<K>;
  /** Its controls, built with the page's teleop kit (the lease, the group boxes, sending). */
  controls(kit: TeleopKit, c: BodyClient<K>): BodyControls<K>;
  /** Its simulated world, when the simulator reports one (a physics body: the state's `sim`), else null. */
  world(m: Readonly<MessageOf<K>>): SimWorld | null;
  /** "Reset simulation" beside the 3D view (shown with the world): the body's poses (the first selected) and the reset, under the page's lease. */
  readonly simReset: { readonly poses: readonly SimPoseOf<K>[]; reset(c: BodyClient<K>, pose: SimPoseOf<K>): Promise<{ readonly timeS: number }> };
  /** The orientation chart (after the IMU's), if the body reports angles. */
  readonly anglesChart: ChartSpec | null;
  /** The body's own charts, after the cycle chart. */
  readonly extraCharts: readonly ChartSpec[];
  /** The joints table's last column for joint `i`. */
  extraCell(m: Readonly<MessageOf<K>>, i: number, motors: MotorState | null): { readonly text: string; readonly bad: boolean };
  /** One line under the IMU numbers (orientation), or "". */
  imuText(m: Readonly<MessageOf<K>>): string;
  /** Roll, pitch (and yaw) for the 3D view, or null. */
  tilt(m: Readonly<MessageOf<K>>): readonly number[] | null;
  /**
   * Fill history row `row` from `m`: joint `i`'s columns (`commanded`: this page's targets while it
   * holds control, else null) and the body's named series (`put`). Called per stream message:
   * allocation-free.
   */
  recordJoint(m: Readonly<MessageOf<K>>, i: number, j: JointColumns, row: number, commanded: Float64Array | null): void;
  recordNamed(m: Readonly<MessageOf<K>>, put: (key: string, v: number | null | undefined) => void): void;
}

export const num = (v: number | null | undefined): number => (typeof v === "number" && Number.isFinite(v) ? v : Number.NaN);

/** A chart of two signals on two axes (battery charge and current, voltage and current). */
export function twoAxes(title: string, a: SeriesSpec & { unit: string }, b: SeriesSpec & { unit: string }): ChartSpec {
  return {
    id: "battery",
    title,
    axes: [
      { scale: a.unit, label: a.unit },
      { scale: b.unit, label: b.unit },
    ],
    series: [
      { key: a.key, label: a.label, color: a.color, scale: a.unit },
      { key: b.key, label: b.label, color: b.color, scale: b.unit },
    ],
  };
}

/** Limits from two arrays in joint order. */
export function arrayLimits(names: readonly string[], min: ArrayLike<number>, max: ArrayLike<number>): Array<Limit | null> {
  return names.map((_, i) => (i < min.length ? { minRad: min[i]!, maxRad: max[i]! } : null));
}
