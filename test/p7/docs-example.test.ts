/** The runnable example in docs/p7.md ("The runtime object") runs as written. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/runtime/clock.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";

describe("docs/p7.md example", () => {
  it("runs and reads a state", async () => {
    const doc = readFileSync(new URL("../../docs/p7.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## The runtime object"));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    // The imports are the two classes this test passes in; the rest is plain JavaScript.
    const body = block!.replace(/^import .*$/gm, "");
    expect(body).not.toMatch(/\bimport\b/);
    const errors: unknown[] = [];
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;
    const run = new AsyncFunction("P7Robot", "SimClock", "console", `${body}\nreturn { robot, s };`);
    const out = (await run(P7Robot, SimClock, { error: (...a: unknown[]) => errors.push(a) })) as { robot: P7Robot; s: unknown };
    expect(errors).toEqual([]);
    expect(out.s).not.toBeNull();
    expect(out.robot.health().control?.owner).toBe("api:me");
  });
});
