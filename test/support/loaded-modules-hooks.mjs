// The load hook of test/support/loaded-modules.mjs (module hooks run on a thread of their own).
import { appendFileSync } from "node:fs";

export async function load(url, context, next) {
  appendFileSync(process.env.BODYLINK_TEST_LOADED_MODULES, `${url}\n`);
  return next(url, context);
}
