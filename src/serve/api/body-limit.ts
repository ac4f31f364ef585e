/**
 * Request body limits derived from the route's body schema (docs/security.md): every request schema
 * is bounded (strings have maxLength, arrays maxItems, objects no additional properties), so the
 * longest compact JSON a valid body can take is a number we can compute, and anything much larger
 * is refused with 413 from its Content-Length (or its first bytes when it is chunked) before a byte
 * of it is parsed. Deriving the limit from the schema keeps it true when a route's schema changes.
 *
 * An unbounded schema throws at server build: a route must not accept a body we cannot size.
 *
 * Module-load and server-build only.
 */
import type { TSchema } from "typebox";

/** Longest JSON text of a finite double in JS's shortest round-trip form ("-2.2250738585072014e-308"). */
const NUMBER_CHARS = 24;
/** Room for formatting (indentation, newlines) on top of twice the compact size. */
const FORMAT_SLACK_BYTES = 512;
/** Smallest limit any route gets (a body-less request may still carry "{}" and whitespace). */
export const MIN_BODY_LIMIT_BYTES = 1024;

interface JsonSchemaLike {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchemaLike[];
  oneOf?: JsonSchemaLike[];
  items?: JsonSchemaLike;
  maxItems?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchemaLike>;
  additionalProperties?: boolean | JsonSchemaLike;
}

/**
 * The longest compact JSON text (bytes, UTF-8) of any value `schema` accepts. Strings count 6 bytes
 * per character (every character escaped as \uXXXX). Throws for an unbounded schema, naming `where`.
 */
export function maxJsonBytes(schema: TSchema, where = "body"): number {
  return size(schema as JsonSchemaLike, where);
}

function size(s: JsonSchemaLike, where: string): number {
  if (s.const !== undefined) return Buffer.byteLength(JSON.stringify(s.const));
  if (s.enum) return Math.max(...s.enum.map((v) => Buffer.byteLength(JSON.stringify(v))));
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return Math.max(...alts.map((a, i) => size(a, `${where}|${i}`)));
  switch (s.type) {
    case "null":
      return 4;
    case "boolean":
      return 5;
    case "integer":
      if (Number.isSafeInteger(s.minimum) && Number.isSafeInteger(s.maximum)) return Math.max(String(s.minimum).length, String(s.maximum).length);
      return NUMBER_CHARS;
    case "number":
      return NUMBER_CHARS;
    case "string":
      if (s.maxLength === undefined) throw new Error(`request schema at ${where} is a string without maxLength: its body cannot be sized`);
      return 2 + 6 * s.maxLength;
    case "array": {
      if (s.maxItems === undefined || !s.items) throw new Error(`request schema at ${where} is an array without maxItems: its body cannot be sized`);
      return 2 + s.maxItems * size(s.items, `${where}[]`) + Math.max(0, s.maxItems - 1); // items and commas
    }
    case "object": {
      if (s.additionalProperties !== false) throw new Error(`request schema at ${where} allows additional properties: its body cannot be sized`);
      const entries = Object.entries(s.properties ?? {});
      let n = 2 + Math.max(0, entries.length - 1); // braces and commas
      for (const [k, v] of entries) n += Buffer.byteLength(JSON.stringify(k)) + 1 + size(v, `${where}.${k}`);
      return n;
    }
    default:
      throw new Error(`request schema at ${where} has no type this sizer knows (${JSON.stringify(s.type)})`);
  }
}

/** The body limit for a route: room for any valid body, pretty-printed; none below MIN_BODY_LIMIT_BYTES. */
export function bodyLimitFor(schema: TSchema | undefined, where?: string): number {
  if (!schema) return MIN_BODY_LIMIT_BYTES;
  return Math.max(MIN_BODY_LIMIT_BYTES, 2 * maxJsonBytes(schema, where) + FORMAT_SLACK_BYTES);
}
