/**
 * The NAO's facet of the SDK (`client.nao`, once `client.body === "nao"`): its own readings
 * (joints by name, battery, touch, feet, sonar, head) and commands (joints with stiffness, LEDs,
 * sonar, smooth enable/disable). Every call checks the body first: on another body it fails with
 * ApiError `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. Browser-safe.
 *
 * Joints by name: the API's arrays are NAOqi's Body chain order, 26 joints (`NAO_JOINT_NAMES`),
 * with both LHipYawPitch and RHipYawPitch. They are one motor on the robot, LoLA's LHipYawPitch
 * (its slot 7; LoLA's arrays have 25 and no RHipYawPitch): reading either name reads that motor,
 * and a command by name that gives only one of them sets both (given both, LHipYawPitch's value is
 * used, as the runtime does, and its answer's `notes` say so).
 */
import { API_ORDER, type ApiJoint } from "../../bodies/nao/joints.js";
import type { NaoSimPose } from "../../bodies/nao/sim-world.js";
import { localError } from "../rest.js";
import type { AppliedAnswer, NaoStateMessage } from "../messages.js";
import { finiteArray, type SnapshotMeta } from "../snapshots.js";
import { Facet, type FacetHost } from "./host.js";

/** A NAO joint's name (NAOqi's spelling). */
export type NaoJointName = ApiJoint;
/** The NAO's joint names in the API's order, the order of every NAO joint array (26). */
export const NAO_JOINT_NAMES: readonly NaoJointName[] = API_ORDER;

/** One value per joint: an array in `NAO_JOINT_NAMES` order (26), or some joints by name. */
export type NaoJointValues = readonly number[] | { readonly [J in NaoJointName]?: number };

/**
 * Joint targets: positions (rad; hands 0..1) and/or stiffness (0..1). By name, the joints not
 * named keep their target: what this client last sent under its current lease (since its last
 * smooth enable/disable), else what the body reported last (a new holder's stiffness is 0 until it
 * commands, so unnamed joints stay limp).
 */
export interface NaoJointTargets {
  positions?: NaoJointValues;
  stiffness?: NaoJointValues;
}

/** One joint's reading, from one cycle. */
export interface NaoJointReading {
  readonly positionRad: number;
  /** Estimated from consecutive cycles (the NAO has no velocity sensor). */
  readonly velocityRadS: number;
  readonly currentA: number;
  readonly temperatureC: number;
  /** The stiffness the joint was sent, 0..1. */
  readonly stiffness: number;
  /** Temperature status 0..3. */
  readonly status: number;
}
/** Every joint's reading by name (both HipYawPitch names read the one motor). */
export type NaoJoints = SnapshotMeta & { readonly [J in NaoJointName]: NaoJointReading };
export type NaoLedGroup = "chest" | "left_ear" | "right_ear" | "left_eye" | "right_eye" | "left_foot" | "right_foot" | "skull";

export interface BatteryState extends SnapshotMeta {
  /** 0..1 */
  readonly charge: number;
  /** A, negative while discharging. */
  readonly currentA: number;
  /** LoLA's scale (0.1 applied twice: 28.5 °C reads 2.8); `fetchState()` gives whole °C. */
  readonly temperatureLola: number;
  readonly charging: boolean;
  /** Battery status register, raw bit field. */
  readonly status: number;
}
export interface TouchState extends SnapshotMeta {
  readonly chestButton: boolean;
  readonly headFront: boolean;
  readonly headMiddle: boolean;
  readonly headRear: boolean;
  readonly leftHand: boolean;
  readonly rightHand: boolean;
  readonly leftFoot: boolean;
  readonly rightFoot: boolean;
}
export interface FootState extends SnapshotMeta {
  /** kg: front left, front right, rear left, rear right. */
  readonly leftPressureKg: readonly number[];
  readonly rightPressureKg: readonly number[];
  readonly leftWeightKg: number;
  readonly rightWeightKg: number;
  /** m, x y in each ankle frame; 0 when unloaded. */
  readonly leftCenterOfPressureM: readonly number[];
  readonly rightCenterOfPressureM: readonly number[];
}
export interface SonarState extends SnapshotMeta {
  readonly leftM: number;
  readonly rightM: number;
}
export interface HeadState extends SnapshotMeta {
  readonly voltageV: number;
  readonly powerW: number;
  readonly currentA: number;
  readonly faceTemperatureC: number;
}

type SentTargets = { readonly lease: string | null; readonly positions: readonly number[] | null; readonly stiffness: readonly number[] | null };
const NOTHING_SENT: SentTargets = Object.freeze({ lease: null, positions: null, stiffness: null });
const HYP_L = API_ORDER.indexOf("LHipYawPitch");
const HYP_R = API_ORDER.indexOf("RHipYawPitch");

type Partially<T> = { readonly [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

export class NaoFacet extends Facet<"nao"> {
  constructor(host: FacetHost) {
    super("nao", host);
  }

  /** Every joint by name, `client.nao.getJoints()?.HeadYaw.positionRad`; null when not current. */
  getJoints(): NaoJoints | null {
    const n = this.#now("getJoints");
    if (!n) return null;
    const f = n.f;
    const cols = [f.joint_positions, f.joint_velocities, f.joint_currents, f.joint_temperatures, f.joint_stiffness, f.joint_status].map((a) => finiteArray(a, NAO_JOINT_NAMES.length));
    const [p, v, c, t, st, status] = cols;
    if (!p || !v || !c || !t || !st || !status) return null;
    const out: Record<string, unknown> = { ...n.meta };
    NAO_JOINT_NAMES.forEach((name, i) => {
      out[name] = Object.freeze({ positionRad: p[i]!, velocityRadS: v[i]!, currentA: c[i]!, temperatureC: t[i]!, stiffness: st[i]!, status: status[i]! });
    });
    return Object.freeze(out) as unknown as NaoJoints;
  }

  getBatteryState(): BatteryState | null {
    const n = this.#now("getBatteryState");
    const b = n?.f.battery;
    if (!n || !b || !allFinite(b.charge, b.current, b.temperature, b.status) || typeof b.charging !== "boolean") return null;
    return Object.freeze({ ...n.meta, charge: b.charge!, currentA: b.current!, temperatureLola: b.temperature!, charging: b.charging, status: b.status! });
  }
  /** Touch: one value per hand and foot. */
  getTouchState(): TouchState | null {
    const n = this.#now("getTouchState");
    const t = n?.f.touch;
    if (!n || !t) return null;
    const v = [t.chest_button, t.head_front, t.head_middle, t.head_rear, t.left_hand, t.right_hand, t.left_foot, t.right_foot];
    if (!v.every((x) => typeof x === "boolean")) return null;
    return Object.freeze({
      ...n.meta,
      chestButton: t.chest_button!,
      headFront: t.head_front!,
      headMiddle: t.head_middle!,
      headRear: t.head_rear!,
      leftHand: t.left_hand!,
      rightHand: t.right_hand!,
      leftFoot: t.left_foot!,
      rightFoot: t.right_foot!,
    });
  }
  /** Foot pressure sensors, weights, centres of pressure. */
  getFootState(): FootState | null {
    const n = this.#now("getFootState");
    if (!n) return null;
    const f = n.f;
    const l = finiteArray(f.left_foot_pressure, 4);
    const r = finiteArray(f.right_foot_pressure, 4);
    const lc = finiteArray(f.center_of_pressure?.left, 2);
    const rc = finiteArray(f.center_of_pressure?.right, 2);
    if (!l || !r || !lc || !rc || !f.foot_weight || !allFinite(f.foot_weight.left, f.foot_weight.right)) return null;
    return Object.freeze({
      ...n.meta,
      leftPressureKg: l,
      rightPressureKg: r,
      leftWeightKg: f.foot_weight.left!,
      rightWeightKg: f.foot_weight.right!,
      leftCenterOfPressureM: lc,
      rightCenterOfPressureM: rc,
    });
  }
  /** Sonar distances, m. */
  getSonarState(): SonarState | null {
    const n = this.#now("getSonarState");
    const s = n && finiteArray(n.f.sonar, 2);
    if (!n || !s) return null;
    return Object.freeze({ ...n.meta, leftM: s[0]!, rightM: s[1]! });
  }
  /** Head power monitor and face temperature. */
  getHeadState(): HeadState | null {
    const n = this.#now("getHeadState");
    const h = n?.f.head;
    if (!n || !h || !allFinite(h.voltage, h.power, h.current, h.face_temperature)) return null;
    return Object.freeze({ ...n.meta, voltageV: h.voltage!, powerW: h.power!, currentA: h.current!, faceTemperatureC: h.face_temperature! });
  }

  /** The chest board's decoded preferences. */
  async fetchPreferences(): Promise<unknown> {
    this.check("fetchPreferences");
    return this.host.request("GET", "/v1/preferences");
  }
  /** Motor-board handshake results. */
  async fetchBoards(): Promise<unknown[]> {
    this.check("fetchBoards");
    return this.host.request("GET", "/v1/boards");
  }

  /**
   * Positions and/or stiffness, each 26 values in `NAO_JOINT_NAMES` order or some joints by name
   * (`{ positions: { HeadYaw: 0.5 } }`: see NaoJointTargets for the rest); out-of-limit positions
   * are clamped and listed.
   */
  async setJointTargets(targets: NaoJointTargets): Promise<AppliedAnswer> {
    this.check("setJointTargets");
    const lease = this.host.leaseId();
    if (this.#sent.lease !== lease) this.#sent = { lease, positions: null, stiffness: null };
    const body: { positions?: readonly number[]; stiffness?: readonly number[] } = {};
    if (targets.positions) body.positions = this.#full("positions", targets.positions, this.#sent.positions);
    if (targets.stiffness) body.stiffness = this.#full("stiffness", targets.stiffness, this.#sent.stiffness);
    const answer = await this.host.command<AppliedAnswer>("/v1/commands/joints", body);
    if (this.#sent.lease === lease) this.#sent = { lease, positions: body.positions ?? this.#sent.positions, stiffness: body.stiffness ?? this.#sent.stiffness };
    return answer;
  }
  /** LED intensities 0..1 per group, LoLA's index order within each group. */
  async setLeds(groups: Partial<Record<NaoLedGroup, readonly number[]>>): Promise<AppliedAnswer> {
    this.check("setLeds");
    return this.host.command("/v1/commands/leds", groups);
  }
  /** Sonar transmitters on/off. */
  async setSonar(on: { left: boolean; right: boolean }): Promise<AppliedAnswer> {
    this.check("setSonar");
    return this.host.command("/v1/commands/sonar", on);
  }
  /** Stiffness up into the stand posture; resolves the estimated seconds. */
  smoothEnable(): Promise<{ estimatedS: number }> {
    this.#sent = NOTHING_SENT; // the motion sets every target
    return this.smooth("smoothEnable");
  }
  /** Into the rest posture, then stiffness off; resolves the estimated seconds. */
  smoothDisable(): Promise<{ estimatedS: number }> {
    this.#sent = NOTHING_SENT;
    return this.smooth("smoothDisable");
  }

  /**
   * Put the simulated world into `pose` (POST /v1/sim/reset; the physics simulator, docs/simulation.md):
   * stand (the zero posture), crouch (the rest posture) or lying (on its back). Needs the lease;
   * refused while an e-stop is latched, and on a robot (404 BL_ERR_CMD_UNSUPPORTED). Resolves the
   * simulated time after it, s (0).
   */
  async simReset(pose: NaoSimPose): Promise<{ timeS: number }> {
    this.check("simReset");
    this.#sent = NOTHING_SENT; // the reset makes the pose every target
    const r = await this.host.command<{ pose: string; time_s: number }>("/v1/sim/reset", { pose });
    return { timeS: r.time_s };
  }

  /** What this client last sent under `lease` (26 values each), for joints a command by name leaves out. */
  #sent: SentTargets = NOTHING_SENT;

  /** `values` as 26 in API order: an array as given (the runtime checks it), a record on top of what holds now. */
  #full(key: "positions" | "stiffness", values: NaoJointValues, sent: readonly number[] | null): readonly number[] {
    if (Array.isArray(values)) return values as readonly number[];
    const named = values as { readonly [name: string]: number | undefined };
    const unknown = Object.keys(named).filter((k) => !NAO_JOINT_NAMES.includes(k as NaoJointName));
    if (unknown.length) throw localError("BL_ERR_CMD_INVALID", `${key}: no NAO joint ${unknown.map((k) => JSON.stringify(k)).join(", ")} (names: NAO_JOINT_NAMES, docs/api.md)`);
    let base = sent;
    if (!base) {
      // The newest report, even past staleAfterMs: a limp or held joint is where it was.
      const m = this.host.newest();
      const reported = m?.body === this.kind ? finiteArray(key === "positions" ? m.joint_positions : m.joint_stiffness, NAO_JOINT_NAMES.length) : null;
      if (!reported) throw localError("BL_ERR_STATE_NONE");
      base = reported;
    }
    const out = base.slice();
    NAO_JOINT_NAMES.forEach((name, i) => {
      const v = named[name];
      if (v !== undefined) out[i] = v;
    });
    // One motor, two names: naming one of them sets both (the runtime reads LHipYawPitch's).
    const l = named.LHipYawPitch ?? named.RHipYawPitch;
    if (l !== undefined) {
      out[HYP_L] = l;
      out[HYP_R] = named.RHipYawPitch ?? l;
    }
    return out;
  }

  /** The current NAO message's fields (possibly incomplete: checked field by field) and stamp. */
  #now(what: string): { f: Partially<NaoStateMessage>; meta: SnapshotMeta } | null {
    this.check(what);
    const c = this.host.current();
    return c && c.message.body === this.kind ? { f: c.message as Partially<NaoStateMessage>, meta: c.meta } : null;
  }
}

function allFinite(...v: unknown[]): boolean {
  for (const x of v) if (typeof x !== "number" || !Number.isFinite(x)) return false;
  return true;
}
