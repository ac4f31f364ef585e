/**
 * LoLA wire codecs (docs/lola.md): the protocol table, the fixed-layout 896-byte
 * sensor message writer and its reader (for a client of LoLA), the streaming command reader and a
 * command writer for clients.
 * Pure: no I/O, browser-safe.
 */
export * from "./command-message.js";
export * from "./command-reader.js";
export * from "./constants.js";
export * from "./sensor-message.js";
export * from "./sensor-reader.js";
