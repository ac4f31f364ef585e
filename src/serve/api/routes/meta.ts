/** GET /openapi.json and GET /v1/info: what this server is and how to talk to it. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { DEFAULT_LEASE_MS, MAX_LEASE_MS, MIN_LEASE_MS } from "../../../runtime/authority.js";
import { API_VERSION, InfoSchema, LEASE_HEADER, STREAM_PATH } from "../schemas.js";
import type { ApiContext } from "./context.js";

export const metaRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { adapter, stream }) => {
  // `r.parent`-free: the swagger decorator is inherited from the app this plugin is registered on.
  r.get("/openapi.json", { schema: { summary: "This OpenAPI document", tags: ["state"] } }, async () => r.swagger());

  r.get("/v1/info", { schema: { summary: "Body, joint order, stream rate and lease limits", tags: ["state"], response: { 200: InfoSchema } } }, async () => ({
    body: adapter.kind,
    api_version: API_VERSION,
    joint_names: [...adapter.jointNames],
    stream: { path: STREAM_PATH, rate_hz: stream.rateHz },
    lease: { header: LEASE_HEADER, min_ms: MIN_LEASE_MS, max_ms: MAX_LEASE_MS, default_ms: DEFAULT_LEASE_MS },
  }));
};
