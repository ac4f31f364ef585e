/**
 * The thread boundary's requests are checked by the compiler, not by a test run: `npm run lint`
 * (tsc over test/) fails if a line marked @ts-expect-error compiles, so each one below proves that
 * a misnamed request, a wrong argument, a wrong answer or a handler that does not fit its request
 * is a compile error on the host's side and on the core's.
 */
import type { CoreLink } from "../../src/host/core-host.js";
import type { NaoRequests, P7Requests } from "../../src/rt/core-options.js";
import type { CallMessage, CommonRequests, Handlers } from "../../src/rt/core-requests.js";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";

declare const nao: CoreLink<CommonRequests & NaoRequests>;
declare const p7: CoreLink<CommonRequests & P7Requests>;

export async function hostSide(): Promise<void> {
  const moved: { ok: true; estimatedS: number } | { ok: false } = await nao.callOrdered("smoothEnable", 500, "lease");
  const held: boolean = await nao.call("isHeld", 500, "lease");
  void [moved, held];
  // @ts-expect-error a request the NAO's core does not have (a typo)
  await nao.call("smoothEnabel", 500, "lease");
  // @ts-expect-error the P7's request, not the NAO's
  await nao.call("clearError", 500, "lease", null);
  // @ts-expect-error a wrong argument type
  await p7.callOrdered("clearError", 500, "lease", "joint 2");
  // @ts-expect-error a missing argument
  await nao.call("renew", 500, "lease");
  // @ts-expect-error the answer is a health report, not a number
  const n: number = await nao.call("health", 500, null);
  void n;
}

export const coreSide: Handlers<NaoRobot, NaoRequests> = {
  smoothEnable: (r, leaseId) => r.smoothEnable(leaseId),
  smoothDisable: (r, leaseId) => r.smoothDisable(leaseId),
  // @ts-expect-error a handler whose answer does not fit its request
  motionActive: () => "yes",
};

// @ts-expect-error a message naming one request with another's arguments
export const crossed: CallMessage<CommonRequests> = { type: "call", id: 1, method: "renew", args: [{ source: "api" }] };
