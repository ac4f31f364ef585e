/**
 * The simulation models bodylink ships, generated from its own tables: repository path → the
 * function that writes the text. `npm run models` (bin/models.js) writes them under models/;
 * test/bodies/models.test.ts checks each shipped file equals what its generator writes now.
 */
import { naoMjcf } from "./nao/mjcf.js";
import { p7Mjcf } from "./p7/mjcf.js";
import { tny360Mjcf } from "./tny360/mjcf.js";

export const MODEL_FILES: Readonly<Record<string, () => string>> = {
  "models/nao.xml": naoMjcf,
  "models/p7.xml": p7Mjcf,
  "models/tny360.xml": tny360Mjcf,
};
