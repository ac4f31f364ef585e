/**
 * The NAO's facet of the SDK (`client.nao`, once `client.body === "nao"`): its own readings
 * (battery, touch, feet, sonar, head) and commands (joints with stiffness, LEDs, sonar, smooth
 * enable/disable). Every call checks the body first: on another body it fails with ApiError
 * `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. Browser-safe.
 */
import type { AppliedAnswer, NaoStateMessage } from "../messages.js";
import { finiteArray, type SnapshotMeta } from "../snapshots.js";
import { Facet, type FacetHost } from "./host.js";

/** Joint targets in the API's joint order (`client.jointNames`): 26 values each. */
export interface NaoJointTargets {
  positions?: readonly number[];
  stiffness?: readonly number[];
}
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

type Partially<T> = { readonly [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

export class NaoFacet extends Facet<"nao"> {
  constructor(host: FacetHost) {
    super("nao", host);
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

  /** Positions and/or stiffness (26 each, `jointNames` order); out-of-limit positions are clamped and listed. */
  async setJointTargets(targets: NaoJointTargets): Promise<AppliedAnswer> {
    this.check("setJointTargets");
    return this.host.command("/v1/commands/joints", targets);
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
    return this.smooth("smoothEnable");
  }
  /** Into the rest posture, then stiffness off; resolves the estimated seconds. */
  smoothDisable(): Promise<{ estimatedS: number }> {
    return this.smooth("smoothDisable");
  }

  /** The current NAO message's fields (possibly incomplete: checked field by field) and stamp. */
  #now(what: string): { f: Partially<NaoStateMessage>; meta: SnapshotMeta } | null {
    this.check(what);
    const c = this.host.current();
    return c && c.message.body === "nao" ? { f: c.message as Partially<NaoStateMessage>, meta: c.meta } : null;
  }
}

function allFinite(...v: unknown[]): boolean {
  for (const x of v) if (typeof x !== "number" || !Number.isFinite(x)) return false;
  return true;
}
