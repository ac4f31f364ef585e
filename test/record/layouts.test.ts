/**
 * The Foxglove/Lichtblick layouts shipped in docs/layouts/<body>.json: every panel the layout tree
 * names is configured (and every configured one placed), the 3D panel follows the body's root frame
 * and shows its scene topic, and every message path of every panel resolves in the body's
 * recorded channels and their (viewer-form) schemas: the topic exists for that body, each field
 * exists, an index is within the array's length, a plotted value is a number or boolean.
 */
import { readFileSync } from "node:fs";
import Type from "typebox";
import { describe, expect, it } from "vitest";
import { BODY_KINDS, type BodyKind } from "../../src/bodies/registry.js";
import { P7_STATE_RECORD_SCHEMA, TNY360_STATE_RECORD_SCHEMA } from "../../src/record/body-state-record.js";
import { CHANNELS, EVENT_SCHEMA, VIEWER_3D_CHANNELS, channelBody } from "../../src/record/channels.js";
import { NAO_STATE_SCHEMA } from "../../src/record/nao-state-record.js";
import { Viewer3d } from "../../src/record/viewer-3d.js";
import { viewerSchema } from "../../src/record/viewer-schema.js";
import { envelopeProperties } from "../../src/serve/api/schemas.js";

type Json = Record<string, unknown>;

/** The schema behind each topic a layout may use (the API state: its envelope, which every body's has). */
const SCHEMAS: Record<string, object> = {
  "/nao/state": NAO_STATE_SCHEMA,
  "/p7/state": P7_STATE_RECORD_SCHEMA,
  "/tny360/state": TNY360_STATE_RECORD_SCHEMA,
  "/events": EVENT_SCHEMA,
  "/api/state": Type.Object(envelopeProperties),
};

function panels(node: unknown): string[] {
  if (typeof node === "string") return [node];
  const n = node as { first: unknown; second: unknown };
  return [...panels(n.first), ...panels(n.second)];
}

/** Resolve a message path (`/topic{field=="v"}.a.b[3]`) in a schema; returns the leaf's type or throws. */
function resolve(path: string, body: BodyKind): string {
  const m = /^(\/[\w/]+)(\{(\w+)==("[^"]*"|\d+)\})?((?:\.\w+|\[\d+\])*)$/.exec(path);
  if (!m) throw new Error(`${path}: not a message path this test reads`);
  const [, topic, , filterField, , rest] = m;
  const ch = CHANNELS.find((c) => c.topic === topic);
  if (!ch) throw new Error(`${path}: no channel ${topic}`);
  const owner = channelBody(topic!);
  if (owner !== null && owner !== body) throw new Error(`${path}: ${topic} is the ${owner}'s, not the ${body}'s`);
  const schema = SCHEMAS[topic!];
  if (!schema) throw new Error(`${path}: no schema known for ${topic}`);
  let node = viewerSchema(schema).schema;
  if (filterField && !(node.properties as Json)[filterField]) throw new Error(`${path}: no field ${filterField} to filter on`);
  for (const step of rest!.match(/\.\w+|\[\d+\]/g) ?? []) {
    if (step.startsWith(".")) {
      const next = (node.properties as Record<string, Json> | undefined)?.[step.slice(1)];
      if (!next) throw new Error(`${path}: no field ${step.slice(1)}`);
      node = next;
    } else {
      if (node.type !== "array") throw new Error(`${path}: ${step} on a ${String(node.type)}`);
      const i = Number(step.slice(1, -1));
      if (typeof node.maxItems === "number" && i >= node.maxItems) throw new Error(`${path}: index ${i} past ${node.maxItems} items`);
      node = node.items as Json;
    }
  }
  return String(node.type);
}

describe.each(BODY_KINDS)("docs/layouts/%s.json", (body) => {
  const layout = JSON.parse(readFileSync(new URL(`../../docs/layouts/${body}.json`, import.meta.url), "utf8")) as { configById: Record<string, Json>; layout: unknown };

  it("places every configured panel and configures every placed one", () => {
    expect(panels(layout.layout).sort()).toEqual(Object.keys(layout.configById).sort());
  });

  it("the 3D panel follows the body's root frame and shows its scene", () => {
    const three = Object.entries(layout.configById).find(([id]) => id.startsWith("3D!"))![1];
    expect(three.followTf).toBe(new Viewer3d(body).body.frames[0]);
    const sceneTopic = CHANNELS.find((c) => c.ring === VIEWER_3D_CHANNELS[body].scene)!.topic;
    expect(Object.keys(three.topics as Json)).toEqual([sceneTopic]);
  });

  it("every message path resolves in the body's channels and schemas; plots plot numbers or booleans", () => {
    let n = 0;
    for (const [id, config] of Object.entries(layout.configById)) {
      const paths = [...((config.paths as Array<{ value: string }> | undefined) ?? []).map((p) => p.value), ...(typeof config.topicPath === "string" ? [config.topicPath] : [])];
      for (const p of paths) {
        const type = resolve(p, body);
        if (id.startsWith("Plot!")) expect(["number", "integer", "boolean"], p).toContain(type);
        n++;
      }
    }
    expect(n).toBeGreaterThan(15);
  });

  it("a path that does not resolve is caught (the check can fail)", () => {
    expect(() => resolve(`/${body}/state.no_such_field[0]`, body)).toThrow(/no (field|channel)|no schema/);
    expect(() => resolve("/p7/state.joint_positions[7]", "p7")).toThrow(/index 7 past 7 items/);
    expect(() => resolve("/p7/state.joint_positions[0]", "nao")).toThrow(/the p7's, not the nao's/);
  });
});

describe("channelBody: a channel's body from its topic (BODY_TOPIC_PREFIXES, one entry per registry body)", () => {
  it("names the body of every body's channel, and none for the shared ones", () => {
    for (const c of CHANNELS) {
      const first = c.topic.split("/")[1]!;
      const expected = first === "lola" ? "nao" : (BODY_KINDS as readonly string[]).includes(first) ? first : null;
      expect(channelBody(c.topic), c.topic).toBe(expected);
    }
    expect(CHANNELS.filter((c) => channelBody(c.topic) === null).length).toBeGreaterThan(0); // /events, /log …
    for (const kind of BODY_KINDS)
      expect(
        CHANNELS.some((c) => channelBody(c.topic) === kind),
        kind,
      ).toBe(true);
    expect(channelBody("/nao")).toBeNull(); // a prefix is a whole segment
  });
});
