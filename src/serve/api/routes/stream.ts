/** GET /v1/stream: the WebSocket state stream (the pacing and slow-client rules are in ../stream.ts). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { STREAM_PATH, STREAM_RATE_HZ } from "../schemas.js";
import type { ApiContext } from "./context.js";
import { BodylinkError } from "../../../errors.js";
import { sendError } from "../answers.js";

export const streamRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { stream }) => {
  r.get(
    STREAM_PATH,
    {
      websocket: true,
      // The cap is checked before the upgrade: a refused client costs no WebSocket.
      onRequest: async (_req, reply) => {
        if (stream.full) await sendError(reply, new BodylinkError("BL_ERR_API_STREAM_FULL", stream.maxSubscribers));
      },
      // @fastify/websocket marks WebSocket routes hidden; this one is part of the API, so list it.
      config: { swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({ schema: { ...schema, hide: false }, url }) },
      schema: {
        summary: "WebSocket state stream",
        description:
          `Upgrade to a WebSocket. The server sends a hello ({type: "hello", body, joint_names, rate_hz}), the current state at once, ` +
          `then one state message every ${1000 / STREAM_RATE_HZ} ms (stream units; see GET /v1/state's schema, where only the NAO's ` +
          "battery.temperature differs: LoLA's scale on the stream). A client that has not taken the previous message is skipped, " +
          "so it always gets the newest state, never a backlog.",
        tags: ["state"],
        response: { 101: Type.Null({ description: "Switching protocols" }) },
      },
    },
    (socket) => stream.add(socket),
  );
};
