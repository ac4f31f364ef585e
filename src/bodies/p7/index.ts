/** The P7 arm body: joint tables, state models and snapshots, command validation, kinematics. */
export * from "./commands.js";
export * from "./joints.js";
export * from "./kinematics.js";
export * from "./state.js";
