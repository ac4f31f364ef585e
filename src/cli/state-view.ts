/**
 * How `bodylink state` shows a state to a person: a header (body, seq, time, link, who holds
 * control), the scalar and vector fields with their units, and one row per joint, named, with a
 * column per joint array. Units and integer-ness come from the server's own OpenAPI schema of
 * GET /v1/state (the descriptions start with the unit), so the CLI never disagrees with the API.
 */
type Json = Record<string, unknown>;

export interface FieldInfo {
  readonly unit: string | null;
  readonly integer: boolean;
}

export interface StateView {
  readonly body: string;
  readonly jointNames: readonly string[];
  /** By dotted path (`battery.temperature`). */
  readonly fields: ReadonlyMap<string, FieldInfo>;
}

/**
 * Fields whose stream value is not in the REST units (GET /v1/stream's description says so:
 * only the NAO's battery.temperature, in LoLA's scale): what to print beside them in --watch.
 */
export const STREAM_UNITS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  nao: { "battery.temperature": "(LoLA's scale: 28.5 °C reads 2.8; state without --watch gives °C)" },
};

/** The unit a schema description starts with ("A, negative while discharging" → "A"), if any. */
export function unitOf(description: string | undefined): string | null {
  if (!description) return null;
  const first = description.split(/,\s|:\s|\s\(/)[0]!.trim();
  return first.length > 0 && first.length <= 6 && !/\s/.test(first) ? first : null;
}

interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
}

/** Field units and types from an OpenAPI state schema. */
export function fieldsOf(schema: Schema): Map<string, FieldInfo> {
  const out = new Map<string, FieldInfo>();
  const walk = (prefix: string, s: Schema) => {
    if (s.properties) {
      for (const [k, v] of Object.entries(s.properties)) walk(prefix ? `${prefix}.${k}` : k, v);
      return;
    }
    const item = s.type === "array" ? s.items : s;
    const integer = item?.type === "integer" || (item?.anyOf?.every((a) => a.type === "integer" || a.type === "null") ?? false);
    const numeric = integer || item?.type === "number" || (item?.anyOf?.some((a) => a.type === "number") ?? false);
    out.set(prefix, { unit: numeric ? unitOf(s.description) : null, integer });
  };
  walk("", schema);
  return out;
}

/** GET /v1/info and the state schema from GET /openapi.json. */
export async function fetchView(getJson: (path: string) => Promise<unknown>): Promise<StateView> {
  const info = (await getJson("/v1/info")) as { body: string; joint_names: string[] };
  const doc = (await getJson("/openapi.json")) as { paths?: Record<string, { get?: { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> } }> };
  const schema = doc.paths?.["/v1/state"]?.get?.responses?.["200"]?.content?.["application/json"]?.schema ?? {};
  return { body: info.body, jointNames: info.joint_names, fields: fieldsOf(schema) };
}

export interface ControlAnswer {
  held: boolean;
  holder: { owner: string; source: string; expires_at: string } | null;
}

export function controlLine(c: ControlAnswer | null): string {
  if (!c) return "control: unknown";
  if (!c.held || !c.holder) return "control: free (nobody holds it)";
  return `control: held by ${JSON.stringify(c.holder.owner)} (${c.holder.source}) until ${c.holder.expires_at}`;
}

/** No schema at hand (a state from the fleet): no units, no joint names. */
function bareView(s: Json): StateView {
  return { body: String(s.body ?? "?"), jointNames: [], fields: new Map() };
}

const HEADER_KEYS = new Set(["type", "body", "seq", "timestamp_ms", "epoch_ms", "link"]);

function num(v: number, integer: boolean): string {
  if (integer) return String(v);
  if (Number.isInteger(v) && Math.abs(v) >= 1000) return String(v);
  const t = v.toFixed(3);
  return t === "-0.000" ? "0.000" : t;
}

function value(v: unknown, integer: boolean): string {
  if (typeof v === "number") return num(v, integer);
  if (v === null) return "-";
  return String(v);
}

/**
 * The state as lines. `stream`: the message came from the stream, whose few differing units
 * (STREAM_UNITS) are labelled as such.
 */
export function formatState(s: Json, view: StateView = bareView(s), control: ControlAnswer | null = null, stream = false): string {
  const lines: string[] = [];
  const t = typeof s.timestamp_ms === "number" ? `${(s.timestamp_ms / 1000).toFixed(3)} s` : "-";
  lines.push(`${view.body}  seq ${s.seq}  t ${t}  link ${s.link}  ${controlLine(control)}`);
  const n = view.jointNames.length;
  const jointCols: Array<[string, unknown[], FieldInfo | undefined]> = [];
  const override = stream ? (STREAM_UNITS[view.body] ?? {}) : {};
  const rows: Array<[string, string]> = [];
  const walk = (prefix: string, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v as Json)) walk(prefix ? `${prefix}.${k}` : k, x);
      return;
    }
    if (!prefix.includes(".") && HEADER_KEYS.has(prefix)) return;
    const info = view.fields.get(prefix);
    if (Array.isArray(v) && v.length === n && n > 0 && !prefix.includes(".")) {
      jointCols.push([prefix, v, info]);
      return;
    }
    const unit = override[prefix] ?? info?.unit ?? "";
    const shown = Array.isArray(v) ? v.map((x) => value(x, info?.integer ?? false)).join(" ") : value(v, info?.integer ?? false);
    rows.push([prefix, unit ? `${shown} ${unit}` : shown]);
  };
  walk("", s);
  const w = Math.max(0, ...rows.map(([k]) => k.length));
  for (const [k, v] of rows) lines.push(`${k.padEnd(w)}  ${v}`);
  if (jointCols.length > 0) {
    const nameW = Math.max(5, ...view.jointNames.map((j) => j.length));
    const heads = jointCols.map(([k, , info]) => {
      const name = k.replace(/^joint_/, "");
      return info?.unit ? `${name} (${info.unit})` : name;
    });
    const widths = heads.map((h) => Math.max(h.length, 7));
    lines.push("");
    lines.push(`${"joint".padEnd(nameW)}  ${heads.map((h, i) => h.padStart(widths[i]!)).join("  ")}`);
    for (let j = 0; j < n; j++) {
      const cells = jointCols.map(([, arr, info], i) => value(arr[j], info?.integer ?? false).padStart(widths[i]!));
      lines.push(`${view.jointNames[j]!.padEnd(nameW)}  ${cells.join("  ")}`);
    }
  }
  return lines.join("\n");
}
