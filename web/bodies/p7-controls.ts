/**
 * The AIRBOT P7's teleoperation controls: joint sliders within the limits, a speed limit, Move,
 * Clear errors. The sliders start at the measured pose on taking control.
 */
import { P7_DEFAULT_SPEED_RAD_S, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD } from "../../src/bodies/p7/joints.js";
import type { BodyClient } from "../../src/client/index.js";
import { button, type Slider, showValue, slider, type TeleopKit } from "../controls.js";
import { fmt, make, setText } from "../util.js";
import type { BodyControls } from "./common.js";

export function p7Controls(kit: TeleopKit, c: BodyClient<"p7">): BodyControls<"p7"> {
  const p7 = c.p7;
  const g = kit.group("Joints (move together under the speed limit)");
  const sliders: Slider[] = [];
  for (let i = 0; i < P7_MIN_RAD.length; i++) {
    const s = slider(g, `joint${i + 1}`, P7_MIN_RAD[i]!, P7_MAX_RAD[i]!, 0.01, 0, "rad", `p7-joint-${i + 1}`);
    s.input.addEventListener("input", () => {
      const t = kit.targets();
      if (t) t[i] = Number(s.input.value);
      kit.targetsChanged();
    });
    s.input.addEventListener("change", () => move());
    sliders.push(s);
  }
  const maxSpeed = Math.min(...P7_MAX_SPEED_RAD_S);
  const speed = slider(g, "Speed limit", 0.05, maxSpeed, 0.05, P7_DEFAULT_SPEED_RAD_S, "rad/s", "p7-speed");
  const row = make("div", "btn-row");
  g.append(row);
  const move = () => {
    const t = kit.targets();
    if (!t) return;
    void kit.send("move", async () => {
      const r = await p7.moveJoints(Array.from(t), { speedRadS: Number(speed.input.value) });
      kit.log("command", `move: arrives in about ${fmt(r.etaS, 1)} s`);
    });
  };
  button(row, "Move to the sliders", move).id = "p7-move";
  button(row, "Clear errors", () =>
    void kit.send("clear error", async () => {
      const r = await p7.clearError();
      kit.log("command", r.clearedJoints.length ? `cleared errors on joints ${r.clearedJoints.map((j) => j + 1).join(", ")}` : "clear error: no joint had an error");
    }),
  ).id = "p7-clear-error";
  return {
    onState: () => {},
    // Not held: thumbs and labels both show the measured pose.
    onIdle: () => {
      const a = c.getJointState()?.angles;
      if (a) for (let i = 0; i < sliders.length; i++) showValue(sliders[i]!, a[i]!, "rad");
    },
    onHeld: () => {
      const a = c.getJointState()?.angles;
      const t = Float64Array.from(a ?? new Array<number>(P7_MIN_RAD.length).fill(0));
      kit.setTargets(t);
      sliders.forEach((s, i) => {
        s.input.value = String(t[i]);
        setText(s.value, `${fmt(t[i], 2)} rad`);
      });
      kit.targetsChanged();
    },
  };
}
