/**
 * What every body panel is built from (web/bodies/<body>-panel.ts: what only that body has): a
 * titled sub-box and a definition list of values. Knows no body.
 */
import { make } from "./util.js";

export function dl(parent: HTMLElement, items: ReadonlyArray<readonly [string, string]>): Record<string, HTMLElement> {
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

export function sub(parent: HTMLElement, title: string, className = "sub"): HTMLElement {
  const s = make("div", className);
  s.append(make("h3", undefined, title));
  parent.append(s);
  return s;
}
