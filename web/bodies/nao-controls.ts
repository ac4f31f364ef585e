/**
 * The NAO's teleoperation controls: smooth enable/disable, stiffness per chain, joint sliders
 * within the joint limits. Sliders start at the measured pose on taking control, and a joint the
 * user has not touched follows the measured pose in every command, so nothing jumps.
 */
import { API_ORDER, JOINT_LIMITS } from "../../src/bodies/nao/joints.js";
import type { BodyClient } from "../../src/client/index.js";
import { powerRow, SEND_EVERY_MS, type Slider, showValue, slider, type TeleopKit } from "../controls.js";
import { fmt, make, setText, throttle } from "../util.js";
import type { BodyControls } from "./common.js";

const NAO_CHAINS: Readonly<Record<string, readonly string[]>> = {
  Head: ["HeadYaw", "HeadPitch"],
  LArm: ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw", "LHand"],
  RArm: ["RShoulderPitch", "RShoulderRoll", "RElbowYaw", "RElbowRoll", "RWristYaw", "RHand"],
  LLeg: ["LHipYawPitch", "LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll"],
  RLeg: ["RHipYawPitch", "RHipRoll", "RHipPitch", "RKneePitch", "RAnklePitch", "RAnkleRoll"],
};
const API_INDEX: Readonly<Record<string, number>> = Object.fromEntries(API_ORDER.map((n, i) => [n, i]));
const unitOf = (name: string): string => (name.endsWith("Hand") ? "" : "rad");

export function naoControls(kit: TeleopKit, c: BodyClient<"nao">): BodyControls<"nao"> {
  const nao = c.nao;
  const touched = new Set<number>();
  const measured = (): readonly number[] | null => c.getJointState()?.angles ?? null;
  // No pose known (the stream reconnecting: a new connection has no state until its first
  // message): no targets, so a slider sends nothing, until the first state while held (onState).
  // Zeros in their place went out as every joint's target at the next slider move.
  const sync = () => {
    const a = measured();
    if (!a) {
      kit.setTargets(null);
      return;
    }
    const t = Float64Array.from(a);
    kit.setTargets(t);
    touched.clear();
    for (const [name, s] of sliders) {
      const v = t[API_INDEX[name]!]!;
      s.input.value = String(v);
      setText(s.value, `${fmt(v, 2)} ${unitOf(name)}`);
    }
    // The stiffness sliders show what each chain has now (smooth enable raised it).
    const m = nao.getBodyState();
    if (m) {
      for (const [chain, names] of Object.entries(NAO_CHAINS)) {
        const v = m.joint_stiffness[API_INDEX[names[0]!]!] ?? 0;
        chainStiffness[chain]!.input.value = String(v);
        setText(chainStiffness[chain]!.value, fmt(v, 2));
      }
    }
    kit.targetsChanged();
  };
  // The posture moves by itself; the sliders follow once it is there.
  powerRow(kit, "Power", "nao", nao, (estimatedS) => setTimeout(sync, Math.min(10_000, estimatedS * 1000 + 300)));

  const stiff = kit.group("Stiffness per chain");
  const chainStiffness: Record<string, Slider> = {};
  const sendStiffness = throttle(SEND_EVERY_MS, () => {
    const st = new Array<number>(API_ORDER.length).fill(0);
    for (const [chain, joints] of Object.entries(NAO_CHAINS)) for (const j of joints) st[API_INDEX[j]!] = Number(chainStiffness[chain]!.input.value);
    void kit.send("stiffness", () => nao.setJointTargets({ stiffness: st }));
  });
  for (const chain of Object.keys(NAO_CHAINS)) {
    const s = slider(stiff, chain, 0, 1, 0.05, 0, "", `stiffness-${chain}`);
    s.input.addEventListener("input", sendStiffness);
    chainStiffness[chain] = s;
  }

  const joints = kit.group("Joints");
  const pick = make("select");
  pick.id = "nao-chain";
  pick.setAttribute("aria-label", "Chain");
  for (const chain of Object.keys(NAO_CHAINS)) pick.append(Object.assign(make("option", undefined, chain), { value: chain }));
  joints.append(pick);
  const sliders = new Map<string, Slider>();
  const lists: Record<string, HTMLElement> = {};
  const sendPositions = throttle(SEND_EVERY_MS, () => {
    const a = measured();
    const t = kit.targets();
    if (!t) return;
    // Untouched joints follow the measured pose, so nothing the user did not move jumps.
    if (a) for (let i = 0; i < t.length; i++) if (!touched.has(i)) t[i] = a[i]!;
    kit.targetsChanged();
    void kit.send("joint targets", () => nao.setJointTargets({ positions: Array.from(t) }));
  });
  for (const [chain, names] of Object.entries(NAO_CHAINS)) {
    const list = make("div", "slider-list");
    list.dataset.chain = chain;
    list.hidden = chain !== "Head";
    lists[chain] = list;
    joints.append(list);
    for (const name of names) {
      const lim = JOINT_LIMITS[name as keyof typeof JOINT_LIMITS];
      const s = slider(list, name, lim.minRad, lim.maxRad, 0.01, 0, unitOf(name), `joint-${name}`);
      s.input.addEventListener("input", () => {
        const i = API_INDEX[name]!;
        // One motor drives both hip yaw-pitch joints: move them together.
        const twin = name.endsWith("HipYawPitch") ? API_INDEX[name[0] === "L" ? "RHipYawPitch" : "LHipYawPitch"]! : -1;
        touched.add(i);
        if (twin >= 0) touched.add(twin);
        const t = kit.targets();
        if (t) {
          t[i] = Number(s.input.value);
          if (twin >= 0) t[twin] = Number(s.input.value);
        }
        sendPositions();
      });
      sliders.set(name, s);
    }
  }
  pick.addEventListener("change", () => {
    for (const [chain, list] of Object.entries(lists)) list.hidden = chain !== pick.value;
  });
  // Not held: every slider shows the body as it is (the pose, each chain's stiffness).
  const onIdle: BodyControls<"nao">["onIdle"] = (m) => {
    const a = measured();
    if (a) for (const [name, s] of sliders) showValue(s, a[API_INDEX[name]!]!, unitOf(name));
    for (const [chain, names] of Object.entries(NAO_CHAINS)) showValue(chainStiffness[chain]!, m.joint_stiffness[API_INDEX[names[0]!]!] ?? 0, "");
  };
  return {
    onState: () => {
      if (!kit.targets()) sync();
    },
    onIdle,
    onHeld: sync,
  };
}
