/**
 * A host's side of its core's command mailbox (shm/mailbox.ts), the one merge-and-hold-back every
 * body's host uses: the commands validated since the core last took a write stay merged in one
 * record (`merged`); each change is written into the mailbox at once, or held back while an ordered
 * request is on its way to the core (CoreLink.ordering: a smooth motion, a clearError …) and written
 * when it is answered (`release`, from CoreHost.commandsReleased), so a command sent after such a
 * request reaches the body after it, as in one thread. Newest wins in the mailbox: a body whose
 * commands replace each other (the P7's) starts every command from an empty record; one whose keys
 * merge (the NAO's, the TNY-360's) starts a new merge only once the core took the last write
 * (`taken`) or control changed hands. Prepare side (the main thread); never waits for the core.
 */
import type { Mailbox } from "../shm/mailbox.js";
import type { ShmField, ShmViews } from "../shm/layout.js";

export class CommandOutbox<L extends readonly ShmField[], M> {
  readonly #mailbox: Mailbox<L>;
  readonly #ordering: () => boolean;
  readonly #fill: (slot: ShmViews<L>) => void;
  /** Changed since the last write (held back while an ordered request is on its way). */
  #dirty = false;
  #lastWrite = 0;

  /**
   * `merged`: the record commands merge into; `copy`: it into a mailbox slot (no allocation);
   * `ordering`: whether an ordered request is on its way (the writes wait for its answer).
   */
  constructor(
    mailbox: Mailbox<L>,
    readonly merged: M,
    copy: (merged: M, slot: ShmViews<L>) => void,
    ordering: () => boolean,
  ) {
    this.#mailbox = mailbox;
    this.#ordering = ordering;
    this.#fill = (slot) => copy(this.merged, slot);
  }

  /** The core took the last write and nothing is held back: the next command starts a new merge. */
  get taken(): boolean {
    return !this.#dirty && this.#mailbox.taken === this.#lastWrite;
  }

  /** The merge changed: write it now, or hold it back while an ordered request is on its way. */
  post(): void {
    this.#dirty = true;
    if (!this.#ordering()) this.release();
  }

  /** Write what is held back (the ordered requests on their way were answered). */
  release(): void {
    if (!this.#dirty) return;
    this.#dirty = false;
    this.#lastWrite = this.#mailbox.write(this.#fill);
  }
}
