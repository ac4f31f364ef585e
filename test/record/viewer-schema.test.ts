/**
 * The viewers' form of the schemas (src/record/viewer-schema.ts) against a Lichtblick-style
 * single-type checker (test/support/single-type.ts): the robot API's own schemas fail it (anyOf for
 * enums and nullables), their rewrite passes, keeps every property, and the messages written with
 * viewerJson validate against it. Every schema a recording or the live server really carries is
 * checked in strict-mcap.test.ts (files, every body) and test/foxglove/ (live).
 */
import Type from "typebox";
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { P7_COMMAND_RECORD_SCHEMA, P7_STATE_RECORD_SCHEMA, TNY360_STATE_RECORD_SCHEMA } from "../../src/record/body-state-record.js";
import { EVENT_SCHEMA, TRANSFER_SCHEMA } from "../../src/record/channels.js";
import { NAO_STATE_SCHEMA } from "../../src/record/nao-state-record.js";
import { viewerJson, viewerSchema } from "../../src/record/viewer-schema.js";
import { singleTypeProblems } from "../support/single-type.js";

type Json = Record<string, unknown>;

const RECORDED = { NAO_STATE_SCHEMA, TRANSFER_SCHEMA, EVENT_SCHEMA, P7_STATE_RECORD_SCHEMA, P7_COMMAND_RECORD_SCHEMA, TNY360_STATE_RECORD_SCHEMA };

describe("the single-type checker", () => {
  it("finds what Lichtblick's parser throws on: anyOf enums, nullables, nullable array items, objects without properties, arrays of arrays", () => {
    expect(singleTypeProblems(TNY360_STATE_RECORD_SCHEMA).join("\n")).toMatch(/\$\.body: unsupported field type undefined \(anyOf\)/);
    expect(singleTypeProblems(TNY360_STATE_RECORD_SCHEMA).join("\n")).toMatch(/\$\.joint_efforts\[\]: unsupported array item type undefined \(anyOf\)/);
    expect(singleTypeProblems(TNY360_STATE_RECORD_SCHEMA).join("\n")).toMatch(/\$\.locomotion\.height: unsupported field type undefined \(anyOf\)/);
    expect(singleTypeProblems(P7_COMMAND_RECORD_SCHEMA).join("\n")).toMatch(/\$\.command: unsupported field type/);
    expect(singleTypeProblems({ type: "object", properties: { a: { type: "object" } } })).toEqual(["$.a: an object without properties"]);
    expect(singleTypeProblems({ type: "object", properties: { a: { type: "array", items: { type: "array", items: { type: "number" } } } } })).toEqual(['$.a[]: unsupported array item type "array"']);
    expect(singleTypeProblems({ type: "object", properties: { a: { type: ["number", "null"] } } })).toEqual(['$.a: unsupported field type ["number","null"]']);
    expect(singleTypeProblems({ type: "object", properties: { a: { type: "string", enum: ["x", 1] } } })).toEqual(["$.a: enum value 1 is not a string"]);
  });
});

describe("viewerSchema", () => {
  it.each(Object.entries(RECORDED))("%s: one type per property, the same properties at every depth", (_name, schema) => {
    const { schema: v } = viewerSchema(schema);
    expect(singleTypeProblems(v)).toEqual([]);
    expect(paths(v)).toEqual(paths(schema as Json));
  });

  it("an enum becomes its type with enum; a nullable its type, optional, 'absent when null'; a nullable array item the array optional", () => {
    const s = Type.Object({
      gait: Type.Union([Type.Literal("Creep"), Type.Literal("Walk")], { description: "gait" }),
      category: Type.Union([Type.Union([Type.Literal(0), Type.Literal(1)]), Type.Null()]),
      height: Type.Union([Type.Number(), Type.Null()], { description: "m" }),
      efforts: Type.Array(Type.Union([Type.Number(), Type.Null()]), { minItems: 2, maxItems: 2 }),
      holder: Type.Union([Type.Object({ owner: Type.String() }), Type.Null()]),
      state: Type.Literal("state"),
    });
    const { schema: v, dropsNulls } = viewerSchema(s);
    expect(dropsNulls).toBe(true);
    const p = v.properties as Record<string, Json>;
    expect(p.gait).toEqual({ description: "gait", type: "string", enum: ["Creep", "Walk"] });
    expect(p.category).toMatchObject({ type: "integer", enum: [0, 1] });
    expect(p.height).toEqual({ type: "number", description: "m. Absent when null (the robot API's null: not known on this body)" });
    expect(p.efforts).toMatchObject({ type: "array", items: { type: "number" }, minItems: 2, maxItems: 2, description: expect.stringMatching(/Absent when any element is null/) });
    expect(p.holder).toMatchObject({ type: "object", properties: { owner: { type: "string" } } });
    expect(p.state).toEqual({ type: "string", enum: ["state"] });
    expect(new Set(v.required as string[])).toEqual(new Set(["gait", "state"]));
    expect(singleTypeProblems(v)).toEqual([]);
  });

  it("refuses what it cannot make single-typed (a bug to fix in the schema, not a file the viewers drop)", () => {
    expect(() => viewerSchema(Type.Object({ a: Type.Union([Type.Object({ x: Type.Number() }), Type.Object({ y: Type.String() })]) }))).toThrow(/\$\.a is a union of 2 shapes/);
    expect(() => viewerSchema(Type.Object({ a: Type.Array(Type.Array(Type.Number())) }))).toThrow(/array of arrays/);
    expect(() => viewerSchema({ type: "object", properties: { a: { type: "object", additionalProperties: true } } })).toThrow(/without properties/);
    expect(() => viewerSchema(Type.Object({ a: Type.Union([Type.Literal("x"), Type.Literal(1)]) }))).toThrow(/mixed types/);
  });

  it("viewerJson leaves out nulls and arrays holding one; the message then validates against the rewritten schema, the rest unchanged", () => {
    const { schema, dropsNulls } = viewerSchema(TNY360_STATE_RECORD_SCHEMA);
    const check = Compile(schema as never);
    const msg = tnyMessage();
    const out = JSON.parse(viewerJson(msg, dropsNulls)) as Json;
    expect(check.Check(out)).toBe(true);
    expect(out).not.toHaveProperty("joint_temperatures"); // all null: no sensor
    expect(out.joint_efforts).toEqual(msg.joint_efforts);
    expect((out.locomotion as Json).height).toBeUndefined();
    expect({ ...out, joint_temperatures: (msg.joint_temperatures as unknown[]).map(() => null), locomotion: { ...(out.locomotion as Json), height: null } }).toEqual(msg);
    // The API's own form does not validate against it (nulls where the viewers read numbers).
    expect(check.Check(msg)).toBe(false);
  });
});

/** Every property path of a schema (objects and array items), without the keywords. */
function paths(s: Json, at = "$"): string[] {
  const out: string[] = [];
  const node = (n: Json, p: string): void => {
    const branch = (n.anyOf ?? n.oneOf) as Json[] | undefined;
    if (branch) {
      for (const b of branch) node(b, p);
      return;
    }
    if (n.properties)
      for (const [k, v] of Object.entries(n.properties as Record<string, Json>)) {
        out.push(`${p}.${k}`);
        node(v, `${p}.${k}`);
      }
    if (n.items) node(n.items as Json, `${p}[]`);
  };
  node(s, at);
  return [...new Set(out)].sort();
}

/** A TNY-360 state message as the API builds it in simulation (temperatures null: no sensor). */
function tnyMessage(): Json {
  const schema = TNY360_STATE_RECORD_SCHEMA as unknown as Json;
  const sample = (s: Json): unknown => {
    const u = (s.anyOf ?? s.oneOf) as Json[] | undefined;
    if (u) return u[0]!.type === "null" ? null : sample(u[0]!);
    if (s.const !== undefined) return s.const;
    switch (s.type) {
      case "object":
        return Object.fromEntries(Object.entries(s.properties as Record<string, Json>).map(([k, v]) => [k, sample(v)]));
      case "array":
        return Array.from({ length: (s.minItems as number | undefined) ?? 2 }, () => sample(s.items as Json));
      case "string":
        return (s.enum as string[] | undefined)?.[0] ?? "x";
      case "boolean":
        return true;
      case "integer":
        return 1;
      case "number":
        return 0.5;
      case "null":
        return null;
      default:
        throw new Error(`no sample for ${JSON.stringify(s)}`);
    }
  };
  const msg = sample(schema) as Json;
  msg.joint_temperatures = (msg.joint_temperatures as unknown[]).map(() => null);
  (msg.locomotion as Json).height = null;
  return msg;
}
