/** Small DOM helpers shared by the dashboard's modules (browser only). */

export function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`dashboard: #${id} is missing from index.html`);
  return e as T;
}

export function make<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Write only when the text changed (saves layout work at 20 Hz). */
export function setText(e: Element, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

export function setAttr(e: Element, name: string, value: string): void {
  if (e.getAttribute(name) !== value) e.setAttribute(name, value);
}

export type Level = "ok" | "warn" | "bad" | "calm";
export function setLevel(e: HTMLElement, text: string, level: Level): void {
  setText(e, text);
  if (e.dataset.level !== level) e.dataset.level = level;
}

export const fmt = (v: number | null | undefined, digits = 3): string => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(digits) : "—");

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export const clockTime = (epochMs: number): string => new Date(epochMs).toLocaleTimeString();

/** Run `f` at most once per `ms`, always with the newest arguments (the last call is never lost). */
export function throttle<A extends unknown[]>(ms: number, f: (...a: A) => void): (...a: A) => void {
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let pending: A | null = null;
  const fire = () => {
    timer = null;
    last = performance.now();
    const a = pending!;
    pending = null;
    f(...a);
  };
  return (...a: A) => {
    pending = a;
    if (timer) return;
    const wait = last + ms - performance.now();
    if (wait <= 0) fire();
    else timer = setTimeout(fire, wait);
  };
}
