/**
 * The TNY-360's teleoperation controls: a velocity pad (drag, or the arrow keys; Shift+←/→
 * strafes), posture sliders, smooth enable/disable, gait. A held velocity is resent, since the
 * robot decays a velocity nobody renews.
 */
import { DEFAULT_BODY_HEIGHT_M } from "../../src/bodies/tny360/kinematics.js";
import type { BodyClient } from "../../src/client/index.js";
import { powerRow, SEND_EVERY_MS, slider, type TeleopKit } from "../controls.js";
import { fmt, make, setText, throttle } from "../util.js";
import type { BodyControls } from "./common.js";

/** The velocity pad's full deflection (not the robot's limits: a comfortable range for a person). */
const PAD_MAX = { xMS: 0.25, yMS: 0.15, yawRadS: 1.0 };
/** Resend a held velocity this often (the TNY-360 decays an unrenewed velocity after 500 ms). */
const VELOCITY_RENEW_MS = 200;

export function tny360Controls(kit: TeleopKit, c: BodyClient<"tny360">): BodyControls<"tny360"> {
  const tny = c.tny360;
  const row = powerRow(kit, "Power and gait", "tny", tny);
  const gait = make("select");
  gait.id = "tny-gait";
  gait.setAttribute("aria-label", "Gait");
  for (const g of ["Creep", "Walk", "Run"] as const) gait.append(Object.assign(make("option", undefined, g), { value: g }));
  gait.addEventListener("change", () => void kit.send("gait", () => tny.setGait(gait.value as "Creep" | "Walk" | "Run")));
  const gl = make("label", "inline", "Gait ");
  gl.append(gait);
  row.append(gl);

  const vg = kit.group("Velocity (drag the pad, or arrow keys; Shift+←/→ strafes)");
  const pad = make("div", "pad");
  pad.id = "tny-pad";
  pad.tabIndex = 0;
  pad.setAttribute("role", "application");
  pad.setAttribute("aria-label", "Velocity pad: up/down forward and back, left/right turn");
  const knob = make("div", "knob");
  pad.append(make("div", "pad-cross"), knob);
  const readout = make("p", "meta", "stopped");
  readout.id = "tny-velocity";
  vg.append(pad, readout);
  const v = { xMS: 0, yMS: 0, yawRadS: 0 };
  let renew: ReturnType<typeof setInterval> | null = null;
  const sendVelocity = () => void kit.send("velocity", () => tny.setVelocity(v));
  const show = () => {
    // Knob: up = forward, left = turn left (positive yaw) or strafe left.
    const fx = -(v.yawRadS / PAD_MAX.yawRadS || v.yMS / PAD_MAX.yMS);
    const fy = -v.xMS / PAD_MAX.xMS;
    knob.style.left = `${50 + 42 * Math.max(-1, Math.min(1, fx))}%`;
    knob.style.top = `${50 + 42 * Math.max(-1, Math.min(1, fy))}%`;
    setText(readout, v.xMS || v.yMS || v.yawRadS ? `x ${fmt(v.xMS, 2)} m/s, y ${fmt(v.yMS, 2)} m/s, yaw ${fmt(v.yawRadS, 2)} rad/s` : "stopped");
  };
  const set = (x: number, y: number, yaw: number) => {
    v.xMS = x;
    v.yMS = y;
    v.yawRadS = yaw;
    show();
    sendVelocity();
    const moving = x !== 0 || y !== 0 || yaw !== 0;
    if (moving && !renew) renew = setInterval(sendVelocity, VELOCITY_RENEW_MS);
    if (!moving && renew) {
      clearInterval(renew);
      renew = null;
    }
  };
  const fromPointer = (e: PointerEvent) => {
    const r = pad.getBoundingClientRect();
    const fx = Math.max(-1, Math.min(1, ((e.clientX - r.left) / r.width - 0.5) / 0.42));
    const fy = Math.max(-1, Math.min(1, ((e.clientY - r.top) / r.height - 0.5) / 0.42));
    set(+(-fy * PAD_MAX.xMS).toFixed(3), 0, +(-fx * PAD_MAX.yawRadS).toFixed(3));
  };
  pad.addEventListener("pointerdown", (e) => {
    if (!kit.held()) return;
    pad.setPointerCapture(e.pointerId);
    fromPointer(e);
  });
  pad.addEventListener("pointermove", (e) => {
    if (pad.hasPointerCapture(e.pointerId)) fromPointer(e);
  });
  const stop = () => set(0, 0, 0);
  pad.addEventListener("pointerup", stop);
  pad.addEventListener("pointercancel", stop);
  const keys = new Set<string>();
  const fromKeys = (shift: boolean) => {
    const x = (keys.has("ArrowUp") ? 1 : 0) - (keys.has("ArrowDown") ? 1 : 0);
    const side = (keys.has("ArrowLeft") ? 1 : 0) - (keys.has("ArrowRight") ? 1 : 0);
    set(x * PAD_MAX.xMS * 0.6, shift ? side * PAD_MAX.yMS * 0.6 : 0, shift ? 0 : side * PAD_MAX.yawRadS * 0.6);
  };
  const onKey = (e: KeyboardEvent, down: boolean) => {
    if (!kit.held() || !e.key.startsWith("Arrow")) return;
    const t = e.target as HTMLElement | null;
    if (t && t !== pad && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    e.preventDefault();
    if (down === keys.has(e.key)) return; // key repeat
    if (down) keys.add(e.key);
    else keys.delete(e.key);
    fromKeys(e.shiftKey);
  };
  document.addEventListener("keydown", (e) => onKey(e, true));
  document.addEventListener("keyup", (e) => onKey(e, false));
  window.addEventListener("blur", () => {
    keys.clear();
    if (v.xMS || v.yMS || v.yawRadS) stop();
  });

  const pg = kit.group("Posture");
  const posture = {
    z: slider(pg, "Height", 0.06, 0.16, 0.005, DEFAULT_BODY_HEIGHT_M, "m", "tny-height"),
    rx: slider(pg, "Roll", -0.35, 0.35, 0.01, 0, "rad", "tny-roll"),
    ry: slider(pg, "Pitch", -0.35, 0.35, 0.01, 0, "rad", "tny-pitch"),
    rz: slider(pg, "Yaw", -0.35, 0.35, 0.01, 0, "rad", "tny-yaw"),
  };
  const sendPosture = throttle(
    SEND_EVERY_MS,
    () =>
      void kit.send("posture", () =>
        tny.setPosture({ xM: 0, yM: 0, zM: Number(posture.z.input.value), rxRad: Number(posture.rx.input.value), ryRad: Number(posture.ry.input.value), rzRad: Number(posture.rz.input.value) }),
      ),
  );
  for (const s of Object.values(posture)) s.input.addEventListener("input", sendPosture);

  return {
    onState: (m) => {
      // The runtime's joint targets are the commanded pose.
      let t = kit.targets();
      if (!t || t.length !== m.joint_targets.length) {
        t = new Float64Array(m.joint_targets.length);
        kit.setTargets(t);
      }
      t.set(m.joint_targets);
      if (gait !== document.activeElement && gait.value !== m.locomotion.gait) gait.value = m.locomotion.gait;
    },
    onIdle: () => {},
    onHeld: () => {
      const m = tny.getBodyState();
      if (m) {
        const p = m.locomotion.posture;
        for (const [k, s] of Object.entries(posture)) {
          const val = k === "z" ? (p.z > 0 ? p.z : DEFAULT_BODY_HEIGHT_M) : p[k as "rx" | "ry" | "rz"];
          s.input.value = String(val);
          setText(s.value, `${fmt(val, 2)} ${k === "z" ? "m" : "rad"}`);
        }
        kit.setTargets(Float64Array.from(m.joint_targets));
      }
      show();
    },
  };
}
