/**
 * The robot API's body adapter: the one small interface between the body-independent server
 * (`build.ts`: leases, WebSocket stream, REST plumbing, OpenAPI, errors) and one body's runtime
 * object (NaoRobot, P7Robot, Tny360Robot). Each body has one adapter in `bodies/<body>.ts`.
 *
 * What an adapter does:
 * - turns the runtime's live state into a JSON-ready message (`read`), in the body's API units,
 *   in two views: "stream" (the 20 Hz WebSocket message) and "rest" (GET /v1/state; may differ
 *   in units, e.g. the NAO's battery temperature is LoLA's scale on the stream and whole °C on
 *   REST, as docs/api.md says);
 * - describes that message with a TypeBox schema (OpenAPI and the SDK's docs come from it);
 * - lists its body-specific read routes (NAO preferences, boards) and command routes (joint
 *   targets, LEDs, moves …), each with a request schema and a handler that receives a lease id
 *   the server has already checked;
 * - performs the emergency stop (no lease).
 *
 * What the server does for every body, so adapters never repeat it: lease checks (403 / 409),
 * request validation (400 naming the field), the envelope of every state message (`type`, `body`,
 * `seq`, `timestamp_ms`, `epoch_ms`, `link`), pacing the stream at 20 Hz on the runtime's clock,
 * skipping slow clients, health, OpenAPI.
 *
 * Prepare side only: everything here allocates and runs outside the body's cycle (the stream
 * builds one message per 50 ms, after a cycle, never inside it).
 */
import type { BodylinkError } from "../../errors.js";
import type { LinkStatus } from "../../client/messages.js";
import type { BodyKind, BodyRuntime } from "../../runtime/robot.js";

/**
 * A route's JSON schema (a TypeBox schema; TypeBox's TSchema is an empty interface, so every one is
 * this) and an object schema's shape as the routes read it. Declared here, not imported: this file
 * is part of `startApiServer`'s published declarations, and a TypeBox type here made every strict
 * consumer's tsc load and check TypeBox's ~380 declaration files (test/package.test.ts).
 * test/api/published-types.test.ts checks TypeBox's schemas are these.
 */
export type ApiSchema = object;
export interface ApiObjectSchema {
  readonly type: "object";
  readonly properties: Readonly<Record<string, ApiSchema>>;
}

/** Which view of the state to build: the 20 Hz stream's units or REST's. */
export type StateView = "stream" | "rest";

/**
 * The state message's envelope and link words are the wire contract the client SDK defines
 * (`src/client/messages.ts`); the server imports them rather than keeping a second copy.
 */
export type { StateEnvelope } from "../../client/messages.js";
/** Link status every state message carries (same words as RobotHealth.link). */
export type ApiLinkStatus = LinkStatus;

/** The source cycle an adapter's fields come from (the server writes it into the envelope). */
export interface SourceStamp {
  readonly seq: number;
  readonly timestampMs: number;
  readonly epochMs: number;
  readonly link: ApiLinkStatus;
}

/** One body's state fields, JSON-ready (plain objects, arrays of numbers/booleans). */
export type BodyFields = Record<string, unknown>;

/** Result of a command handler: a JSON-ready answer, or a BodylinkError the server maps to HTTP. */
export type CommandOutcome = { readonly ok: true; readonly result: Record<string, unknown> } | { readonly ok: false; readonly error: BodylinkError };

/** A GET route specific to one body (e.g. NAO `/v1/preferences`). */
export interface ReadRoute {
  /** Absolute path under /v1, e.g. "/v1/preferences". */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  /** Schema of the 200 answer. */
  readonly response: ApiSchema;
  /** The answer, or a BodylinkError (e.g. BL_ERR_STATE_NONE before the robot started). */
  get(): unknown | BodylinkError;
}

/** A POST command route specific to one body. The server has validated `body` and the lease. */
export interface CommandRoute<B = unknown> {
  /** Absolute path under /v1/commands, e.g. "/v1/commands/joints". */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  /** TypeBox schema of the request body (validated before `handle` runs; 400 names the field). */
  readonly request: ApiSchema;
  /** Schema of the 200 answer's `result`. */
  readonly response: ApiObjectSchema;
  handle(leaseId: string, body: B): CommandOutcome | Promise<CommandOutcome>;
}

export interface BodyAdapter {
  readonly kind: BodyKind;
  readonly robot: BodyRuntime;
  /** Joint names in the API's order: the order of every joint array in `read()`. */
  readonly jointNames: readonly string[];
  /** Schema of the body's fields (without the envelope) in each view. */
  readonly schemas: { readonly stream: ApiObjectSchema; readonly rest: ApiObjectSchema };
  /**
   * The latest state's source stamp, or null when there is no valid state yet (before the first
   * decoded cycle). Cheap; the stream calls it to decide whether there is anything to send.
   */
  source(): SourceStamp | null;
  /** Build the body's fields from the latest state, in `view`'s units; null when `source()` is. */
  read(view: StateView): BodyFields | null;
  readonly reads: readonly ReadRoute[];
  readonly commands: readonly CommandRoute[];
  /** No lease needed: the body goes to its safe stop now and control is revoked. */
  emergencyStop(reason: string): void;
  /**
   * Called after every body cycle on the perform side, with the runtime clock's time (the stream
   * paces itself on it). Listeners must be cheap and allocation-free. Returns an unsubscribe.
   */
  onCycle(listener: (seq: number, nowMs: number) => void): () => void;
  /**
   * Every `periodMs` of this thread's timer when the body ran a cycle since (BodyRuntime.onSample),
   * or null when the body has no sampler (then decimate onCycle). Returns an unsubscribe.
   */
  onSample(periodMs: number, listener: (seq: number, nowMs: number) => void): (() => void) | null;
  /** Drop the adapter's own cycle listeners (server close). */
  close(): void;
}
