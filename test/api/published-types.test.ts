/**
 * The robot API's types that `startApiServer`'s published declarations carry are plain (no TypeBox
 * type: test/package.test.ts checks a strict consumer's program reaches none of TypeBox's files),
 * and each is exactly what its TypeBox schema says: `agree<…>(true)` compiles only when the two are
 * the same type (up to readonly), so `npm run lint` fails on drift. The adapter's schema types are
 * TypeBox's, structurally: a TypeBox schema is one, and what is not a schema is refused.
 */
import Type, { type Static, type TObject, type TSchema } from "typebox";
import { describe, expect, it } from "vitest";
import type { ApiObjectSchema, ApiSchema } from "../../src/serve/api/adapter.js";
import type { FleetScatterAnswer } from "../../src/serve/api/fleet-gateway.js";
import { ScatterSchema } from "../../src/serve/api/routes/fleet.js";
import { agree, type Same } from "../support/same-type.js";

/** true when A is assignable to B. */
type Assignable<A, B> = [A] extends [B] ? true : false;

const CHECKED = {
  scatter: agree<FleetScatterAnswer, Static<typeof ScatterSchema>>(true),
  // TypeBox's TSchema is an empty interface: the routes' ApiSchema passes where TypeBox takes one, and back
  apiSchemaIsTSchema: true satisfies Assignable<ApiSchema, TSchema>,
  tschemaIsApiSchema: true satisfies Assignable<TSchema, ApiSchema>,
  objectIsApiObject: true satisfies Assignable<TObject, ApiObjectSchema>,
} as const;

/** A schema as an adapter builds one: TypeBox's, held as the adapter's type. */
const built: ApiObjectSchema = Type.Object({ a: Type.Number() });

describe("the published robot API types", () => {
  it("FleetScatterAnswer is the fleet routes' ScatterSchema, and TypeBox's schemas are the adapter's schema types", () => {
    expect(Object.values(CHECKED).every((v) => v === true)).toBe(true);
    expect({ type: built.type, properties: Object.keys(built.properties) }).toEqual({ type: "object", properties: ["a"] });
    // the schema the type is checked against is the one the routes answer with
    expect(Object.keys(ScatterSchema.properties).sort()).toEqual(["elapsed_ms", "missing", "replies", "unverified"]);
  });

  it("the checks reject what they must: a missing field, a wider literal, a non-object schema", () => {
    const missing: Same<Omit<FleetScatterAnswer, "unverified">, Static<typeof ScatterSchema>> = false;
    const wider: Same<Omit<FleetScatterAnswer, "elapsed_ms"> & { elapsed_ms: number | string }, Static<typeof ScatterSchema>> = false;
    const notObject: Assignable<ReturnType<typeof Type.Number>, ApiObjectSchema> = false;
    const notSchema: Assignable<string, ApiSchema> = false;
    expect([missing, wider, notObject, notSchema]).toEqual([false, false, false, false]);
  });
});
