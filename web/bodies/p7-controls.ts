/**
 * The AIRBOT P7's teleoperation controls: joint sliders within the limits, a speed limit, Move,
 * Clear errors. The sliders start at the measured pose on taking control. A slider let go (or
 * stepped with the keyboard) moves the arm there; where a move arrives is shown under the buttons,
 * not in the event list (a held arrow key steps a slider some 30 times a second).
 */
import { P7_DEFAULT_SPEED_RAD_S, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD } from "../../src/bodies/p7/joints.js";
import type { BodyClient } from "../../src/client/index.js";
import { button, SEND_EVERY_MS, type Slider, showValue, slider, type TeleopKit } from "../controls.js";
import { clockTime, fmt, make, setText, throttle } from "../util.js";
import type { BodyControls } from "./common.js";

/** What the move line says while control is held and the arm's pose is not known yet. */
const WAITING = "waiting for the arm's pose (the stream is reconnecting): the sliders start there";

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
    // A mouse lets go once; the keyboard changes the value at every press and auto-repeat:
    // moves go out at most every SEND_EVERY_MS, the last value always.
    s.input.addEventListener("change", () => moveSoon());
    sliders.push(s);
  }
  const maxSpeed = Math.min(...P7_MAX_SPEED_RAD_S);
  const speed = slider(g, "Speed limit", 0.05, maxSpeed, 0.05, P7_DEFAULT_SPEED_RAD_S, "rad/s", "p7-speed");
  const row = make("div", "btn-row");
  const moving = make("p", "meta", "");
  moving.id = "p7-move-status";
  moving.setAttribute("role", "status");
  g.append(row, moving);
  const move = () => {
    const t = kit.targets();
    if (!t) {
      if (kit.held()) setText(moving, WAITING);
      return;
    }
    void kit.send("move", async () => {
      const r = await p7.moveJoints(Array.from(t), { speedRadS: Number(speed.input.value) });
      setText(moving, `move sent at ${clockTime(Date.now())}: arrives in about ${fmt(r.etaS, 1)} s`);
    });
  };
  const moveSoon = throttle(SEND_EVERY_MS, move);
  button(row, "Move to the sliders", move).id = "p7-move";
  button(
    row,
    "Clear errors",
    () =>
      void kit.send("clear error", async () => {
        const r = await p7.clearError();
        kit.log("command", r.clearedJoints.length ? `cleared errors on joints ${r.clearedJoints.map((j) => j + 1).join(", ")}` : "clear error: no joint had an error");
      }),
  ).id = "p7-clear-error";
  /** The sliders start at the measured pose, and move() sends all seven: never from a pose not known. */
  const startAt = (a: ArrayLike<number>) => {
    const t = Float64Array.from(a);
    kit.setTargets(t);
    sliders.forEach((s, i) => {
      s.input.value = String(t[i]);
      setText(s.value, `${fmt(t[i], 2)} rad`);
    });
    setText(moving, "");
    kit.targetsChanged();
  };
  return {
    // Control taken with no pose known yet (the stream reconnecting: a new connection has no state
    // until its first message): the first state while held gives it.
    onState: () => {
      if (kit.targets()) return;
      const a = c.getJointState()?.angles;
      if (a) startAt(a);
    },
    // Not held: thumbs and labels both show the measured pose.
    onIdle: () => {
      const a = c.getJointState()?.angles;
      if (a) for (let i = 0; i < sliders.length; i++) showValue(sliders[i]!, a[i]!, "rad");
    },
    // Zeros in place of a pose not known would be a move of every joint to 0 at the next Move.
    onHeld: () => {
      const a = c.getJointState()?.angles;
      if (a) startAt(a);
      else {
        kit.setTargets(null);
        setText(moving, WAITING);
      }
    },
  };
}
