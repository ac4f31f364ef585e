/** The LoLA-compatible socket server; see server.ts and docs/lola.md. */
export {
  DEFAULT_LOLA_GRACE_MS,
  type LolaClientInfo,
  type LolaClientRole,
  type LolaLog,
  type LolaLogLevel,
  type LolaRobot,
  type LolaServer,
  type LolaServerOptions,
  startLolaServer,
} from "./server.js";
