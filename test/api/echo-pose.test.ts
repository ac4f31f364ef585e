/**
 * Issue 14 item 7: echoing the robot's own pose back is not "clamping". A measured angle that
 * reads a hair past a limit (LElbowRoll reads −0.03489806 against the −0.0349 limit: the
 * simulated encoder's rounding) is at the limit, so the answer lists nothing clamped; a real
 * excursion still is.
 */
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/runtime/clock.js";
import { appWithRoutes, LEASE, simNao, step } from "./helpers.js";

describe("NAO joints command: the robot's own pose", () => {
  it("echoed back from GET /v1/state, nothing is clamped; 0.01 rad past a limit is", async () => {
    const clock = new SimClock();
    const robot = await simNao(clock);
    const { app } = await appWithRoutes(robot);
    try {
      await step(robot, clock, 5);
      const state = (await app.inject({ url: "/v1/state" })).json() as { joint_positions: number[] };
      const names = ((await app.inject({ url: "/v1/info" })).json() as { joint_names: string[] }).joint_names;
      const elbow = names.indexOf("LElbowRoll");
      expect(state.joint_positions[elbow]).toBeGreaterThan(-0.0349); // the reading that used to count as clamped
      const lease = (await app.inject({ method: "POST", url: "/v1/control", payload: { owner: "echo" } })).json() as { lease_id: string };
      const post = (positions: number[]) => app.inject({ method: "POST", url: "/v1/commands/joints", headers: { [LEASE]: lease.lease_id }, payload: { positions } });
      const echo = await post(state.joint_positions);
      expect(echo.statusCode, echo.body).toBe(200);
      expect((echo.json() as { result: { clamped: unknown[] } }).result.clamped).toEqual([]);
      const past = [...state.joint_positions];
      past[elbow] = -0.0249;
      const r = (await post(past)).json() as { result: { clamped: Array<{ joint: string; applied: number }> } };
      expect(r.result.clamped).toEqual([{ joint: "LElbowRoll", field: "positions", requested: -0.0249, applied: -0.0349 }]);
    } finally {
      await app.close();
    }
  });
});
