/**
 * Every body's serve entry, one per registry body (a body without one does not compile): the one
 * way `bodylink serve` starts it (src/cli/bodies/entry.ts says what an entry is).
 */
import type { BodyTable } from "../../bodies/registry.js";
import type { BodyEntry } from "./entry.js";
import { NAO_ENTRY } from "./nao.js";
import { P7_ENTRY } from "./p7.js";
import { TNY360_ENTRY } from "./tny360.js";

export const SERVE_ENTRIES: BodyTable<BodyEntry> = { nao: NAO_ENTRY, p7: P7_ENTRY, tny360: TNY360_ENTRY };
