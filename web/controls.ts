/**
 * The teleoperation kit every body's controls are built with (web/bodies/<body>-controls.ts):
 * what the page's Teleop (teleop.ts) lends them (a group box, sending under the lease, the
 * commanded pose for the 3D ghost) and the widgets they share (sliders, buttons, the smooth
 * enable/disable row). Knows no body.
 */
import { fmt, make, setText } from "./util.js";

export type LogFn = (kind: string, text: string, level?: "info" | "warn" | "bad") => void;

/** How often a dragged slider sends at most. */
export const SEND_EVERY_MS = 100;

/** What a body's controls get from the page's Teleop. */
export interface TeleopKit {
  /** Whether this page holds control now. */
  held(): boolean;
  readonly log: LogFn;
  /** A titled group in the teleop fieldset (disabled unless this page holds control). */
  group(title: string): HTMLElement;
  /** Run a command while held; a refusal is logged and shown, never thrown. */
  send(what: string, f: () => Promise<unknown>): Promise<void>;
  /** The commanded joint targets (the API's joint order), shown as the 3D view's ghost while held. */
  targets(): Float64Array | null;
  setTargets(t: Float64Array | null): void;
  /** Tell the page the targets changed (in place or replaced). */
  targetsChanged(): void;
}

/** A facet with smooth enable/disable (NAO and TNY-360: the same SDK calls). */
export interface SmoothFacet {
  smoothEnable(): Promise<{ estimatedS: number }>;
  smoothDisable(): Promise<{ estimatedS: number }>;
}

export interface Slider {
  readonly input: HTMLInputElement;
  readonly value: HTMLElement;
}

/** Set a slider's thumb and label (display only: no input event, so nothing is sent). */
export function showValue(s: Slider, v: number, unit: string): void {
  const text = String(v);
  if (s.input.value !== text) s.input.value = text;
  setText(s.value, `${fmt(v, 2)} ${unit}`);
}

export function slider(parent: HTMLElement, label: string, min: number, max: number, step: number, value: number, unit: string, id?: string): Slider {
  const row = make("label", "slider");
  const name = make("span", "slider-name", label);
  const input = make("input");
  input.type = "range";
  input.min = String(min);
  input.max = String(max);
  input.step = String(step);
  input.value = String(value);
  if (id) input.id = id;
  input.dataset.name = label;
  input.setAttribute("aria-valuetext", `${value} ${unit}`);
  const out = make("output", "slider-value", `${fmt(value, 2)} ${unit}`);
  input.addEventListener("input", () => {
    setText(out, `${fmt(Number(input.value), 2)} ${unit}`);
    input.setAttribute("aria-valuetext", `${input.value} ${unit}`);
  });
  row.append(name, input, out);
  parent.append(row);
  return { input, value: out };
}

export function button(parent: HTMLElement, text: string, onClick: () => void, className = "btn"): HTMLButtonElement {
  const b = make("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  parent.append(b);
  return b;
}

/** Smooth enable/disable in a group of its own; returns the row for more controls. */
export function powerRow(kit: TeleopKit, title: string, idPrefix: string, facet: SmoothFacet, after?: (estimatedS: number) => void): HTMLElement {
  const row = make("div", "btn-row");
  kit.group(title).append(row);
  const smooth = (enable: boolean) =>
    void kit.send(enable ? "smooth enable" : "smooth disable", async () => {
      const r = enable ? await facet.smoothEnable() : await facet.smoothDisable();
      kit.log("command", `${enable ? "smooth enable" : "smooth disable"}: about ${fmt(r.estimatedS, 1)} s`);
      after?.(r.estimatedS);
    });
  button(row, "Smooth enable (stand)", () => smooth(true)).id = `${idPrefix}-smooth-enable`;
  button(row, "Smooth disable (rest)", () => smooth(false)).id = `${idPrefix}-smooth-disable`;
  return row;
}
