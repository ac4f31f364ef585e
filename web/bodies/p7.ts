/** The AIRBOT P7's dashboard entry (words, limits, panel, controls, charts, cells, history). */
import { P7_MAX_RAD, P7_MIN_RAD, P7_SIM_POSES } from "../../src/bodies/p7/joints.js";
import { arrayLimits, type DashboardBody, num } from "./common.js";
import { p7Controls } from "./p7-controls.js";
import { p7Panel } from "./p7-panel.js";

export const P7_DASHBOARD: DashboardBody<"p7"> = {
  name: "AIRBOT P7",
  jointsMeta: "(rad)",
  panelTitle: "Arm: error ids, flange",
  viewNote: "The arm's link model (src/bodies/p7/kinematics.ts).",
  extraColumn: "Error id",
  temperatures: true,
  effort: { title: "Effort (N·m)", unit: "N·m" },
  defaultPlotted: ["joint1", "joint2", "joint4"],
  limits: (names) => arrayLimits(names, P7_MIN_RAD, P7_MAX_RAD),
  panel: p7Panel,
  controls: p7Controls,
  // A physics arm's world (docs/simulation.md): its base bolted at the origin over the floor.
  world: (m) => m.sim ?? null,
  simReset: { poses: P7_SIM_POSES, reset: (c, pose) => c.p7.simReset(pose) },
  anglesChart: null,
  extraCharts: [],
  extraCell: (_m, i, motors) => {
    const id = motors?.errorIds[i];
    return { text: id === undefined ? "—" : String(id), bad: Boolean(id) };
  },
  imuText: () => "",
  tilt: () => null,
  recordJoint(m, i, j, row, commanded) {
    j.position[row] = num(m.joint_positions[i]);
    j.target[row] = commanded ? num(commanded[i]) : Number.NaN;
    j.effort[row] = num(m.joint_efforts[i]);
    j.temperature[row] = num(m.motor_temperatures[i]);
  },
  recordNamed() {},
};
