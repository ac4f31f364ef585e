/**
 * bodylink as a library: the runtimes of the three bodies, the shared control authority and
 * clocks, the servers, and the transports. The CLI (`bodylink serve`) is a thin layer over these.
 * The browser-safe parts are the `bodylink/client` and `bodylink/wire` subpath exports.
 */
export { Authority, Lease, type LeaseInfo, type LeaseSource } from "./runtime/authority.js";
export { type Clock, MonotonicClock, SimClock } from "./runtime/clock.js";
export { CycleLoop, type CycleBody } from "./runtime/loop.js";
export type { BodyKind, RobotBase, RobotHealth } from "./runtime/robot.js";
export { NaoRobot, type NaoRobotOptions } from "./runtime/nao-robot.js";
export { P7Robot, type P7RobotOptions } from "./runtime/p7-robot.js";
export { Tny360Robot } from "./runtime/tny360-robot.js";
export { startApiServer, buildApiServer } from "./serve/api/build.js";
export { startLolaServer } from "./serve/lola/server.js";
export { startTnyServer } from "./serve/tny/server.js";
export { SimChestboard } from "./sim/nao/chestboard.js";
export { ReplayChestboard } from "./transport/replay.js";
export { openUsbChestboard, UsbChestboard } from "./transport/usb.js";
export type { ChestboardTransport } from "./transport/chestboard.js";
export { BodylinkError, ERRORS, type ErrorCode } from "./errors.js";
