/**
 * What each body has that code outside its own folders asks about, one registry-typed table (a
 * body without an entry does not compile), so shared code asks "has it a chest board?" instead of
 * "is it a NAO?". Pure.
 */
import { NAO_SIM_POSES } from "./nao/sim-world.js";
import { P7_SIM_POSES } from "./p7/joints.js";
import { type BodyKind, type BodyTable, isBodyKind } from "./registry.js";
import { TNY360_SIM_POSES } from "./tny360/poses.js";

export interface BodyParts {
  /** A chest board (the NAO's USB board: prefs, boards, the chest tools; recordings of its frames that verify and replay read). */
  readonly chestBoard: boolean;
}

export const BODY_PARTS: BodyTable<BodyParts> = {
  nao: { chestBoard: true },
  p7: { chestBoard: false },
  tny360: { chestBoard: false },
};

/** Whether `body` (a body's name, as a runtime record or a recording's metadata spells it) has a chest board. */
export function hasChestBoard(body: string): boolean {
  return isBodyKind(body) && BODY_PARTS[body].chestBoard;
}

/** The poses each body's physics world can be reset to (`POST /v1/sim/reset`; the first is the dashboard's default). */
export const BODY_SIM_POSES = { nao: NAO_SIM_POSES, p7: P7_SIM_POSES, tny360: TNY360_SIM_POSES } as const satisfies BodyTable<readonly string[]>;
/** A pose of body `K`'s physics world. */
export type SimPoseOf<K extends BodyKind> = (typeof BODY_SIM_POSES)[K][number];
