/**
 * Leases are charged against cycles the runtime actually ran (issue 9, item 4): a runtime paused
 * by SIGSTOP for 300 ms (longer than the LoLA grace) sends its LoLA client no frame meanwhile, so a
 * client that answers every frame keeps control (with wall-clock leases it lost it every time). Asserted on the runtime's own words (its log
 * and /v1/health), never on timing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../lola/client.js";
import { type ServeRig, StiffController, startServe } from "./serve-rig.js";

describe("a paused runtime never expires a healthy LoLA client", () => {
  let rig: ServeRig;
  let lola: StiffController;
  beforeAll(async () => {
    // A grace of 250 ms (the pause is longer): on a loaded 2-core machine the test's own client may
    // be descheduled for more than the default 100 ms, which would expire it for a good reason.
    rig = await startServe(["--lola-grace-ms", "250"]);
    lola = await StiffController.connect(rig.lolaPath);
  }, 60_000);
  afterAll(async () => {
    await lola?.close();
    await rig?.close();
  });

  it("SIGSTOP for 300 ms: control does not expire, the same client holds it afterwards", async () => {
    await until(() => lola.reached, "stiffness 1.0", 20_000);
    const before = (await (await fetch(`${rig.apiUrl}/v1/health`)).json()) as { control: { owner: string } | null };
    expect(before.control?.owner).toBe("lola:client#1");
    const expiries = () => rig.stderr().match(/its control expired/g)?.length ?? 0;
    const before0 = expiries();
    for (let i = 0; i < 2; i++) {
      rig.child.kill("SIGSTOP");
      await new Promise((r) => setTimeout(r, 300));
      rig.child.kill("SIGCONT");
      const frames = lola.frames;
      await until(() => lola.frames > frames + 40, "frames after the pause", 20_000);
    }
    const after = (await (await fetch(`${rig.apiUrl}/v1/health`)).json()) as { control: { owner: string } | null };
    expect(after.control?.owner).toBe("lola:client#1");
    expect(expiries(), rig.stderr()).toBe(before0);
  }, 60_000);
});
