/**
 * The body registry (src/bodies/registry.ts) is the one list of bodies: every layer's per-body
 * table derives from it. These tests prove each derivation at run time (the tables are also typed
 * by the registry, so a missing entry fails to compile; see docs/architecture.md, Adding a body).
 */
import { afterAll, describe, expect, it } from "vitest";
import { BODIES, BODY_KINDS, type BodyKind, type BodyTable, bodyChoicesText, bodyTable, isBodyKind } from "../../src/bodies/registry.js";
import { Command } from "commander";
import { registerRecord } from "../../src/cli/record.js";
import { SHUTDOWN_ACTION, startRuntime } from "../../src/cli/serve.js";
import { registerServe } from "../../src/cli/serve-command.js";
import { FACETS } from "../../src/client/index.js";
import { ADAPTERS } from "../../src/serve/api/bodies/index.js";
import { buildApiServer } from "../../src/serve/api/build.js";
import { BodySchema } from "../../src/serve/api/schemas.js";
import { DASHBOARD_BODIES } from "../../web/bodies/index.js";
import { type AnyRobot, simNao, simP7, simTny } from "../api/helpers.js";

const RIGS: BodyTable<() => Promise<AnyRobot>> = { nao: simNao, p7: simP7, tny360: simTny };
const opened: AnyRobot[] = [];
afterAll(async () => {
  for (const r of opened) await r.shutdown();
});

describe("the registry", () => {
  it("lists each body once, in a stable order, with its words", () => {
    expect(BODY_KINDS).toEqual(Object.keys(BODIES));
    expect(new Set(BODY_KINDS).size).toBe(BODY_KINDS.length);
    for (const k of BODY_KINDS) {
      expect(isBodyKind(k)).toBe(true);
      expect(BODIES[k].title.length).toBeGreaterThan(0);
      expect(BODIES[k].safeStop.length).toBeGreaterThan(0);
    }
    for (const v of ["hexapod", "toString", "__proto__", "", 7, null]) expect(isBodyKind(v)).toBe(false);
    expect(bodyChoicesText()).toBe("nao, p7 or tny360");
  });
  it("bodyTable builds one frozen entry per body", () => {
    const t = bodyTable((k) => `${k}!`);
    expect(Object.keys(t)).toEqual(BODY_KINDS);
    expect(Object.isFrozen(t)).toBe(true);
  });
});

describe.each(BODY_KINDS)("%s derives from the registry in every layer", (kind: BodyKind) => {
  it("robot API: an adapter in the table, serving this body (GET /v1/info, OpenAPI body enum)", async () => {
    expect(Object.keys(ADAPTERS)).toEqual(BODY_KINDS);
    const robot = await RIGS[kind]();
    opened.push(robot);
    expect(robot.kind).toBe(kind);
    const app = buildApiServer(robot);
    try {
      await app.ready();
      const info = (await app.inject({ method: "GET", url: "/v1/info" })).json() as { body: string };
      expect(info.body).toBe(kind);
      const doc = (await app.inject({ method: "GET", url: "/openapi.json" })).json() as { info: { title: string } };
      expect(doc.info.title).toContain(kind);
      expect((BodySchema as unknown as { anyOf: Array<{ const: string }> }).anyOf.map((s) => s.const)).toContain(kind);
    } finally {
      await app.close();
    }
  });
  it("client SDK: a facet in the table, named after the body (test/api/sdk-facets.test.ts uses each)", () => {
    expect(Object.keys(FACETS)).toEqual(BODY_KINDS);
    expect(
      new FACETS[kind]({
        checkBody: () => {},
        current: () => null,
        newest: () => null,
        jointNames: () => [],
        leaseId: () => null,
        request: async () => null as never,
        command: async () => null as never,
      }).kind,
    ).toBe(kind);
  });
  it("dashboard: an entry with its words, limits for every joint the API names, its charts and panel", async () => {
    expect(Object.keys(DASHBOARD_BODIES)).toEqual(BODY_KINDS);
    const d = DASHBOARD_BODIES[kind];
    expect(d.name.length).toBeGreaterThan(0);
    const robot = await RIGS[kind]();
    opened.push(robot);
    const app = buildApiServer(robot);
    try {
      const info = (await app.inject({ method: "GET", url: "/v1/info" })).json() as { joint_names: string[] };
      const limits = d.limits(info.joint_names);
      expect(limits).toHaveLength(info.joint_names.length);
      for (const l of limits) if (l) expect(l.minRad).toBeLessThan(l.maxRad);
      expect(limits.filter((l) => l !== null).length).toBeGreaterThanOrEqual(info.joint_names.length - 2); // NAO hands are 0..1 openings, no rad limits
      expect(d.defaultPlotted.every((n) => info.joint_names.includes(n))).toBe(true);
      expect(typeof d.panel).toBe("function");
    } finally {
      await app.close();
    }
  });
  it("CLI: a --body choice of serve and record, and a shutdown line", () => {
    const program = new Command();
    registerServe(program);
    registerRecord(program);
    for (const name of ["serve", "record"]) {
      const cmd = program.commands.find((c) => c.name() === name);
      const opt = cmd?.options.find((o) => o.long === "--body");
      expect(opt?.description.split(" | ")).toEqual(BODY_KINDS);
    }
    expect(SHUTDOWN_ACTION[kind]).toBe(BODIES[kind].safeStop);
  });
});

it("serve refuses a body the registry does not have, naming the registry's choices", async () => {
  await expect(startRuntime({ body: "hexapod" } as Parameters<typeof startRuntime>[0])).rejects.toThrow(`unknown body "hexapod"; choose ${bodyChoicesText()}`);
});
