/**
 * Watchdog, the dying side (issue 9, item 6): when the real-time core dies (a test hook throws in
 * the worker), its last frame to the body is at stiffness 0 and `bodylink serve` exits non-zero
 * with one clear line. The LoLA controller held stiffness 1.0 until then.
 */
import { describe, expect, it } from "vitest";
import { until } from "../lola/client.js";
import { StiffController, startServe } from "./serve-rig.js";

describe("a real-time core that dies", () => {
  it("sends the body stiffness 0, and serve exits 1 with one line", async () => {
    const rig = await startServe([], { BODYLINK_TEST_HOOKS: "1", BODYLINK_TEST_CRASH_CORE_MS: "8000" });
    try {
      const lola = await StiffController.connect(rig.lolaPath);
      await until(() => lola.reached || rig.child.exitCode !== null, "stiffness 1.0", 20_000);
      const code = await new Promise<number | null>((resolve) => {
        if (rig.child.exitCode !== null) resolve(rig.child.exitCode);
        else rig.child.once("exit", (c) => resolve(c));
      });
      await lola.close();
      expect(code).toBe(1);
      const lines = rig.stderr().split("\n").filter((l) => l.startsWith("bodylink: "));
      expect(lines, rig.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(/^bodylink: BL_ERR_CORE_DIED: the real-time core died \(test hook: .*\); its last frame to the body was sent at stiffness 0$/);
    } finally {
      await rig.close();
    }
  }, 60_000);
});
