// `node --import` this file: every ES module the process (and its worker threads) loads is appended,
// one URL a line, to the file BODYLINK_TEST_LOADED_MODULES names (test/build.test.ts).
import { register } from "node:module";

register(new URL("./loaded-modules-hooks.mjs", import.meta.url));
