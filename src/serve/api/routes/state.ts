/** Reads, no lease: GET /v1/state, GET /v1/health, and the body's own reads (NAO /v1/preferences …). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { BodylinkError } from "../../../errors.js";
import { healthAnswer, sendError } from "../answers.js";
import { ErrorSchema, HealthQuerySchema, HealthSchema, stateSchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

export const stateRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { robot, adapter, stream, fleet }) => {
  const restState = stateSchema(adapter.schemas.rest, "The latest state, REST units");
  r.get(
    "/v1/state",
    {
      schema: {
        summary: "The latest state (same fields as the stream; REST units)",
        tags: ["state"],
        response: { 200: restState, 503: ErrorSchema },
      },
    },
    async (_req, reply) => {
      const src = adapter.source();
      const fields = src && adapter.read("rest");
      if (!src || !fields) return sendError(reply, new BodylinkError("BL_ERR_STATE_NONE"));
      return { type: "state", body: adapter.kind, seq: src.seq, timestamp_ms: src.timestampMs, epoch_ms: src.epochMs, link: src.link, ...fields };
    },
  );

  r.get(
    "/v1/health",
    { schema: { summary: "Link, cycle timing, error counters, control holder, stream statistics", tags: ["state"], querystring: HealthQuerySchema, response: { 200: HealthSchema } } },
    async (req) => {
      const w = req.query.window_cycles;
      return { ...healthAnswer(await robot.health(w === undefined ? {} : { windowCycles: w }), stream), fleet: fleet?.status() ?? null };
    },
  );

  for (const read of adapter.reads) {
    r.get(
      read.path,
      {
        schema: {
          summary: read.summary,
          ...(read.description ? { description: read.description } : {}),
          tags: ["state"],
          response: { 200: read.response, 503: ErrorSchema },
        },
      },
      async (_req, reply) => {
        const v = read.get();
        if (v instanceof BodylinkError) return sendError(reply, v);
        return v;
      },
    );
  }
};
