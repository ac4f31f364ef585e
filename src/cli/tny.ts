import { CliError } from "./errors.js";
import type { ServeOptions } from "./serve.js";
import type { RobotBase } from "../runtime/robot.js";

// TODO(#5): replaced by the TNY-360 wiring when src/runtime/tny360-robot.ts lands.
export async function startTny(_o: ServeOptions): Promise<{ robot: RobotBase; closers: Array<() => Promise<void>>; lines: string[]; tnyUrl: string | null }> {
  throw new CliError("the tny360 body is not wired yet", 2);
}
