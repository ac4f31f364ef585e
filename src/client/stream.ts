/**
 * One connection to the robot API's state stream (`/v1/stream`): opens the WebSocket, parses each
 * message and hands hellos and states to its owner, and reports the close. Reconnecting is the
 * owner's policy (`BodylinkClient`). Prepare side; browser-safe.
 */
import type { HelloMessage, StateMessage } from "./messages.js";
import type { WebSocketConstructor, WebSocketEventLike, WebSocketLike } from "./options.js";

export interface StreamHandlers {
  hello(h: HelloMessage): void;
  state(m: StateMessage): void;
  /** The socket closed (not called after `close()`). */
  closed(code: number, reason: string): void;
  error(e: Error): void;
}

export class StreamConnection {
  readonly #ws: WebSocketLike;
  #live = true;

  /** Throws what the WebSocket constructor throws (a malformed URL). */
  constructor(url: string, WebSocket: WebSocketConstructor, on: StreamHandlers) {
    const ws = new WebSocket(url);
    this.#ws = ws;
    ws.addEventListener("message", (ev) => {
      if (this.#live) parse((ev as WebSocketEventLike).data, on);
    });
    ws.addEventListener("close", (ev) => {
      if (!this.#live) return;
      this.#live = false;
      const e = ev as WebSocketEventLike;
      on.closed(e.code ?? 1006, e.reason ?? "");
    });
    ws.addEventListener("error", () => {
      // A close event follows; the reason is reported there.
    });
  }

  /** Close it quietly: no more callbacks. */
  close(): void {
    this.#live = false;
    const ws = this.#ws;
    if (ws.readyState === 0 || ws.readyState === 1) ws.close(1000, "client closed");
  }
}

function parse(data: unknown, on: StreamHandlers): void {
  const text = typeof data === "string" ? data : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? decodeUtf8(data) : null;
  if (text === null) return;
  let msg: { type?: unknown };
  try {
    msg = JSON.parse(text) as { type?: unknown };
  } catch {
    on.error(new Error("robot API sent a message that is not JSON"));
    return;
  }
  if (msg.type === "hello") on.hello(msg as HelloMessage);
  else if (msg.type === "state") on.state(msg as StateMessage);
}

function decodeUtf8(d: ArrayBuffer | ArrayBufferView): string {
  const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  return new TextDecoder().decode(bytes);
}
