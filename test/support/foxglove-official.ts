/**
 * Foxglove's own JSON Schemas for its well-known messages (npm `@foxglove/schemas` 2.1.0, generated
 * by foxglove-sdk: the definitions Foxglove's 3D and Log panels are written against), compiled with
 * ajv. bodylink advertises its own single-typed copies (src/record/foxglove-schemas.ts, for
 * Lichtblick's parser); this checks that the *messages* are what Foxglove defines: every required
 * field present, each with Foxglove's type, enums within Foxglove's constants.
 */
import official from "@foxglove/schemas/jsonschema.js";
import { Ajv, type ValidateFunction } from "ajv";

const ajv = new Ajv({ strict: false, allErrors: true });
const bySchemaName = new Map<string, ValidateFunction>();
for (const schema of Object.values(official) as Array<{ title?: string }>) {
  if (typeof schema?.title === "string" && schema.title.startsWith("foxglove.")) bySchemaName.set(schema.title, ajv.compile(schema));
}

/** The names bodylink must find here (the schemas it publishes). */
export const OFFICIAL_SCHEMA_NAMES = [...bySchemaName.keys()];

/** Problems of `message` under Foxglove's schema `name` (empty: valid); throws for a name Foxglove does not define. */
export function officialProblems(name: string, message: unknown): string[] {
  const validate = bySchemaName.get(name);
  if (!validate) throw new Error(`${name} is not one of Foxglove's well-known schemas`);
  if (validate(message)) return [];
  return (validate.errors ?? []).map((e) => `${name}${e.instancePath || "/"} ${e.message ?? "invalid"} ${JSON.stringify(e.params)}`);
}
