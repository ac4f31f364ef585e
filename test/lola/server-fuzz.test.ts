/**
 * fast-check through the whole server path on the real socket: whatever a client sends, nothing
 * throws into the runtime, the runtime keeps cycling with sane values, and the server keeps serving.
 */
import fc from "fast-check";
import { pack } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { type LolaServer, startLolaServer } from "../../src/serve/lola/server.js";
import { LOLA_COMMAND_KEYS } from "../../src/wire/lola/constants.js";
import { TestLolaClient, tmpSocketPath, until } from "./client.js";

let clock: SimClock;
let robot: NaoRobot;
let server: LolaServer;
const logs: string[] = [];

beforeAll(async () => {
  clock = new SimClock();
  robot = await NaoRobot.create({ clock });
  await robot.configure();
  server = await startLolaServer(robot, { path: tmpSocketPath(), log: (_l, m) => logs.push(m) });
});
afterAll(async () => {
  await server.close();
});

/** Connect, take the first message, send `chunks`, hang up; resolves once the server has let go. */
async function session(chunks: Uint8Array[]): Promise<void> {
  const c = await TestLolaClient.connect(server.path);
  await c.frame();
  for (const b of chunks) {
    if (c.ended) break;
    await c.send(b).catch(() => {}); // the server may already have dropped us
  }
  await c.close();
  await until(() => server.clients().length === 0, "the server to release the client");
}

/** The runtime still cycles, its commanded values are sane, and a new client is served. */
async function assertHealthy(): Promise<void> {
  await clock.advance(12);
  robot.loop.step();
  for (const v of robot.state.stiffness) expect(v >= 0 && v <= 1).toBe(true);
  for (const v of robot.state.position) expect(Number.isFinite(v)).toBe(true);
  expect(robot.authority.holder()).toBeNull(); // every session ended with a disconnect
}

describe("LoLA server under arbitrary input", () => {
  it("arbitrary bytes in arbitrary writes never throw out of the server path", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ minLength: 1, maxLength: 200 }), { minLength: 1, maxLength: 4 }), async (chunks) => {
        await session(chunks);
        await assertHealthy();
      }),
      { numRuns: 60, endOnFailure: true },
    );
    const c = await TestLolaClient.connect(server.path);
    expect((await c.frame()).length).toBe(896);
    await c.close();
  });

  it("arbitrary MessagePack maps with LoLA keys and wrong values are rejected per key, never crash", async () => {
    const key = fc.oneof(fc.constantFrom(...LOLA_COMMAND_KEYS.map((k) => k.key)), fc.string({ maxLength: 12 }));
    const numberish = fc.oneof(fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 3 }));
    const value = fc.oneof(
      fc.integer({ min: 0, max: 30 }).chain((n) => fc.array(fc.double(), { minLength: n, maxLength: n })),
      fc.constantFrom(2, 3, 10, 12, 24, 25).chain((n) => fc.array(numberish, { minLength: n, maxLength: n })),
      fc.constantFrom(2, 3, 10, 12, 24, 25).chain((n) => fc.array(fc.double({ noNaN: true, min: -10, max: 10 }), { minLength: n, maxLength: n })),
      fc.jsonValue(),
    );
    const message = fc.dictionary(key, value, { maxKeys: 12 }).map((o) => pack(new Map(Object.entries(o))));
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (msgs) => {
        await session(msgs);
        await assertHealthy();
      }),
      { numRuns: 60, endOnFailure: true },
    );
    expect(logs.some((l) => /expected \d+ values, got \d+/.test(l))).toBe(true);
  });
});
