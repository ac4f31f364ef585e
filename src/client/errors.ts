/**
 * The SDK's error: what the server answered (code, status, message, and for a refused lease the
 * holder), or a local failure with a code from the same table (src/errors.ts). Browser-safe.
 */
import type { ErrorCode } from "../errors.js";
import type { ControlHolder, ErrorAnswer } from "./messages.js";

export class ApiError extends Error {
  /** A `BL_ERR_…` code (docs/errors.md). */
  readonly code: ErrorCode | (string & {});
  /** HTTP status (0 when the server could not be reached). */
  readonly status: number;
  /** Who holds control, on a 409 refusal or a 403 for a lease that is no longer held. */
  readonly holder: ControlHolder | undefined;
  readonly problems: ReadonlyArray<{ readonly key: string; readonly reason: string }> | undefined;

  constructor(answer: ErrorAnswer, options?: { cause?: unknown }) {
    super(answer.message, options);
    this.name = "ApiError";
    this.code = answer.code;
    this.status = answer.status;
    this.holder = answer.holder;
    this.problems = answer.problems;
  }
}
