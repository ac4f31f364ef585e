/**
 * The SDK's wire types (src/client/messages.ts, hand-written so the client stays browser-safe and
 * free of TypeBox) agree with the server's TypeBox schemas: each `agree<…>(true)` below compiles
 * only when the interface and `Static<typeof Schema>` are the same type (up to readonly), so
 * `npm run lint` (tsc over test/) fails on any drift. At run time: every type messages.ts exports
 * is checked here, and the equality check itself rejects the differences it must catch.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { Static } from "typebox";
import { describe, expect, it } from "vitest";
import type {
  AppliedAnswer,
  BodyKind,
  ControlHolder,
  ControlStatusAnswer,
  ErrorAnswer,
  EstopAnswer,
  EstopResetAnswer,
  EstopStateAnswer,
  EstopStopAnswer,
  FleetStatusAnswer,
  HealthAnswer,
  HelloMessage,
  InfoAnswer,
  LeaseAnswer,
  LinkStatus,
  NaoFields,
  NaoStateMessage,
  P7Fields,
  P7StateMessage,
  SafetyCode,
  StateEnvelope,
  StateMessage,
  Tny360Fields,
  Tny360StateMessage,
  SimWorld,
} from "../../src/client/messages.js";
import type { AppliedResultSchema, NaoRestFieldsSchema, NaoStreamFieldsSchema } from "../../src/serve/api/bodies/nao.js";
import type { P7FieldsSchema } from "../../src/serve/api/bodies/p7.js";
import type { SimWorldSchema } from "../../src/serve/api/bodies/sim-world.js";
import { TnyFieldsSchema } from "../../src/serve/api/bodies/tny360.js";
import { GAIT_NAMES, type GaitName } from "../../src/wire/tny/constants.js";
import type {
  BodySchema,
  ControlStatusSchema,
  ErrorSchema,
  EstopAnswerSchema,
  EstopLatchSchema,
  EstopResetAnswerSchema,
  EstopStateSchema,
  envelopeProperties,
  FleetStatusSchema,
  HealthSchema,
  HelloSchema,
  HolderSchema,
  InfoSchema,
  LeaseSchema,
  LinkSchema,
  SafetyCodeSchema,
} from "../../src/serve/api/schemas.js";
import { agree } from "../support/same-type.js";

type Envelope = { [K in keyof typeof envelopeProperties]: Static<(typeof envelopeProperties)[K]> };
type StateOf<B extends BodyKind, Fields> = Omit<Envelope, "body"> & { body: B } & Fields;

/** Each messages.ts export and the check that covers it (a type alias that composes checked types counts). */
const CHECKED = {
  BodyKind: agree<BodyKind, Static<typeof BodySchema>>(true),
  LinkStatus: agree<LinkStatus, Static<typeof LinkSchema>>(true),
  SafetyCode: agree<SafetyCode, Static<typeof SafetyCodeSchema>>(true),
  HelloMessage: agree<HelloMessage, Static<typeof HelloSchema>>(true),
  StateEnvelope: agree<StateEnvelope, Envelope>(true),
  NaoFields: agree<NaoFields, Static<typeof NaoStreamFieldsSchema>>(true) && agree<NaoFields, Static<typeof NaoRestFieldsSchema>>(true),
  P7Fields: agree<P7Fields, Static<typeof P7FieldsSchema>>(true),
  SimWorld: agree<SimWorld, Static<typeof SimWorldSchema>>(true),
  Tny360Fields: agree<Tny360Fields, Static<typeof TnyFieldsSchema>>(true),
  NaoStateMessage: agree<NaoStateMessage, StateOf<"nao", Static<typeof NaoStreamFieldsSchema>>>(true),
  P7StateMessage: agree<P7StateMessage, StateOf<"p7", Static<typeof P7FieldsSchema>>>(true),
  Tny360StateMessage: agree<Tny360StateMessage, StateOf<"tny360", Static<typeof TnyFieldsSchema>>>(true),
  StateMessage: agree<StateMessage, StateOf<"nao", Static<typeof NaoStreamFieldsSchema>> | StateOf<"p7", Static<typeof P7FieldsSchema>> | StateOf<"tny360", Static<typeof TnyFieldsSchema>>>(true),
  ControlHolder: agree<ControlHolder, Static<typeof HolderSchema>>(true),
  LeaseAnswer: agree<LeaseAnswer, Static<typeof LeaseSchema>>(true),
  ErrorAnswer: agree<ErrorAnswer, Static<typeof ErrorSchema>>(true),
  InfoAnswer: agree<InfoAnswer, Static<typeof InfoSchema>>(true),
  HealthAnswer: agree<HealthAnswer, Static<typeof HealthSchema>>(true),
  FleetStatusAnswer: agree<FleetStatusAnswer, Static<typeof FleetStatusSchema>>(true),
  EstopAnswer: agree<EstopAnswer, Static<typeof EstopLatchSchema>>(true),
  EstopStateAnswer: agree<EstopStateAnswer, Static<typeof EstopStateSchema>>(true),
  EstopStopAnswer: agree<EstopStopAnswer, Static<typeof EstopAnswerSchema>>(true),
  EstopResetAnswer: agree<EstopResetAnswer, Static<typeof EstopResetAnswerSchema>>(true),
  ControlStatusAnswer: agree<ControlStatusAnswer, Static<typeof ControlStatusSchema>>(true),
  AppliedAnswer: agree<AppliedAnswer, Static<typeof AppliedResultSchema>>(true),
} as const;

type GaitSchema = (typeof TnyFieldsSchema)["properties"]["locomotion"]["properties"]["gait"];
const gaitAgrees = agree<GaitName, Static<GaitSchema>>(true);

describe("the SDK's message types and the server's schemas", () => {
  it("every type src/client/messages.ts exports is checked against its schema", () => {
    const source = readFileSync("src/client/messages.ts", "utf8");
    const exported = [...[...source.matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!), ...[...source.matchAll(/^export type \{ (\w+) \}/gm)].map((m) => m[1]!)].sort();
    expect(exported.length).toBeGreaterThan(15);
    expect(Object.keys(CHECKED).sort()).toEqual(exported);
    expect(Object.values(CHECKED).every((v) => v === true)).toBe(true);
  });

  it("the TNY-360 gait schema lists GAIT_NAMES, in order (its literals are written out for Static<>)", () => {
    expect(gaitAgrees).toBe(true);
    const gait: GaitSchema = TnyFieldsSchema.properties.locomotion.properties.gait;
    expect(gait.anyOf.map((l) => l.const)).toEqual(GAIT_NAMES);
  });

  it("the equality check rejects what it must: a missing field, an extra optional one, optional made required, a wider literal, a deep change", () => {
    // The same helper compiled against deliberate mismatches; each `agree(true)` of a mismatch must be an error.
    const fixture = `
      import { agree } from "./same-type.js";
      interface Mine { readonly a: number; readonly b?: string; readonly c: "x" | "y"; readonly d: readonly { readonly e: number | null }[] }
      type Theirs = { a: number; b?: string; c: "x" | "y"; d: { e: number | null }[] };
      export const same = agree<Mine, Theirs>(true);
      export const missing = agree<Mine, Omit<Theirs, "a">>(true);
      export const extraOptional = agree<Mine, Theirs & { f?: number }>(true);
      export const required = agree<Mine, Omit<Theirs, "b"> & { b: string }>(true);
      export const wider = agree<Mine, Omit<Theirs, "c"> & { c: string }>(true);
      export const deep = agree<Mine, Omit<Theirs, "d"> & { d: { e: number }[] }>(true);
      export const ok = agree<Mine, Omit<Theirs, "d"> & { d: { e: number }[] }>(false);
    `;
    // Never written: served to the compiler beside the helper it imports.
    const name = join(process.cwd(), "test/support/same-type.fixture.ts");
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    const exists = host.fileExists.bind(host);
    host.readFile = (f) => (f === name ? fixture : read(f));
    host.fileExists = (f) => f === name || exists(f);
    const getSource = host.getSourceFile.bind(host);
    host.getSourceFile = (f, lang, ...rest) => (f === name ? ts.createSourceFile(f, fixture, lang) : getSource(f, lang, ...rest));
    host.getCurrentDirectory = () => process.cwd();
    const program = ts.createProgram([name], options, host);
    const lines = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName === name)
      .map((d) => fixture.slice(0, d.start).split("\n").length);
    const lineOf = (id: string) => fixture.split("\n").findIndex((l) => l.includes(`const ${id} `)) + 1;
    expect(lines.sort((x, y) => x - y)).toEqual(["missing", "extraOptional", "required", "wider", "deep"].map(lineOf));
  });
});
