/**
 * The world in the viewers, end to end (issue 22 item 3): `serve --sim physics` with a recording
 * and the live Foxglove server. Live and in the file, /nao/tf is one tree rooted at `world` (the
 * torso where the simulator has it, near the floor: it starts crouched), /nao/scene carries the
 * ground and the floor contacts (the feet of the crouched robot); the kinematic NAO's tree is
 * rooted at its torso, with no world, ground or contacts. The physics TNY-360's /tny360/tf is
 * rooted at `world` the same way, its paws' contacts in /tny360/scene.
 */
import { join } from "node:path";
import foxglove from "@foxglove/ws-protocol";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { until } from "../lola/client.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { messagesByTopic, tmpDir } from "./helpers.js";

const { FoxgloveClient } = foxglove;
useRuntimeDir("bl-world-");
const cleanups: Array<() => Promise<void>> = [];
// A physics runtime at a load average of ~17 (CI beside the other files) took over 20 s to start
// and stop: these tests and their cleanup get their own bound.
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

interface Tf {
  parent_frame_id: string;
  child_frame_id: string;
  translation: { x: number; y: number; z: number };
}
interface Scene {
  entities: Array<{ id: string; frame_id: string; spheres: unknown[]; cubes: unknown[] }>;
}

/** The root of a transforms message's tree (the one parent that is nobody's child); throws unless one. */
function rootOf(transforms: Tf[]): string {
  const children = new Set(transforms.map((t) => t.child_frame_id));
  const roots = new Set(transforms.map((t) => t.parent_frame_id).filter((p) => !children.has(p)));
  expect([...roots]).toHaveLength(1);
  return [...roots][0]!;
}

async function serve(sim: "physics" | "kinematic", file: string, body: "nao" | "tny360" = "nao"): Promise<RunningRuntime> {
  const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body, seed: 3, sim, record: file, foxglove: 0, gcEveryMs: 0 });
  cleanups.push(() => rt.close());
  return rt;
}

/** The first message on `topic` that `accept` takes, from the runtime's live Foxglove server. */
async function live<T>(rt: RunningRuntime, topic: string, accept: (m: T) => boolean): Promise<T> {
  const url = /Foxglove: (ws:\/\/\S+)/.exec(rt.lines.join("\n"))![1]!;
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws: ws as unknown as ConstructorParameters<typeof FoxgloveClient>[0]["ws"] });
  try {
    const channels: Array<{ id: number; topic: string }> = [];
    client.on("advertise", (cs) => channels.push(...cs));
    await until(() => channels.some((c) => c.topic === topic), `${topic} advertised`);
    let got: T | null = null;
    const sub = client.subscribe(channels.find((c) => c.topic === topic)!.id);
    client.on("message", (m) => {
      if (m.subscriptionId !== sub || got) return;
      const v = JSON.parse(new TextDecoder().decode(m.data)) as T;
      if (accept(v)) got = v;
    });
    await until(() => got !== null, `a message on ${topic}`, 20_000);
    return got!;
  } finally {
    client.close();
  }
}

describe("the world in /nao/tf and /nao/scene", () => {
  it("physics: rooted at world, live and recorded; the scene has the ground and the contacts", async () => {
    const file = join(tmpDir(), "world.mcap");
    const rt = await serve("physics", file);
    const tf = await live<{ transforms: Tf[] }>(rt, "/nao/tf", () => true);
    expect(rootOf(tf.transforms)).toBe("world");
    const base = tf.transforms.find((t) => t.parent_frame_id === "world")!;
    expect(base.child_frame_id).toBe("nao/Torso");
    expect(base.translation.z).toBeGreaterThan(0.1);
    expect(base.translation.z).toBeLessThan(0.3); // crouched
    const contacts = await live<Scene>(rt, "/nao/scene", (m) => m.entities.some((e) => e.id === "world/contacts"));
    expect(contacts.entities[0]!.frame_id).toBe("world");
    expect(contacts.entities[0]!.spheres.length).toBeGreaterThanOrEqual(2); // both feet on the floor
    await new Promise((r) => setTimeout(r, 1200)); // past the first second: the scene again
    await rt.close();

    const byTopic = await messagesByTopic(file);
    const tfs = (byTopic.get("/nao/tf") ?? []).map((b) => JSON.parse(b.toString()) as { transforms: Tf[] });
    expect(tfs.length).toBeGreaterThan(5);
    for (const m of tfs) expect(rootOf(m.transforms)).toBe("world");
    const scenes = (byTopic.get("/nao/scene") ?? []).map((b) => JSON.parse(b.toString()) as Scene);
    const ids = new Set(scenes.flatMap((s) => s.entities.map((e) => e.id)));
    expect(ids.has("world/ground")).toBe(true);
    expect(ids.has("world/contacts")).toBe(true);
    const states = (byTopic.get("/nao/state") ?? []).map((b) => JSON.parse(b.toString()) as { sim?: { base_position_m: number[]; contacts: unknown[] } });
    expect(states.at(-1)!.sim!.base_position_m).toHaveLength(3);
  }, 90_000);

  it("kinematic: rooted at the torso, no ground, no contacts", async () => {
    const file = join(tmpDir(), "kin.mcap");
    const rt = await serve("kinematic", file);
    const tf = await live<{ transforms: Tf[] }>(rt, "/nao/tf", () => true);
    expect(rootOf(tf.transforms)).toBe("nao/Torso");
    await new Promise((r) => setTimeout(r, 300));
    await rt.close();
    const byTopic = await messagesByTopic(file);
    for (const b of byTopic.get("/nao/tf") ?? []) expect(rootOf((JSON.parse(b.toString()) as { transforms: Tf[] }).transforms)).toBe("nao/Torso");
    const ids = new Set((byTopic.get("/nao/scene") ?? []).flatMap((b) => (JSON.parse(b.toString()) as Scene).entities.map((e) => e.id)));
    expect(ids.has("world/ground") || ids.has("world/contacts")).toBe(false);
    expect((JSON.parse(byTopic.get("/nao/state")!.at(-1)!.toString()) as { sim?: unknown }).sim).toBeUndefined();
  });
});

describe("the world in /tny360/tf and /tny360/scene", () => {
  it("physics: rooted at world, the body resting low on its four paws, live and recorded", async () => {
    const file = join(tmpDir(), "tny.mcap");
    const rt = await serve("physics", file, "tny360");
    const tf = await live<{ transforms: Tf[] }>(rt, "/tny360/tf", () => true);
    expect(rootOf(tf.transforms)).toBe("world");
    const base = tf.transforms.find((t) => t.parent_frame_id === "world")!;
    expect(base.child_frame_id).toBe("tny360/body");
    expect(base.translation.z).toBeGreaterThan(0.02);
    expect(base.translation.z).toBeLessThan(0.07); // limp, resting on its folded legs
    const contacts = await live<Scene>(rt, "/tny360/scene", (m) => m.entities.some((e) => e.id === "world/contacts"));
    expect(contacts.entities[0]!.frame_id).toBe("world");
    expect(contacts.entities[0]!.spheres.length).toBeGreaterThanOrEqual(4); // the four paws on the floor
    await rt.close();
    const byTopic = await messagesByTopic(file);
    const tfs = (byTopic.get("/tny360/tf") ?? []).map((b) => JSON.parse(b.toString()) as { transforms: Tf[] });
    expect(tfs.length).toBeGreaterThan(3);
    for (const m of tfs) expect(rootOf(m.transforms)).toBe("world");
    const ids = new Set((byTopic.get("/tny360/scene") ?? []).flatMap((b) => (JSON.parse(b.toString()) as Scene).entities.map((e) => e.id)));
    expect(ids.has("world/ground")).toBe(true);
    const states = (byTopic.get("/tny360/state") ?? []).map((b) => JSON.parse(b.toString()) as { sim?: { base_position_m: number[]; contacts: Array<{ link: string }> } });
    expect(states.at(-1)!.sim!.contacts.map((c) => c.link)).toContain("FrontLeftPaw");
  }, 90_000);
});
