/** NAO v6 chest-board link codecs (docs/protocol/chestboard.md). Pure, browser-safe. */
export * from "./constants.js";
export * from "./frame.js";
export * from "./handshake.js";
export * from "./messages.js";
export * from "./prefs.js";
