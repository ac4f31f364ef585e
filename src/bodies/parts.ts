/**
 * What each body has that code outside its own folders asks about, one registry-typed table (a
 * body without an entry does not compile), so shared code asks "has it a chest board?" instead of
 * "is it a NAO?". Pure.
 */
import { type BodyTable, isBodyKind } from "./registry.js";

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
