/**
 * Lichtblick's rule for JSON Schemas, as its parser applies it (Lichtblick-Suite/lichtblick
 * packages/mcap-support/src/parseJsonSchema.ts, read 2026-12): the root and every nested object has
 * `"type": "object"` and `properties`; each property has one `type` string: boolean, string (no
 * contentEncoding, or base64), number, integer, object (recursively), or array whose `items` has
 * one of boolean, string (no contentEncoding), number, integer, object. Anything else (`anyOf`,
 * `oneOf`, a type list, `null`, arrays of arrays) throws there, and the player drops the channel.
 *
 * Stricter than Lichtblick in one way: an `enum` must hold values of the property's type.
 * Returns the problems, one line each (empty: the viewer parses it).
 */
type Json = Record<string, unknown>;

export function singleTypeProblems(schema: unknown, name = "$"): string[] {
  const problems: string[] = [];
  objectSchema(schema, name, problems);
  return problems;
}

function objectSchema(s: unknown, path: string, problems: string[]): void {
  if (!s || typeof s !== "object") {
    problems.push(`${path}: not a schema object`);
    return;
  }
  const o = s as Json;
  if (o.type !== "object") {
    problems.push(`${path}: expected "type": "object", got ${JSON.stringify(o.type)}`);
    return;
  }
  if (!o.properties || typeof o.properties !== "object") {
    problems.push(`${path}: an object without properties`);
    return;
  }
  for (const [k, p] of Object.entries(o.properties as Record<string, Json>)) field(p, `${path}.${k}`, problems);
}

function field(p: Json, path: string, problems: string[]): void {
  switch (p.type) {
    case "boolean":
    case "number":
    case "integer":
      enumOf(p, path, problems);
      return;
    case "string":
      if (p.contentEncoding !== undefined && p.contentEncoding !== "base64") problems.push(`${path}: contentEncoding ${JSON.stringify(p.contentEncoding)}`);
      enumOf(p, path, problems);
      return;
    case "object":
      objectSchema(p, path, problems);
      return;
    case "array": {
      const items = p.items as Json | undefined;
      if (!items || typeof items !== "object" || Array.isArray(items)) {
        problems.push(`${path}: an array without one items schema`);
        return;
      }
      switch (items.type) {
        case "boolean":
        case "number":
        case "integer":
          enumOf(items, `${path}[]`, problems);
          return;
        case "string":
          if (items.contentEncoding !== undefined) problems.push(`${path}[]: contentEncoding in an array item`);
          enumOf(items, `${path}[]`, problems);
          return;
        case "object":
          objectSchema(items, `${path}[]`, problems);
          return;
        default:
          problems.push(`${path}[]: unsupported array item type ${JSON.stringify(items.type)}${items.anyOf ? " (anyOf)" : ""}`);
          return;
      }
    }
    default:
      problems.push(`${path}: unsupported field type ${JSON.stringify(p.type)}${p.anyOf ? " (anyOf)" : p.oneOf ? " (oneOf)" : ""}`);
  }
}

function enumOf(p: Json, path: string, problems: string[]): void {
  if (p.enum === undefined) return;
  if (!Array.isArray(p.enum) || p.enum.length === 0) {
    problems.push(`${path}: enum is not a list of values`);
    return;
  }
  const ok = (v: unknown): boolean => (p.type === "integer" ? Number.isInteger(v) : p.type === "number" ? typeof v === "number" : typeof v === p.type);
  for (const v of p.enum) if (!ok(v)) problems.push(`${path}: enum value ${JSON.stringify(v)} is not a ${String(p.type)}`);
}
