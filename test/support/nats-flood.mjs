/**
 * A request flood on a NATS broker, in a process of its own (so the flood never shares an event
 * loop with what it floods, or with the test's e-stop): RATE requests a second on SUBJECT, each
 * with a reply subject as nats.js requests have, for DURATION_MS; then one JSON line:
 * { sent, seconds, rate, replies, codes } (codes: the replies' error codes, counted).
 * Bounded in count (RATE × DURATION_MS / 1000) and time; loopback brokers only.
 *
 * It speaks NATS's text protocol on a raw socket (CONNECT, SUB, PUB) from a buffer built once: a
 * nats.js client spends ~10 µs of JS per publish, which on a shared 2-core VM caps it near 20k/s;
 * this writes 1,000 requests per write(2) and reaches 90k/s (docs/fleet.md, "A stop no queue can hold").
 *
 *   node test/support/nats-flood.mjs nats://127.0.0.1:PORT SUBJECT RATE DURATION_MS [PAYLOAD_BYTES [SEED_FILE INBOX_PREFIX]]
 *
 * With SEED_FILE it logs in as that NKey identity (a closed fleet's viewer: `fleet init`), signing
 * the broker's nonce, and takes replies under INBOX_PREFIX (the identity's own, `_INBOX_NAME`).
 *
 * Prints "flooding" when the first batch went out.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { nkeys } from "@nats-io/transport-node";

const [url, subject, rateArg, durationArg, payloadArg, seedFile, inboxPrefix] = process.argv.slice(2);
const u = new URL(url);
if (!["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) throw new Error(`nats-flood: loopback brokers only, not ${u.hostname}`);
const rate = Number(rateArg);
const durationMs = Number(durationArg);
const total = Math.floor((rate * durationMs) / 1000);
const TICK_MS = 5;
const BATCH = 1000;
const inbox = `${inboxPrefix ?? "_INBOX"}.flood${process.pid}`;

// One batch of BATCH requests, each with its own reply subject (one sender: the inbox prefix).
const lines = [];
const payload = "x".repeat(Number(payloadArg ?? 0));
for (let i = 0; i < BATCH; i++) lines.push(`PUB ${subject} ${inbox}.${i} ${payload.length}\r\n${payload}\r\n`);
const batch = Buffer.from(lines.join(""));
const offsets = [0];
for (const l of lines) offsets.push(offsets[offsets.length - 1] + Buffer.byteLength(l));

const sock = connect(Number(u.port), u.hostname);
let replies = 0;
const codes = {};
let tail = "";
let info = null;
let gotInfo;
const infoP = new Promise((r) => {
  gotInfo = r;
});
sock.on("data", (d) => {
  if (info === null) {
    const s = d.toString("latin1");
    const m = /^INFO (\{.*\}) *\r\n/.exec(s); // nats-server writes "INFO {…} \r\n"
    if (m) {
      info = JSON.parse(m[1]);
      gotInfo();
    }
  }
  const s = tail + d.toString("latin1");
  // Count each reply once (MSG lines), keep an unfinished line for the next chunk.
  const cut = s.lastIndexOf("\n");
  tail = s.slice(cut + 1);
  for (const m of s.slice(0, cut + 1).matchAll(/^MSG |"code":"([A-Z_]+)"|^PING/gm)) {
    if (m[0] === "MSG ") replies++;
    else if (m[0] === "PING") sock.write("PONG\r\n");
    else codes[m[1]] = (codes[m[1]] ?? 0) + 1;
  }
});
await new Promise((resolve, reject) => {
  sock.once("connect", resolve);
  sock.once("error", reject);
});
await infoP;
const auth = {};
if (seedFile) {
  const kp = nkeys.fromSeed(new TextEncoder().encode(readFileSync(seedFile, "utf8").trim()));
  auth.nkey = kp.getPublicKey();
  auth.sig = Buffer.from(kp.sign(new TextEncoder().encode(info.nonce))).toString("base64url");
}
sock.write(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, headers: false, no_responders: false, name: "bodylink test flood", ...auth })}\r\nSUB ${inbox}.* 1\r\nPING\r\n`);

let sent = 0;
const t0 = performance.now();
let told = false;
await new Promise((resolve) => {
  const tick = () => {
    const elapsed = performance.now() - t0;
    // Catch up to the schedule, but never more than 200 ms worth at once.
    const due = Math.min(total, Math.floor((rate * Math.min(elapsed + TICK_MS, durationMs)) / 1000), sent + Math.ceil(rate / 5));
    while (sent < due) {
      const i = sent % BATCH;
      const n = Math.min(BATCH - i, due - sent);
      sock.write(batch.subarray(offsets[i], offsets[i + n]));
      sent += n;
    }
    if (!told) {
      told = true;
      console.log("flooding");
    }
    if (sent >= total || elapsed >= durationMs) resolve();
    else setTimeout(tick, TICK_MS);
  };
  tick();
});
const seconds = (performance.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 300)); // the last replies
console.log(JSON.stringify({ sent, seconds, rate: sent / seconds, replies, codes }));
sock.end();
