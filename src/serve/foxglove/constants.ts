/**
 * The Foxglove WebSocket server's names (server.ts), apart from it so `serve --help` reads them
 * without loading the server.
 */
export const FOXGLOVE_SUBPROTOCOL = "foxglove.websocket.v1";
/** Foxglove's own default port. */
export const DEFAULT_FOXGLOVE_PORT = 8765;
