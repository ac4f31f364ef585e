/** The TNY-360's dashboard entry (words, limits, panel, controls, charts, cells, history). */
import { JOINT_MAX_RAD, JOINT_MIN_RAD } from "../../src/bodies/tny360/joints.js";
import { TNY360_SIM_POSES } from "../../src/bodies/tny360/poses.js";
import { PALETTE } from "../plots.js";
import { fmt } from "../util.js";
import { arrayLimits, type DashboardBody, num, twoAxes } from "./common.js";
import { tny360Controls } from "./tny360-controls.js";
import { tny360Panel } from "./tny360-panel.js";

export const TNY360_DASHBOARD: DashboardBody<"tny360"> = {
  name: "TNY-360",
  jointsMeta: "(rad)",
  panelTitle: "Odometry, gait, paws, power",
  viewNote: "Leg kinematics from the firmware's constants; body tilted by the IMU.",
  extraColumn: "Target (rad)",
  temperatures: false, // hobby servos: no sensor
  effort: { title: "Effort (N·m)", unit: "N·m" },
  defaultPlotted: ["FrontLeftHipPitch", "FrontLeftKneePitch", "BackRightKneePitch"],
  limits: (names) => arrayLimits(names, JOINT_MIN_RAD, JOINT_MAX_RAD),
  panel: (host) => tny360Panel(host),
  controls: tny360Controls,
  // A physics TNY-360's world (docs/simulation.md): the body where the simulator has it, paws' contacts, a fall.
  world: (m) => m.sim ?? null,
  simReset: { poses: TNY360_SIM_POSES, reset: (c, pose) => c.tny360.simReset(pose) },
  anglesChart: {
    id: "imu-angles",
    title: "Orientation (rad)",
    axes: [{ scale: "r", label: "rad" }],
    series: ["roll", "pitch", "yaw"].map((k, i) => ({ key: `angle.${k}`, label: k, color: PALETTE[i]! })),
  },
  extraCharts: [twoAxes("Power", { key: "power.voltage", label: "voltage V", color: PALETTE[2]!, unit: "V" }, { key: "power.current", label: "current A", color: PALETTE[1]!, unit: "A" })],
  extraCell: (m, i) => ({ text: fmt(m.joint_targets[i]), bad: false }),
  imuText: (m) => `orientation ${m.imu.orientation.map((x) => fmt(x)).join(", ")} rad`,
  tilt: (m) => m.imu.orientation,
  // The firmware's own targets (it runs the gait), not this page's.
  recordJoint(m, i, j, row) {
    j.position[row] = num(m.joint_positions[i]);
    j.target[row] = num(m.joint_targets[i]);
    j.effort[row] = num(m.joint_efforts[i]);
  },
  recordNamed(m, put) {
    put("angle.roll", m.imu.orientation[0]);
    put("angle.pitch", m.imu.orientation[1]);
    put("angle.yaw", m.imu.orientation[2]);
    put("power.voltage", m.power.voltage);
    put("power.current", m.power.current);
  },
};
