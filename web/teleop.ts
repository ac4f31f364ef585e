/**
 * Teleoperation under a lease. "Take control" acquires a lease through the SDK exactly as any
 * client does (renewed in the background); a refusal shows who holds control and until when.
 * Every control below is disabled unless this page holds the lease. Releasing (or the lease
 * ending) is a plain state, written calmly; only the emergency stop is an alarm.
 *
 * - NAO: smooth enable/disable, stiffness per chain, joint sliders within the joint limits.
 * - P7: joint sliders within the limits, a speed limit, Move, Clear errors.
 * - TNY-360: a velocity pad (drag, or the arrow keys; Shift+←/→ strafes), posture sliders,
 *   smooth enable/disable, gait.
 *
 * Sliders never make the robot jump: on taking control they start at the measured positions,
 * and a NAO joint the user has not touched follows the measured pose in every command.
 */
import { API_ORDER, JOINT_LIMITS } from "../src/bodies/nao/joints.js";
import { P7_DEFAULT_SPEED_RAD_S, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD } from "../src/bodies/p7/joints.js";
import { DEFAULT_BODY_HEIGHT_M } from "../src/bodies/tny360/kinematics.js";
import { ApiError, type BodyClient, type BodyKind, type BodylinkClient, type ControlHolder, type ControlLease, type NaoFacet, type P7Facet, type StateMessage, type Tny360Facet } from "../src/client/index.js";
import { clockTime, errorText, fmt, make, setLevel, setText, throttle } from "./util.js";

export type LogFn = (kind: string, text: string, level?: "info" | "warn" | "bad") => void;

const LEASE_MS = 3000;
const SEND_EVERY_MS = 100;
/** The velocity pad's full deflection (not the robot's limits: a comfortable range for a person). */
const PAD_MAX = { xMS: 0.25, yMS: 0.15, yawRadS: 1.0 };
/** Resend a held velocity this often (the TNY-360 decays an unrenewed velocity after 500 ms). */
const VELOCITY_RENEW_MS = 200;

const NAO_CHAINS: Readonly<Record<string, readonly string[]>> = {
  Head: ["HeadYaw", "HeadPitch"],
  LArm: ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw", "LHand"],
  RArm: ["RShoulderPitch", "RShoulderRoll", "RElbowYaw", "RElbowRoll", "RWristYaw", "RHand"],
  LLeg: ["LHipYawPitch", "LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll"],
  RLeg: ["RHipYawPitch", "RHipRoll", "RHipPitch", "RKneePitch", "RAnklePitch", "RAnkleRoll"],
};
const API_INDEX: Readonly<Record<string, number>> = Object.fromEntries(API_ORDER.map((n, i) => [n, i]));

interface Slider {
  readonly input: HTMLInputElement;
  readonly value: HTMLElement;
}

/** Set a slider's thumb and label (display only: no input event, so nothing is sent). */
function showValue(s: Slider, v: number, unit: string): void {
  const text = String(v);
  if (s.input.value !== text) s.input.value = text;
  setText(s.value, `${fmt(v, 2)} ${unit}`);
}

function slider(parent: HTMLElement, label: string, min: number, max: number, step: number, value: number, unit: string, id?: string): Slider {
  const row = make("label", "slider");
  const name = make("span", "slider-name", label);
  const input = make("input");
  input.type = "range";
  input.min = String(min);
  input.max = String(max);
  input.step = String(step);
  input.value = String(value);
  if (id) input.id = id;
  input.dataset.name = label;
  input.setAttribute("aria-valuetext", `${value} ${unit}`);
  const out = make("output", "slider-value", `${fmt(value, 2)} ${unit}`);
  input.addEventListener("input", () => {
    setText(out, `${fmt(Number(input.value), 2)} ${unit}`);
    input.setAttribute("aria-valuetext", `${input.value} ${unit}`);
  });
  row.append(name, input, out);
  parent.append(row);
  return { input, value: out };
}

function button(parent: HTMLElement, text: string, onClick: () => void, className = "btn"): HTMLButtonElement {
  const b = make("button", className, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  parent.append(b);
  return b;
}

export function holderText(h: ControlHolder): string {
  return `${h.owner} (${h.source}) until ${clockTime(h.expires_at_epoch_ms)}`;
}

export class Teleop {
  readonly #client: BodylinkClient;
  readonly #log: LogFn;
  readonly #status: HTMLElement;
  readonly #controls: HTMLElement;
  readonly #take: HTMLButtonElement;
  readonly #release: HTMLButtonElement;
  #lease: ControlLease | null = null;
  /** Commanded joint targets in the API's order (the 3D ghost), while held. */
  #targets: Float64Array | null = null;
  #onTargets: () => void = () => {};
  /** Per-body refresh on every state while held (slider labels, pad). */
  #onState: (m: Readonly<StateMessage>) => void = () => {};
  #onHeld: () => void = () => {};
  /** Per-body display while not held: the disabled controls show the body as measured (after an e-stop: stiffness 0). */
  #onIdle: (m: Readonly<StateMessage>) => void = () => {};

  constructor(host: HTMLElement, client: BodylinkClient, log: LogFn) {
    this.#client = client;
    this.#log = log;
    const bar = make("div", "control-bar");
    this.#take = button(bar, "Take control", () => void this.take(), "btn primary");
    this.#take.id = "take-control";
    this.#release = button(bar, "Release control", () => void this.release(), "btn");
    this.#release.id = "release-control";
    this.#release.hidden = true;
    this.#status = make("p", "control-status");
    this.#status.id = "control-status";
    this.#status.setAttribute("role", "status");
    this.#controls = make("fieldset", "teleop-controls");
    this.#controls.id = "teleop-controls";
    (this.#controls as HTMLFieldSetElement).disabled = true;
    host.append(bar, this.#status, this.#controls);
    setLevel(this.#status, "Not in control. Take control to command the robot; reads and the emergency stop need no lease.", "calm");
    client.on("control-lost", (e) => this.#ended(`control ended: ${e.reason}`));
    // One control set per registry body (a body without one does not compile).
    const build: { readonly [K in BodyKind]: () => void } = {
      nao: () => this.#buildNao((client as BodyClient<"nao">).nao),
      p7: () => this.#buildP7((client as BodyClient<"p7">).p7),
      tny360: () => this.#buildTny((client as BodyClient<"tny360">).tny360),
    };
    if (client.body) build[client.body]();
  }

  get held(): boolean {
    return this.#lease?.active === true;
  }

  /** The commanded pose (API order) while this page holds control, else null. */
  commanded(): Float64Array | null {
    return this.held ? this.#targets : null;
  }

  onTargetsChanged(f: () => void): void {
    this.#onTargets = f;
  }

  /** Call with every state message. */
  state(m: Readonly<StateMessage>): void {
    if (this.held) this.#onState(m);
    else this.#onIdle(m);
  }

  async take(): Promise<void> {
    this.#take.disabled = true;
    try {
      // Ask first: a refusal we can predict needs no refused request (the holder is the same answer).
      const now = await this.#client.fetchControl();
      if (now.holder) throw new ApiError({ code: "BL_ERR_AUTH_HELD", status: 409, message: "control is held", holder: now.holder });
      this.#lease = await this.#client.acquireControl({ leaseMs: LEASE_MS, owner: "dashboard" });
      this.#take.hidden = true;
      this.#release.hidden = false;
      (this.#controls as HTMLFieldSetElement).disabled = false;
      setLevel(this.#status, `In control (lease renewed every ${LEASE_MS / 3000} s). Release when done.`, "ok");
      this.#log("control", "this page took control");
      this.#onHeld();
    } catch (e) {
      const h = e instanceof ApiError ? e.holder : undefined;
      const text = h ? `Refused: control is held by ${holderText(h)}.` : `Could not take control: ${errorText(e)}`;
      setLevel(this.#status, text, "warn");
      this.#status.dataset.holder = h ? h.owner : "";
      this.#log("control", text, "warn");
    } finally {
      this.#take.disabled = false;
    }
  }

  async release(): Promise<void> {
    const l = this.#lease;
    if (!l) return;
    try {
      await l.release();
    } catch (e) {
      this.#log("control", `release failed: ${errorText(e)}`, "warn");
    }
    this.#ended("Control released. The robot keeps to its safe behaviour without a lease.");
    this.#log("control", "this page released control");
  }

  #ended(text: string): void {
    this.#lease = null;
    this.#targets = null;
    this.#take.hidden = false;
    this.#release.hidden = true;
    (this.#controls as HTMLFieldSetElement).disabled = true;
    setLevel(this.#status, text, "calm");
    this.#onTargets();
  }

  async #send(what: string, f: () => Promise<unknown>): Promise<void> {
    if (!this.held) return;
    try {
      await f();
    } catch (e) {
      this.#log("command", `${what} refused: ${errorText(e)}`, "warn");
      setLevel(this.#status, `${what} refused: ${errorText(e)}`, "warn");
    }
  }

  #group(title: string): HTMLElement {
    const g = make("div", "teleop-group");
    g.append(make("h3", undefined, title));
    this.#controls.append(g);
    return g;
  }

  /** Smooth enable/disable (NAO and TNY-360: the same SDK calls); returns the row for more controls. */
  #powerRow(title: string, idPrefix: string, facet: NaoFacet | Tny360Facet, after?: (estimatedS: number) => void): HTMLElement {
    const row = make("div", "btn-row");
    this.#group(title).append(row);
    const smooth = (enable: boolean) =>
      void this.#send(enable ? "smooth enable" : "smooth disable", async () => {
        const r = enable ? await facet.smoothEnable() : await facet.smoothDisable();
        this.#log("command", `${enable ? "smooth enable" : "smooth disable"}: about ${fmt(r.estimatedS, 1)} s`);
        after?.(r.estimatedS);
      });
    button(row, "Smooth enable (stand)", () => smooth(true)).id = `${idPrefix}-smooth-enable`;
    button(row, "Smooth disable (rest)", () => smooth(false)).id = `${idPrefix}-smooth-disable`;
    return row;
  }

  // ---- NAO --------------------------------------------------------------------------------------

  #buildNao(nao: NaoFacet): void {
    const c = this.#client;
    const touched = new Set<number>();
    const measured = (): readonly number[] | null => c.getJointState()?.angles ?? null;
    const sync = () => {
      const a = measured();
      this.#targets = a ? Float64Array.from(a) : new Float64Array(API_ORDER.length);
      touched.clear();
      for (const [name, s] of sliders) {
        const v = this.#targets[API_INDEX[name]!]!;
        s.input.value = String(v);
        setText(s.value, `${fmt(v, 2)} ${name.endsWith("Hand") ? "" : "rad"}`);
      }
      // The stiffness sliders show what each chain has now (smooth enable raised it).
      const m = c.getBodyState();
      if (m?.body === "nao") {
        for (const [chain, names] of Object.entries(NAO_CHAINS)) {
          const v = m.joint_stiffness[API_INDEX[names[0]!]!] ?? 0;
          chainStiffness[chain]!.input.value = String(v);
          setText(chainStiffness[chain]!.value, fmt(v, 2));
        }
      }
      this.#onTargets();
    };
    // Not held: every slider shows the body as it is (the pose, each chain's stiffness).
    this.#onIdle = (m) => {
      if (m.body !== "nao") return;
      const a = measured();
      if (a) for (const [name, s] of sliders) showValue(s, a[API_INDEX[name]!]!, name.endsWith("Hand") ? "" : "rad");
      for (const [chain, names] of Object.entries(NAO_CHAINS)) showValue(chainStiffness[chain]!, m.joint_stiffness[API_INDEX[names[0]!]!] ?? 0, "");
    };
    // The posture moves by itself; the sliders follow once it is there.
    this.#powerRow("Power", "nao", nao, (estimatedS) => setTimeout(sync, Math.min(10_000, estimatedS * 1000 + 300)));

    const stiff = this.#group("Stiffness per chain");
    const chainStiffness: Record<string, Slider> = {};
    const sendStiffness = throttle(SEND_EVERY_MS, () => {
      const st = new Array<number>(API_ORDER.length).fill(0);
      for (const [chain, joints] of Object.entries(NAO_CHAINS)) for (const j of joints) st[API_INDEX[j]!] = Number(chainStiffness[chain]!.input.value);
      void this.#send("stiffness", () => nao.setJointTargets({ stiffness: st }));
    });
    for (const chain of Object.keys(NAO_CHAINS)) {
      const s = slider(stiff, chain, 0, 1, 0.05, 0, "", `stiffness-${chain}`);
      s.input.addEventListener("input", sendStiffness);
      chainStiffness[chain] = s;
    }

    const joints = this.#group("Joints");
    const pick = make("select");
    pick.id = "nao-chain";
    pick.setAttribute("aria-label", "Chain");
    for (const chain of Object.keys(NAO_CHAINS)) pick.append(Object.assign(make("option", undefined, chain), { value: chain }));
    joints.append(pick);
    const sliders = new Map<string, Slider>();
    const lists: Record<string, HTMLElement> = {};
    const sendPositions = throttle(SEND_EVERY_MS, () => {
      const a = measured();
      const t = this.#targets;
      if (!t) return;
      // Untouched joints follow the measured pose, so nothing the user did not move jumps.
      if (a) for (let i = 0; i < t.length; i++) if (!touched.has(i)) t[i] = a[i]!;
      this.#onTargets();
      void this.#send("joint targets", () => nao.setJointTargets({ positions: Array.from(t) }));
    });
    for (const [chain, names] of Object.entries(NAO_CHAINS)) {
      const list = make("div", "slider-list");
      list.dataset.chain = chain;
      list.hidden = chain !== "Head";
      lists[chain] = list;
      joints.append(list);
      for (const name of names) {
        const lim = JOINT_LIMITS[name as keyof typeof JOINT_LIMITS];
        const s = slider(list, name, lim.minRad, lim.maxRad, 0.01, 0, name.endsWith("Hand") ? "" : "rad", `joint-${name}`);
        s.input.addEventListener("input", () => {
          const i = API_INDEX[name]!;
          touched.add(i);
          // One motor drives both hip yaw-pitch joints: move them together.
          if (name.endsWith("HipYawPitch")) touched.add(API_INDEX[name[0] === "L" ? "RHipYawPitch" : "LHipYawPitch"]!);
          if (this.#targets) {
            this.#targets[i] = Number(s.input.value);
            if (name.endsWith("HipYawPitch")) this.#targets[API_INDEX[name[0] === "L" ? "RHipYawPitch" : "LHipYawPitch"]!] = Number(s.input.value);
          }
          sendPositions();
        });
        sliders.set(name, s);
      }
    }
    pick.addEventListener("change", () => {
      for (const [chain, list] of Object.entries(lists)) list.hidden = chain !== pick.value;
    });
    this.#onHeld = sync;
  }

  // ---- P7 -----------------------------------------------------------------------------------------

  #buildP7(p7: P7Facet): void {
    const c = this.#client;
    const g = this.#group("Joints (move together under the speed limit)");
    const sliders: Slider[] = [];
    for (let i = 0; i < P7_MIN_RAD.length; i++) {
      const s = slider(g, `joint${i + 1}`, P7_MIN_RAD[i]!, P7_MAX_RAD[i]!, 0.01, 0, "rad", `p7-joint-${i + 1}`);
      s.input.addEventListener("input", () => {
        if (this.#targets) this.#targets[i] = Number(s.input.value);
        this.#onTargets();
      });
      s.input.addEventListener("change", () => move());
      sliders.push(s);
    }
    const maxSpeed = Math.min(...P7_MAX_SPEED_RAD_S);
    const speed = slider(g, "Speed limit", 0.05, maxSpeed, 0.05, P7_DEFAULT_SPEED_RAD_S, "rad/s", "p7-speed");
    const row = make("div", "btn-row");
    g.append(row);
    const move = () => {
      const t = this.#targets;
      if (!t) return;
      void this.#send("move", async () => {
        const r = await p7.moveJoints(Array.from(t), { speedRadS: Number(speed.input.value) });
        this.#log("command", `move: arrives in about ${fmt(r.etaS, 1)} s`);
      });
    };
    button(row, "Move to the sliders", move).id = "p7-move";
    button(row, "Clear errors", () =>
      void this.#send("clear error", async () => {
        const r = await p7.clearError();
        this.#log("command", r.clearedJoints.length ? `cleared errors on joints ${r.clearedJoints.map((j) => j + 1).join(", ")}` : "clear error: no joint had an error");
      }),
    ).id = "p7-clear-error";
    // Not held: thumbs and labels both show the measured pose.
    this.#onIdle = () => {
      const a = c.getJointState()?.angles;
      if (a) for (let i = 0; i < sliders.length; i++) showValue(sliders[i]!, a[i]!, "rad");
    };
    this.#onHeld = () => {
      const a = c.getJointState()?.angles;
      this.#targets = Float64Array.from(a ?? new Array(P7_MIN_RAD.length).fill(0));
      sliders.forEach((s, i) => {
        s.input.value = String(this.#targets![i]);
        setText(s.value, `${fmt(this.#targets![i], 2)} rad`);
      });
      this.#onTargets();
    };
  }

  // ---- TNY-360 ------------------------------------------------------------------------------------

  #buildTny(tny: Tny360Facet): void {
    const c = this.#client;
    const row = this.#powerRow("Power and gait", "tny", tny);
    const gait = make("select");
    gait.id = "tny-gait";
    gait.setAttribute("aria-label", "Gait");
    for (const g of ["Creep", "Walk", "Run"] as const) gait.append(Object.assign(make("option", undefined, g), { value: g }));
    gait.addEventListener("change", () => void this.#send("gait", () => tny.setGait(gait.value as "Creep" | "Walk" | "Run")));
    const gl = make("label", "inline", "Gait ");
    gl.append(gait);
    row.append(gl);

    const vg = this.#group("Velocity (drag the pad, or arrow keys; Shift+←/→ strafes)");
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
    const sendVelocity = () => void this.#send("velocity", () => tny.setVelocity(v));
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
      if (!this.held) return;
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
      if (!this.held || !e.key.startsWith("Arrow")) return;
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

    const pg = this.#group("Posture");
    const posture = {
      z: slider(pg, "Height", 0.06, 0.16, 0.005, DEFAULT_BODY_HEIGHT_M, "m", "tny-height"),
      rx: slider(pg, "Roll", -0.35, 0.35, 0.01, 0, "rad", "tny-roll"),
      ry: slider(pg, "Pitch", -0.35, 0.35, 0.01, 0, "rad", "tny-pitch"),
      rz: slider(pg, "Yaw", -0.35, 0.35, 0.01, 0, "rad", "tny-yaw"),
    };
    const sendPosture = throttle(SEND_EVERY_MS, () =>
      void this.#send("posture", () =>
        tny.setPosture({ xM: 0, yM: 0, zM: Number(posture.z.input.value), rxRad: Number(posture.rx.input.value), ryRad: Number(posture.ry.input.value), rzRad: Number(posture.rz.input.value) }),
      ),
    );
    for (const s of Object.values(posture)) s.input.addEventListener("input", sendPosture);

    this.#onState = (m) => {
      if (m.body !== "tny360") return;
      // The runtime's joint targets are the commanded pose.
      if (!this.#targets) this.#targets = new Float64Array(m.joint_targets.length);
      this.#targets.set(m.joint_targets);
      if (gait !== document.activeElement && gait.value !== m.locomotion.gait) gait.value = m.locomotion.gait;
    };
    this.#onHeld = () => {
      const m = c.getBodyState();
      if (m?.body === "tny360") {
        const p = m.locomotion.posture;
        for (const [k, s] of Object.entries(posture)) {
          const val = k === "z" ? (p.z > 0 ? p.z : DEFAULT_BODY_HEIGHT_M) : p[k as "rx" | "ry" | "rz"];
          s.input.value = String(val);
          setText(s.value, `${fmt(val, 2)} ${k === "z" ? "m" : "rad"}`);
        }
        this.#targets = Float64Array.from(m.joint_targets);
      }
      show();
    };
  }
}
