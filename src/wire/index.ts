/**
 * The wire codecs, browser-safe (no I/O, no Node built-ins): byte cursors, CRC-32, and one folder
 * per protocol. Chest-board names are exported under `chestboard`, LoLA's under `lola` and the
 * TNY-360's under `tny`, since each protocol's table uses its own spec's names.
 */
export * from "./bytes.js";
export * from "./crc32.js";
export * as chestboard from "./chestboard/index.js";
export * as lola from "./lola/index.js";
export * as tny from "./tny/index.js";
