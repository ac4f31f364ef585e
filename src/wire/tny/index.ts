/** TNY-360 binary API codec: the table, the types, the decoder and the encoder. Pure, browser-safe. */
export * from "./constants.js";
export * from "./decode.js";
export * from "./encode.js";
export * from "./types.js";
