/**
 * The generated broker configuration (src/fleet/broker-config.ts), read as nats-server reads
 * permissions: a subject is allowed when some allow-pattern matches it (`*` one token, `>` the
 * rest). Least privilege per role, checked subject by subject; the real broker is exercised in
 * closed-fleet.test.ts.
 */
import { describe, expect, it } from "vitest";
import { type BrokerIdentity, inboxPrefixOf, permissionsOf, renderBrokerConfig } from "../../src/fleet/broker-config.js";
import { EVENTS_STREAM } from "../../src/fleet/subjects.js";

/** nats-server's subject matching for an allow-pattern. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}
const allowed = (patterns: readonly string[], subject: string) => patterns.some((p) => matches(p, subject));

const ids: BrokerIdentity[] = [
  { name: "nao-1", role: "robot", nkey: "UROBOT1" },
  { name: "nao-2", role: "robot", nkey: "UROBOT2" },
  { name: "coach", role: "operator", nkey: "UOPERATOR" },
  { name: "viewer", role: "viewer", nkey: "UVIEWER" },
  { name: "admin", role: "admin", nkey: "UADMIN" },
];
const of = (name: string) => permissionsOf(ids.find((i) => i.name === name)!);

describe("who may publish and subscribe to what", () => {
  it("the matcher reads patterns as nats-server does", () => {
    expect(matches("bodylink.*.cmd.health", "bodylink.nao-1.cmd.health")).toBe(true);
    expect(matches("bodylink.*.cmd.health", "bodylink.nao-1.cmd.acquire")).toBe(false);
    expect(matches("_INBOX_coach.>", "_INBOX_coach.abc.1")).toBe(true);
    expect(matches("_INBOX_coach.>", "_INBOX_coach")).toBe(false);
    expect(matches(">", "anything.at.all")).toBe(true);
  });

  it("a robot publishes only its own subjects and keys; never another robot's, never a delete, purge or consumer", () => {
    const p = of("nao-1");
    for (const s of ["bodylink.nao-1.state", "bodylink.nao-1.health", "bodylink.nao-1.events", "$KV.bodylink_robots.nao-1", "$KV.bodylink_leases.nao-1", "bodylink.estop", "bodylink.nao-2.estop"])
      expect(allowed(p.publish, s), s).toBe(true);
    for (const s of [
      "bodylink.nao-2.state",
      "bodylink.nao-2.events",
      "$KV.bodylink_robots.nao-2",
      "$KV.bodylink_leases.nao-2",
      "bodylink.nao-2.cmd.acquire",
      "bodylink.nao-2.cmd.move-joints",
      `$JS.API.STREAM.DELETE.${EVENTS_STREAM}`,
      "$JS.API.STREAM.DELETE.KV_bodylink_robots",
      "$JS.API.STREAM.PURGE.KV_bodylink_leases",
      "$JS.API.STREAM.UPDATE.KV_bodylink_robots",
      "$JS.API.CONSUMER.CREATE.BODYLINK_EVENTS",
      "$JS.API.CONSUMER.DURABLE.CREATE.BODYLINK_EVENTS.x",
      "_INBOX_coach.abc",
    ])
      expect(allowed(p.publish, s), s).toBe(false);
    expect(p.allowResponses).toBe(true); // answers only requests it received
    expect(allowed(p.subscribe, "bodylink.nao-1.cmd.acquire")).toBe(true);
    expect(allowed(p.subscribe, "bodylink.nao-2.cmd.acquire")).toBe(false);
    expect(allowed(p.subscribe, "_INBOX_coach.abc")).toBe(false);
    expect(allowed(p.subscribe, "_INBOX.abc")).toBe(false);
  });

  it("a viewer reads (state, health, events, buckets, read commands) and can neither command, stop, reset nor touch JetStream beyond reads", () => {
    const p = of("viewer");
    for (const s of [
      "bodylink.nao-1.cmd.health",
      "bodylink.nao-1.cmd.state",
      "$JS.API.INFO",
      "$JS.API.STREAM.INFO.KV_bodylink_robots",
      "$JS.API.DIRECT.GET.KV_bodylink_robots.$KV.bodylink_robots.nao-1",
    ])
      expect(allowed(p.publish, s), s).toBe(true);
    for (const s of [
      "bodylink.estop",
      "bodylink.reset",
      "bodylink.nao-1.reset",
      "bodylink.nao-1.cmd.acquire",
      "$KV.bodylink_robots.nao-1",
      "$JS.API.STREAM.DELETE.KV_bodylink_robots",
      "$JS.API.STREAM.CREATE.KV_bodylink_robots",
      "$JS.API.CONSUMER.CREATE.KV_bodylink_robots",
      "bodylink.nao-1.health",
    ])
      expect(allowed(p.publish, s), s).toBe(false);
    expect(allowed(p.subscribe, "bodylink.nao-1.state")).toBe(true);
    expect(allowed(p.subscribe, "bodylink.estop")).toBe(false); // cannot hear (or answer) e-stops
    expect(allowed(p.subscribe, "bodylink.nao-1.cmd.acquire")).toBe(false);
    expect(p.allowResponses).toBe(false);
  });

  it("an operator commands, stops and resets every robot (the robots check its signature) but writes no robot's subjects, keys or streams", () => {
    const p = of("coach");
    for (const s of ["bodylink.nao-1.cmd.acquire", "bodylink.nao-2.cmd.move-joints", "bodylink.estop", "bodylink.reset", "bodylink.nao-1.reset"]) expect(allowed(p.publish, s), s).toBe(true);
    for (const s of ["bodylink.nao-1.state", "bodylink.nao-1.events", "$KV.bodylink_robots.nao-1", "$JS.API.STREAM.DELETE.BODYLINK_EVENTS"]) expect(allowed(p.publish, s), s).toBe(false);
    expect(allowed(p.subscribe, "bodylink.estop")).toBe(false);
  });

  it("every identity's replies come to an inbox only it may subscribe to", () => {
    for (const id of ids.filter((i) => i.role !== "admin")) {
      const p = permissionsOf(id);
      expect(allowed(p.subscribe, `${inboxPrefixOf(id.name)}.x.1`), id.name).toBe(true);
      for (const other of ids.filter((o) => o.name !== id.name)) expect(allowed(p.subscribe, `${inboxPrefixOf(other.name)}.x.1`), `${id.name} reads ${other.name}'s inbox`).toBe(false);
    }
  });

  it("only the admin deletes streams and buckets", () => {
    for (const id of ids) expect(allowed(permissionsOf(id).publish, `$JS.API.STREAM.DELETE.${EVENTS_STREAM}`), id.name).toBe(id.role === "admin");
  });
});

describe("the file", () => {
  it("lists every identity by public NKey with its permissions, and no secret", () => {
    const text = renderBrokerConfig(ids, { listen: "0.0.0.0:4222", storeDir: "/var/lib/bodylink-nats" });
    expect(text).toMatch(/^listen: "0\.0\.0\.0:4222"$/m);
    expect(text).toMatch(/^jetstream \{ store_dir: "\/var\/lib\/bodylink-nats" \}$/m);
    for (const id of ids) expect(text).toContain(`{ nkey: "${id.nkey}", permissions: {`);
    expect(text.match(/allow_responses/g)).toHaveLength(2); // the two robots
    expect(text).not.toMatch(/password|seed|PRIVATE/i);
  });
});
