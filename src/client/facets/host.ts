/**
 * What a per-body facet needs from its client (`BodylinkClient` implements it privately): the
 * body check, the newest current message, the joint names, the lease, and REST. Browser-safe.
 */
import type { BodyKind, StateMessage } from "../messages.js";
import type { SnapshotMeta } from "../snapshots.js";

export interface FacetHost {
  /**
   * Throws ApiError `BL_ERR_CLIENT_NOT_THIS_BODY` unless the server serves `kind` (`what` names
   * the call, e.g. "nao.setLeds()"). Facet commands call it before anything is sent.
   */
  checkBody(kind: BodyKind, what: string): void;
  /** The newest message and its source stamp when it is current (connected, link ok, fresh), else null. */
  current(): { readonly message: Readonly<StateMessage>; readonly meta: SnapshotMeta } | null;
  /** The newest message while the stream is open, however old (deep-frozen), else null. */
  newest(): Readonly<StateMessage> | null;
  /** Joint names in the order of every joint array (the stream's hello). */
  jointNames(): readonly string[];
  /** The id of the lease this client holds, or null. */
  leaseId(): string | null;
  /** REST call; resolves the parsed answer or rejects with ApiError. */
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A body command (POST /v1/commands/…) with the client's lease; resolves its `result`. */
  command<T>(path: string, body: unknown): Promise<T>;
}

/** A body's facet: its kind, the body check, and its own message. */
export abstract class Facet<K extends BodyKind> {
  readonly kind: K;
  protected readonly host: FacetHost;

  constructor(kind: K, host: FacetHost) {
    this.kind = kind;
    this.host = host;
  }

  /** This body's full message as sent (wire spelling), deep-frozen; or null when not current. */
  getBodyState(): Readonly<Extract<StateMessage, { readonly body: K }>> | null {
    this.check("getBodyState");
    const c = this.host.current();
    return c && c.message.body === this.kind ? (c.message as Readonly<Extract<StateMessage, { readonly body: K }>>) : null;
  }

  /** smooth-enable / smooth-disable, for the bodies that have them; resolves the estimated seconds. */
  protected async smooth(method: "smoothEnable" | "smoothDisable"): Promise<{ estimatedS: number }> {
    this.check(method);
    const path = method === "smoothEnable" ? "/v1/commands/smooth-enable" : "/v1/commands/smooth-disable";
    const r = await this.host.command<{ estimated_s: number }>(path, {});
    return { estimatedS: r.estimated_s };
  }

  /** Throws ApiError BL_ERR_CLIENT_NOT_THIS_BODY unless the server serves this body. */
  protected check(method: string): void {
    this.host.checkBody(this.kind, `${this.kind}.${method}()`);
  }
}
