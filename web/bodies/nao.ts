/** The NAO's dashboard entry (words, limits, panel, controls, charts, cells, history, its simulated world). */
import { NAO_SIM_POSES } from "../../src/bodies/nao/sim-world.js";
import { JOINT_LIMITS } from "../../src/bodies/nao/joints.js";
import { PALETTE } from "../plots.js";
import { fmt } from "../util.js";
import { type DashboardBody, type Limit, num, twoAxes } from "./common.js";
import { naoControls } from "./nao-controls.js";
import { naoPanel } from "./nao-panel.js";

export const NAO_DASHBOARD: DashboardBody<"nao"> = {
  name: "NAO v6",
  jointsMeta: "(rad; hands: opening 0..1, 0 closed; velocities estimated)",
  panelTitle: "Feet, sensors, boards, preferences",
  viewNote: "Forward kinematics from Aldebaran's NAO v6 link lengths; torso tilted by the inertial unit, lowest sole on the ground.",
  extraColumn: "Stiffness",
  temperatures: true,
  effort: { title: "Motor current (A)", unit: "A" },
  defaultPlotted: ["HeadYaw", "LKneePitch", "RKneePitch"],
  // A hand's 0 (closed) and 1 (open) are its working ends, not limits to warn of.
  limits: (names) =>
    names.map((name) => {
      const l = (JOINT_LIMITS as Readonly<Record<string, Limit>>)[name];
      return l ? (name.endsWith("Hand") ? { ...l, endsAreNormal: true } : l) : null;
    }),
  panel: naoPanel,
  controls: naoControls,
  // A physics NAO's world (docs/simulation.md): the robot where the simulator has it, the ground, contacts, a fall.
  world: (m) => m.sim ?? null,
  simReset: { poses: NAO_SIM_POSES, reset: (c, pose) => c.nao.simReset(pose) },
  anglesChart: {
    id: "imu-angles",
    title: "Torso angles, inertial unit (rad)",
    axes: [{ scale: "r", label: "rad" }],
    series: [
      { key: "angle.roll", label: "roll", color: PALETTE[0]! },
      { key: "angle.pitch", label: "pitch", color: PALETTE[1]! },
    ],
  },
  extraCharts: [
    twoAxes("Battery", { key: "battery.charge", label: "charge %", color: PALETTE[2]!, unit: "%" }, { key: "battery.current", label: "current A", color: PALETTE[1]!, unit: "A" }),
    {
      id: "feet",
      title: "Weight per foot (kg)",
      axes: [{ scale: "kg", label: "kg" }],
      series: [
        { key: "feet.left", label: "left", color: PALETTE[0]! },
        { key: "feet.right", label: "right", color: PALETTE[1]! },
      ],
    },
  ],
  extraCell: (m, i) => ({ text: fmt(m.joint_stiffness[i], 2), bad: false }),
  imuText: (m) => `roll ${fmt(m.imu.roll_pitch[0])} rad, pitch ${fmt(m.imu.roll_pitch[1])} rad (inertial unit)`,
  tilt: (m) => m.imu.roll_pitch,
  recordJoint(m, i, j, row, commanded) {
    j.position[row] = num(m.joint_positions[i]);
    j.target[row] = commanded ? num(commanded[i]) : Number.NaN;
    j.effort[row] = num(m.joint_currents[i]);
    j.temperature[row] = num(m.joint_temperatures[i]);
    j.stiffness[row] = num(m.joint_stiffness[i]);
  },
  recordNamed(m, put) {
    put("angle.roll", m.imu.roll_pitch[0]);
    put("angle.pitch", m.imu.roll_pitch[1]);
    put("battery.charge", m.battery.charge * 100);
    put("battery.current", m.battery.current);
    put("feet.left", m.foot_weight.left);
    put("feet.right", m.foot_weight.right);
  },
};
