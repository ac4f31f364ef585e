/**
 * The TNY-360's typed commands as they cross from a threaded core's host to its core: one
 * preallocated record per side, field for field the mailbox slot (TNY360_COMMAND_LAYOUT, layout.ts),
 * so the host fills a slot from it and the core copies a slot into it without allocating.
 */
import { JOINT_COUNT } from "../../wire/tny/constants.js";
import { TNY360_COMMAND_LAYOUT } from "./layout.js";

export class Tny360Commands {
  readonly header = new Uint32Array(4);
  readonly velocity = new Float32Array(3);
  readonly posture = new Float32Array(6);
  readonly enabledMask = new Uint32Array(1);
  readonly gait = new Uint32Array(1);
  readonly jointRad = new Float32Array(JOINT_COUNT);
}

type Fields = { readonly [F in (typeof TNY360_COMMAND_LAYOUT)[number] as F["name"]]: { set(a: ArrayLike<number>): void } & ArrayLike<number> };

/** Copy every field of the layout from `from` to `to` (a slot's views or a Tny360Commands). No allocation. */
export function copyTny360Commands(from: Fields, to: Fields): void {
  for (let i = 0; i < TNY360_COMMAND_LAYOUT.length; i++) {
    const name = TNY360_COMMAND_LAYOUT[i]!.name;
    to[name].set(from[name]);
  }
}
