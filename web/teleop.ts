/**
 * Teleoperation under a lease. "Take control" acquires a lease through the SDK exactly as any
 * client does (renewed in the background); a refusal shows who holds control and until when.
 * Every control below is disabled unless this page holds the lease. Releasing (or the lease
 * ending) is a plain state, written calmly; only the emergency stop is an alarm.
 *
 * The controls are the body's own (`controls` in its dashboard entry, web/bodies/<body>-controls.ts),
 * built with the kit this class lends them (controls.ts): NAO smooth enable/disable, stiffness per
 * chain and joint sliders; P7 joint sliders, a speed limit, Move, Clear errors; TNY-360 a velocity
 * pad, posture sliders, smooth enable/disable, gait.
 *
 * Sliders never make the robot jump: on taking control they start at the measured positions.
 */
import { ApiError, type BodylinkClient, type ControlHolder, type ControlLease, type RobotClient, type StateMessage } from "../src/client/index.js";
import { messageOf, withClient } from "./bodies/index.js";
import { button, type LogFn, type TeleopKit } from "./controls.js";
import { clockTime, errorText, make, setLevel } from "./util.js";

export type { LogFn } from "./controls.js";

const LEASE_MS = 3000;

export function holderText(h: ControlHolder): string {
  return `${h.owner} (${h.source}) until ${clockTime(h.expires_at_epoch_ms)}`;
}

/** The client's body's controls, taking the client's messages (the client emits only its own body's). */
interface Controls {
  onState(m: Readonly<StateMessage>): void;
  onIdle(m: Readonly<StateMessage>): void;
  onHeld(): void;
}

function controlsFor(client: RobotClient, kit: TeleopKit): Controls {
  return withClient(client, (d, c, kind) => {
    const b = d.controls(kit, c);
    return {
      onState: (m) => {
        const mm = messageOf(kind, m);
        if (mm) b.onState(mm);
      },
      onIdle: (m) => {
        const mm = messageOf(kind, m);
        if (mm) b.onIdle(mm);
      },
      onHeld: () => b.onHeld(),
    };
  });
}

export class Teleop {
  readonly #client: BodylinkClient;
  readonly #log: LogFn;
  readonly #status: HTMLElement;
  readonly #controls: HTMLElement;
  readonly #take: HTMLButtonElement;
  readonly #release: HTMLButtonElement;
  readonly #body: Controls;
  #lease: ControlLease | null = null;
  /** Commanded joint targets in the API's order (the 3D ghost), while held. */
  #targets: Float64Array | null = null;
  #onTargets: () => void = () => {};

  constructor(host: HTMLElement, client: RobotClient, log: LogFn) {
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
    const kit: TeleopKit = {
      held: () => this.held,
      log,
      group: (title) => this.#group(title),
      send: (what, f) => this.#send(what, f),
      targets: () => this.#targets,
      setTargets: (t) => {
        this.#targets = t;
      },
      targetsChanged: () => this.#onTargets(),
    };
    // The body's own control set, from its dashboard entry (a body without one does not compile).
    this.#body = controlsFor(client, kit);
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
    if (this.held) this.#body.onState(m);
    else this.#body.onIdle(m);
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
      this.#body.onHeld();
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
}
