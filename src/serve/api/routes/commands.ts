/**
 * POST /v1/commands/<…>: the body's commands (from its adapter). Each route's body limit comes from
 * its request schema, and the lease is checked before the body is read (guard.ts); then the body
 * is validated (400 naming the field) and handed to the adapter with the checked lease id.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { sendError } from "../answers.js";
import { bodyLimitFor } from "../body-limit.js";
import { checkedLease, requireLease } from "../guard.js";
import { CommandAnswerSchema, ErrorSchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

const errorAnswers = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorSchema]));

export const commandRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { adapter, authority }) => {
  const leaseHook = requireLease(authority);
  for (const cmd of adapter.commands) {
    r.post(
      cmd.path,
      {
        bodyLimit: bodyLimitFor(cmd.request, `POST ${cmd.path}`),
        onRequest: leaseHook,
        schema: {
          summary: cmd.summary,
          ...(cmd.description ? { description: cmd.description } : {}),
          tags: ["commands"],
          body: cmd.request,
          security: [{ lease: [] }],
          response: { 200: CommandAnswerSchema(cmd.response), ...errorAnswers(400, 403, 409, 413, 503) },
        },
      },
      async (req, reply) => {
        const out = await cmd.handle(checkedLease(req), req.body);
        if (!out.ok) return sendError(reply, out.error);
        return { ok: true as const, result: out.result };
      },
    );
  }
};
