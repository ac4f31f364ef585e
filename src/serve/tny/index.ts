/** bodylink's TNY-360 API server (binary WebSocket, port 5621). */
export { type DispatchStats, dispatchTnyFrame, type LeaseProvider, newDispatchStats, type TnyDispatchTarget } from "./dispatch.js";
export { startTnyServer, type TnyServer, type TnyServerOptions, type TnyServerStats } from "./server.js";
