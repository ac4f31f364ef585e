/**
 * TypeBox schemas shared by every body's robot API: the state envelope, errors, leases, health,
 * info. Body-specific schemas live in `bodies/<body>.ts` beside their adapter. The OpenAPI
 * document is generated from these (fastify + @fastify/swagger), so what the docs say is what the
 * validator checks. Field names on the wire are snake_case (docs/api.md's `joint_positions`,
 * `battery.charge` …); units are in docs/api.md and in each schema's description.
 *
 * Module-load only: builds schema objects once.
 */
import { BODIES, BODY_KINDS, type BodyKind } from "../../bodies/registry.js";
import Type, { type TArray, type TNumber, type TObject } from "typebox";
import type { ApiObjectSchema } from "./adapter.js";
import { LEASE_HEADER, STREAM_RATE_HZ } from "../../bodies/link.js";
import { SAFETY_CODES, SAFETY_TEXT, type SafetyCode } from "../../bodies/safety.js";
import { MAX_LEASE_MS, MIN_LEASE_MS } from "../../runtime/authority.js";
import { TIMING_RING_CYCLES } from "../../runtime/timing.js";

/** The header every command carries its lease id in (defined once, in bodies/link.ts). */
export { LEASE_HEADER };
/** Version of the API's shapes; bumped on incompatible changes, sent in /v1/info and the hello. */
export const API_VERSION = 1;
/** The state stream's rate, Hz (docs/api.md: 20 Hz; defined once, in bodies/link.ts). */
export { STREAM_RATE_HZ };
export const STREAM_PATH = "/v1/stream";

/** A fixed-length array of finite numbers (typed, so the SDK's message types can be checked against it). */
export function numbers(n: number, description: string): TArray<TNumber> {
  return Type.Array(Type.Number(), { minItems: n, maxItems: n, description });
}

export const LinkSchema = Type.Union([Type.Literal("starting"), Type.Literal("ok"), Type.Literal("degraded"), Type.Literal("lost"), Type.Literal("stopped")], {
  description: "Body link: ok while it answers; degraded on sporadic errors; lost when it stopped answering",
});

/** The body kinds, from the registry (a new body shows in the OpenAPI document by itself). */
// (Unsafe: TypeBox types a union over an array, not a tuple, as never; the schema is the union.)
export const BodySchema = Type.Unsafe<BodyKind>(
  Type.Union(
    BODY_KINDS.map((k) => Type.Literal(k)),
    { description: `The body this runtime serves: ${BODY_KINDS.map((k) => `${k} (${BODIES[k].title})`).join(", ")}` },
  ),
);

/** The envelope's properties (merged into each body's state schema). */
export const envelopeProperties = {
  type: Type.Literal("state"),
  body: BodySchema,
  seq: Type.Integer({ minimum: 0, description: "Sequence number of the runtime cycle that produced these values" }),
  timestamp_ms: Type.Number({ description: "Source cycle time on the runtime's monotonic clock, ms" }),
  epoch_ms: Type.Number({ description: "Source cycle wall-clock time, ms since the Unix epoch" }),
  link: LinkSchema,
};

/** Envelope + body fields as one object schema. Throws (a bug) if a field reuses an envelope name. */
export function stateSchema(fields: ApiObjectSchema, description: string): TObject {
  for (const k of Object.keys(fields.properties)) {
    if (k in envelopeProperties) throw new Error(`body field "${k}" would overwrite the state envelope's "${k}"; rename it`);
  }
  return Type.Object({ ...envelopeProperties, ...fields.properties }, { description });
}

export const HolderSchema = Type.Object(
  {
    owner: Type.String({ description: "Who holds control, as the client named itself" }),
    source: Type.Union([Type.Literal("api"), Type.Literal("lola"), Type.Literal("tny"), Type.Literal("cli"), Type.Literal("fleet")], {
      description: "Which server the holder came through",
    }),
    expires_at_epoch_ms: Type.Number({ description: "When the lease expires unless renewed, ms since the Unix epoch" }),
    expires_at: Type.String({ description: "The same instant as an ISO 8601 string" }),
  },
  { description: "Who holds control and until when" },
);

export const ErrorSchema = Type.Object(
  {
    code: Type.String({ description: "Stable error code, BL_ERR_<AREA>_<WHAT> (docs/errors.md)" }),
    status: Type.Integer({ description: "HTTP status, repeated for clients that only see the body" }),
    message: Type.String({ description: "What went wrong and what to try next" }),
    holder: Type.Optional(HolderSchema),
    problems: Type.Optional(Type.Array(Type.Object({ key: Type.String(), reason: Type.String() }))),
  },
  { description: "Every error answer" },
);

export const LeaseSchema = Type.Object(
  {
    lease_id: Type.String({ description: `Send it in the ${LEASE_HEADER} header with every command, renew and release` }),
    owner: Type.String(),
    source: Type.Literal("api"),
    lease_ms: Type.Integer({ description: "The duration granted; renew before it runs out" }),
    expires_at_epoch_ms: Type.Number(),
    expires_at: Type.String(),
  },
  { description: "A held control lease" },
);

export const AcquireBodySchema = Type.Object(
  {
    owner: Type.String({ minLength: 1, maxLength: 64, description: "Your name, shown to clients that are refused control" }),
    lease_ms: Type.Optional(Type.Integer({ minimum: MIN_LEASE_MS, maximum: MAX_LEASE_MS, description: "Lease duration, ms (default 2000)" })),
  },
  { additionalProperties: false },
);

export const RenewBodySchema = Type.Object(
  {
    lease_ms: Type.Optional(Type.Integer({ minimum: MIN_LEASE_MS, maximum: MAX_LEASE_MS, description: "New duration from now, ms (default 2000)" })),
  },
  { additionalProperties: false },
);

export const LeaseHeadersSchema = Type.Object({
  [LEASE_HEADER]: Type.Optional(Type.String({ description: "Lease id from POST /v1/control" })),
});

export const ControlStatusSchema = Type.Object({
  held: Type.Boolean(),
  holder: Type.Union([HolderSchema, Type.Null()]),
});

const StopCategorySchema = Type.Union([Type.Literal(0), Type.Literal(1)], {
  description: "IEC 60204-1 stop category: 0 cuts at once; 1 reaches a safe posture within a bounded time, then cuts (default per body: GET /v1/estop)",
});
const EstopSourceSchema = Type.String({ minLength: 1, maxLength: 32, description: "Who asks (api, dashboard, cli, …; letters, digits, - and _ are kept); defaults to api" });

export const EstopBodySchema = Type.Object(
  {
    reason: Type.Optional(Type.String({ maxLength: 200, description: "Logged and shown in health's safety_reason" })),
    category: Type.Optional(StopCategorySchema),
    source: Type.Optional(EstopSourceSchema),
  },
  { additionalProperties: false },
);

export const EstopResetBodySchema = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 200, description: "Why it is safe to go on (required; logged)" }),
    source: Type.Optional(EstopSourceSchema),
  },
  { additionalProperties: false },
);

const estopProperties = {
  latched: Type.Boolean({ description: "True from the stop until an explicit reset; while latched nobody gets control" }),
  reason: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.String(), Type.Null()]),
  since_ms: Type.Union([Type.Number(), Type.Null()], { description: "When it latched, ms since the Unix epoch" }),
  category: Type.Union([StopCategorySchema, Type.Null()]),
  phase: Type.Union([Type.Literal("none"), Type.Literal("settling"), Type.Literal("cut")], {
    description: "settling: a category-1 stop is moving to its safe posture; cut: the body is in its safe state",
  }),
};

/** The latch as GET /v1/health's `estop` carries it. */
export const EstopLatchSchema = Type.Object(estopProperties, { description: "The emergency-stop latch (GET /v1/estop)" });
export const EstopStateSchema = Type.Object({ ...estopProperties, default_category: StopCategorySchema });
export const EstopAnswerSchema = Type.Object({ stopped: Type.Literal(true), ...estopProperties, reason: Type.String() });
export const EstopResetAnswerSchema = Type.Object({ ...estopProperties, was_latched: Type.Boolean() });

const Percentiles = Type.Object({ p50: Type.Number(), p99: Type.Number(), max: Type.Number() });

export const FleetStatusSchema = Type.Object(
  {
    url: Type.String({ description: "The NATS server (credentials removed)" }),
    name: Type.String({ description: "This robot's name in the fleet" }),
    connection: Type.Union([Type.Literal("connecting"), Type.Literal("connected"), Type.Literal("disconnected"), Type.Literal("closed")]),
    presence: Type.Union([Type.Literal("pending"), Type.Literal("ok"), Type.Literal("name-taken")], { description: "name-taken: another runtime holds this name in the fleet" }),
    since_epoch_ms: Type.Number({ description: "When the connection entered its current state" }),
    disconnects: Type.Integer(),
    last_error: Type.Union([Type.String(), Type.Null()]),
    published: Type.Object({ state: Type.Integer(), health: Type.Integer(), events: Type.Integer() }),
    estop: Type.Object(
      {
        connection: Type.Union([Type.Literal("connecting"), Type.Literal("connected"), Type.Literal("disconnected"), Type.Literal("closed")]),
        disconnects: Type.Integer(),
        received: Type.Integer({ description: "E-stop requests received" }),
      },
      { description: "The e-stop connection: its own socket to the broker, subscribed to e-stops only (docs/fleet.md)" },
    ),
    requests: Type.Object(
      {
        admitted: Type.Integer(),
        refused: Type.Integer({ description: "Refused and answered (429 BL_ERR_FLEET_RATE_LIMITED, 503 BL_ERR_FLEET_BUSY)" }),
        dropped: Type.Integer({ description: "Refused and not answered (past the refusals' own rate)" }),
        in_flight: Type.Integer(),
        senders: Type.Integer({ description: "Senders tracked one by one" }),
        sheds: Type.Integer({ description: "Floods shed: times the bridge stopped taking requests for a while and dropped the broker's backlog" }),
        shedding: Type.Boolean(),
      },
      { description: "Fleet requests (commands, resets) through the per-sender rate limit; e-stops never pass it" },
    ),
  },
  { description: "The fleet bridge (serve --fleet); losing the broker never affects the body" },
);

export const HealthQuerySchema = Type.Object({
  window_cycles: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: TIMING_RING_CYCLES,
      description: "Percentiles over only this many of the latest cycles (a client that counted cycles between two reads gets that stretch's figures)",
    }),
  ),
});

/** Why the body is in (or on its way to) its safe state, from the one table (src/bodies/safety.ts). */
export const SafetyCodeSchema = Type.Unsafe<SafetyCode>(
  Type.Union(
    SAFETY_CODES.map((k) => Type.Literal(k)),
    { description: `Why the body is in (or on its way to) its safe state: ${SAFETY_CODES.map((k) => `${k} (${SAFETY_TEXT[k]})`).join("; ")}` },
  ),
);

export const HealthSchema = Type.Object({
  body: BodySchema,
  link: LinkSchema,
  safety_code: SafetyCodeSchema,
  safety_reason: Type.Union([Type.String(), Type.Null()], { description: "safety_code in words, with the details (who, what failed); null when commands flow" }),
  cycle: Type.Object({
    nominal_period_ms: Type.Number(),
    cycles: Type.Integer(),
    late_cycles: Type.Integer(),
    late_cycles_own_work: Type.Integer({
      description:
        "Of late_cycles, those the loop's own work made late: the thread was still busy at the deadline plus the late bound (with BODYLINK_LATE_CPU_TIME=1, as benches run it: the CPU time its thread used since the cycle before started would have kept it busy past then even had it never been descheduled). The rest are the machine's: the thread descheduled or woken late",
    }),
    missed_cycles: Type.Integer({
      description:
        "Deadlines that passed without their cycle (the loop fell more than two periods behind and went on from now instead of bursting); cycles + missed_cycles = every deadline since the start",
    }),
    period_ms: Percentiles,
    exec_ms: Percentiles,
    window_cycles: Type.Integer({ description: "How many of the latest cycles the percentiles describe (all the ring holds, up to 2,048, unless ?window_cycles= asks for fewer)" }),
    lateness_ms: Type.Object(Percentiles.properties, { description: "How long after its deadline each cycle started, ms (the wake-up's error plus any stall)" }),
    jitter_p99_ms: Type.Number({ description: "|period − nominal| at the 99th percentile, ms" }),
    gc_collections: Type.Integer({
      description: "Young-generation collections the runtime scheduled between cycles (0 when it leaves them to V8: `serve --gc-every-ms 0`, or a library runtime without youngGcEveryMs)",
    }),
    gc_ms: Type.Object(Percentiles.properties, { description: "Duration of those collections, ms" }),
    core_cpu_ms: Type.Union([Type.Number(), Type.Null()], {
      description: "CPU time the thread that runs the cycle has used, ms (the worker core's own thread; the main thread for an in-thread robot); null where the OS does not report it per thread",
    }),
    core_wakeups: Type.Union([Type.Integer(), Type.Null()], {
      description: "How often the kernel scheduled that thread in since it started (its timeslices: wake-ups, for a core that sleeps between cycles); null where the OS does not report it",
    }),
    core_spun_ms: Type.Number({
      description: "How long that thread has spun before its deadlines, ms (the blocking wake-up's final spin, `serve --core-spin-ms`; 0 on the NAO's core unless asked for)",
    }),
    core_gc_collections: Type.Integer({
      description:
        "Collections V8 started by itself on the thread that runs the cycle (its young generation filled), not the scheduled ones: each one stops the cycle's thread at a moment nobody chose",
    }),
    core_gc_max_ms: Type.Number({ description: "The longest of those pauses, ms" }),
  }),
  errors: Type.Record(Type.String(), Type.Number(), { description: "Cumulative error counters by name" }),
  control: Type.Union([HolderSchema, Type.Null()]),
  estop: EstopLatchSchema,
  sim: Type.Union(
    [
      Type.Object({
        clock: Type.Union([Type.Literal("real-time"), Type.Literal("lockstep")], {
          description: "real-time: simulated time follows the wall clock; lockstep: it advances one cycle per answer of the controlling LoLA client or per POST /v1/sim/step (serve --lockstep)",
        }),
        model: Type.String({ description: "The body under the simulator: the NAO's physics (MuJoCo) or kinematic model; the P7's and TNY-360's kinematic simulators" }),
        time_s: Type.Number({ description: "Simulated time since the simulator started or was last reset, s" }),
        real_time_factor: Type.Number({ description: "Simulated seconds per real second over the last second of real time (0 while simulated time stands still)" }),
      }),
      Type.Null(),
    ],
    { description: "A simulated body's time (docs/simulation.md); null on a real robot" },
  ),
  api: Type.Object({
    subscribers: Type.Integer({ description: "Open state-stream WebSockets" }),
    messages_sent: Type.Integer(),
    messages_skipped: Type.Integer({ description: "Messages not sent to a client because it had not yet taken the previous ones" }),
    send_slice_ms: Type.Object(
      { p99: Type.Number(), max: Type.Number() },
      {
        description: "How long one stretch of sending held the event loop, ms (99th percentile of the last 1,024 stretches, and the longest): the most the stream delays the body's next cycle",
      },
    ),
  }),
  fleet: Type.Optional(Type.Union([FleetStatusSchema, Type.Null()], { description: "null unless the runtime joined a fleet (serve --fleet)" })),
});

export const InfoSchema = Type.Object({
  body: BodySchema,
  api_version: Type.Integer(),
  joint_names: Type.Array(Type.String(), { description: "Order of every joint array in the state" }),
  stream: Type.Object({ path: Type.String(), rate_hz: Type.Number() }),
  lease: Type.Object({
    header: Type.String(),
    min_ms: Type.Integer(),
    max_ms: Type.Integer(),
    default_ms: Type.Integer(),
  }),
});

/** The first message on the stream (before any state). */
export const HelloSchema = Type.Object({
  type: Type.Literal("hello"),
  body: BodySchema,
  api_version: Type.Integer(),
  joint_names: Type.Array(Type.String()),
  rate_hz: Type.Number(),
  epoch_ms: Type.Number({ description: "Server wall clock when the hello was sent" }),
});

export const CommandAnswerSchema = (result: ApiObjectSchema): TObject => Type.Object({ ok: Type.Literal(true), result });
