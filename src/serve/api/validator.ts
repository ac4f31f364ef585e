/**
 * The API's request validator: TypeBox's compiled checks, with query, params and headers converted
 * first (they arrive as strings) and bodies checked as sent. The same as
 * @fastify/type-provider-typebox's TypeBoxValidatorCompiler, which stays our type provider (types
 * only): importing its runtime also loads `typebox/format` and its dependencies, modules `serve`
 * would load on every start for nothing (bin/build.js bundles the TypeBox that serve does use).
 */
import type { FastifySchemaCompiler } from "fastify";
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { Value } from "typebox/value";

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value) => {
    const converted = httpPart === "body" ? value : Value.Convert(schema, value);
    return check.Check(converted) ? { value: converted } : { error: check.Errors(converted) };
  };
};
