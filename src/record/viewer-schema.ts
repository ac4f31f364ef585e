/**
 * The JSON Schemas bodylink records and advertises, in the form the viewers parse: one `type` per
 * property.
 *
 * Lichtblick's JSON-schema parser (packages/mcap-support/src/parseJsonSchema.ts) takes a property
 * only with a single `type` (boolean, string, number, integer, object with `properties`, or an
 * array of one of those); an `anyOf` makes it throw and drop the channel ("Failed to parse channel
 * schema"). The robot API's TypeBox schemas use `anyOf` for enums and for nullable fields, which is
 * right for the API's validator; the recording and the live Foxglove channels get this rewrite:
 *
 * - an enum (`anyOf` of `const`s of one type) becomes that type with `enum: [...]`;
 * - a nullable (`anyOf [X, null]`) becomes X, is no longer required, and its description says
 *   "absent when null": the recorded message leaves out a property whose value is null
 *   ({@link viewerJson});
 * - an array whose items are nullable gets items of the non-null type and is left out of a
 *   message when any of its elements is null (no body has partly known arrays today: the TNY-360's
 *   efforts, temperatures and IMU are known for every joint or axis, or for none).
 *
 * Nothing else changes: the same property names, values and units as the API's state message.
 * A schema part the viewers cannot take and this cannot rewrite (a union of two object shapes, an
 * array of arrays, an object without `properties`) throws: a bug, caught by the tests.
 *
 * Prepare side: runs once per channel when a file is opened or a server starts.
 */

type Json = Record<string, unknown>;

export interface ViewerSchema {
  /** The rewritten schema. */
  readonly schema: Json;
  /** Whether messages must leave out nulls ({@link viewerJson}) to match it. */
  readonly dropsNulls: boolean;
}

const ABSENT_WHEN_NULL = "Absent when null (the robot API's null: not known on this body)";
const ABSENT_WHEN_ANY_NULL = "Absent when any element is null (the robot API's null: not known on this body)";

/** Rewrite a JSON Schema (a TypeBox one included) to one `type` per property. */
export function viewerSchema(schema: object): ViewerSchema {
  const ctx = { dropsNulls: false };
  const out = rewrite(schema as Json, "$", ctx);
  if (out.nullable) throw new Error("viewerSchema: the message itself may be null");
  return { schema: out.schema, dropsNulls: ctx.dropsNulls };
}

/** A message as the rewritten schema describes it: properties whose value is null (or arrays holding a null) left out. */
export function viewerJson(value: unknown, dropsNulls: boolean): string {
  return dropsNulls ? JSON.stringify(value, withoutNulls) : JSON.stringify(value);
}

function withoutNulls(_key: string, v: unknown): unknown {
  if (v === null) return undefined;
  if (Array.isArray(v) && v.includes(null)) return undefined;
  return v;
}

interface Rewritten {
  schema: Json;
  /** The value may be null (the parent makes it optional). */
  nullable: boolean;
}

const PRIMITIVES = new Set(["string", "number", "integer", "boolean"]);

function rewrite(s: Json, path: string, ctx: { dropsNulls: boolean }): Rewritten {
  const { anyOf, oneOf, ...rest } = s;
  const union = (anyOf ?? oneOf) as Json[] | undefined;
  if (union) return rewriteUnion(union, rest, path, ctx);
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== "null");
    if (types.length !== 1) throw new Error(`viewerSchema: ${path} has types ${JSON.stringify(s.type)}; the viewers take one`);
    const inner = rewrite({ ...s, type: types[0] }, path, ctx);
    return { schema: inner.schema, nullable: inner.nullable || types.length < (s.type as string[]).length };
  }
  const type = s.type;
  if (type === "object") {
    const props = s.properties as Record<string, Json> | undefined;
    if (!props) throw new Error(`viewerSchema: ${path} is an object without properties; the viewers need them`);
    const required = new Set((s.required as string[] | undefined) ?? []);
    const properties: Record<string, Json> = {};
    for (const [k, p] of Object.entries(props)) {
      const r = rewrite(p, `${path}.${k}`, ctx);
      properties[k] = r.schema;
      if (r.nullable) {
        required.delete(k);
        ctx.dropsNulls = true;
      }
    }
    const out: Json = { ...copyKeywords(s), type: "object", properties };
    if (required.size > 0) out.required = [...required];
    if (s.additionalProperties !== undefined) out.additionalProperties = s.additionalProperties;
    return { schema: out, nullable: false };
  }
  if (type === "array") {
    const items = s.items as Json | undefined;
    if (!items || Array.isArray(items)) throw new Error(`viewerSchema: ${path} is an array without one items schema`);
    const r = rewrite(items, `${path}[]`, ctx);
    const itemType = r.schema.type;
    if (itemType === "array") throw new Error(`viewerSchema: ${path} is an array of arrays; the viewers take arrays of one primitive or object type`);
    const out: Json = { ...copyKeywords(s), type: "array", items: r.schema };
    for (const k of ["minItems", "maxItems"]) if (s[k] !== undefined) out[k] = s[k];
    if (r.nullable) {
      out.description = joinText(out.description, ABSENT_WHEN_ANY_NULL);
      ctx.dropsNulls = true;
      return { schema: out, nullable: true };
    }
    return { schema: out, nullable: false };
  }
  if (typeof type === "string" && PRIMITIVES.has(type)) {
    const out: Json = { ...copyKeywords(s), type };
    for (const k of ["enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "contentEncoding"]) if (s[k] !== undefined) out[k] = s[k];
    if (s.const !== undefined) out.enum = [s.const];
    return { schema: out, nullable: false };
  }
  if (type === "null") return { schema: {}, nullable: true };
  throw new Error(`viewerSchema: ${path} has no single type (${JSON.stringify(type)})`);
}

function rewriteUnion(union: Json[], outer: Json, path: string, ctx: { dropsNulls: boolean }): Rewritten {
  const nonNull = union.filter((b) => b.type !== "null");
  const nullable = nonNull.length < union.length;
  let inner: Rewritten;
  if (nonNull.length === 1) {
    inner = rewrite({ ...nonNull[0]!, ...pickText(outer, nonNull[0]!) }, path, ctx);
  } else if (nonNull.length > 1 && nonNull.every((b) => b.const !== undefined || (b.enum !== undefined && !b.anyOf))) {
    // An enum: every branch a constant (or a list of them) of one type.
    const values = nonNull.flatMap((b) => (b.const !== undefined ? [b.const] : (b.enum as unknown[])));
    const types = new Set(values.map((v) => (typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v)));
    if (types.has("number")) types.delete("integer");
    if (types.size !== 1) throw new Error(`viewerSchema: ${path} is an enum of mixed types`);
    const type = [...types][0]!;
    if (!PRIMITIVES.has(type)) throw new Error(`viewerSchema: ${path} is an enum of ${type}`);
    inner = { schema: { ...copyKeywords(outer), type, enum: values }, nullable: false };
  } else if (nonNull.length > 1 && nonNull.every((b) => b.anyOf || b.oneOf)) {
    // A union of unions (an enum wrapped once more, e.g. a category or null): flatten.
    return rewriteUnion(nonNull.flatMap((b) => (b.anyOf ?? b.oneOf) as Json[]).concat(nullable ? [{ type: "null" }] : []), outer, path, ctx);
  } else {
    throw new Error(`viewerSchema: ${path} is a union of ${nonNull.length} shapes; the viewers take one type`);
  }
  if (!nullable && !inner.nullable) return inner;
  const schema = { ...inner.schema };
  if (schema.type !== "array") schema.description = joinText(schema.description, ABSENT_WHEN_NULL);
  return { schema, nullable: true };
}

/** The annotation keywords kept as they are. */
function copyKeywords(s: Json): Json {
  const out: Json = {};
  for (const k of ["title", "description", "$id", "default"]) if (s[k] !== undefined) out[k] = s[k];
  return out;
}

/** A union's own title/description win over its branch's. */
function pickText(outer: Json, branch: Json): Json {
  const out: Json = {};
  if (outer.description !== undefined) out.description = outer.description;
  else if (branch.description !== undefined) out.description = branch.description;
  if (outer.title !== undefined) out.title = outer.title;
  return out;
}

function joinText(a: unknown, b: string): string {
  return typeof a === "string" && a.length > 0 ? `${a.replace(/\.?\s*$/, "")}. ${b}` : b;
}
