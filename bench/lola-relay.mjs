/**
 * The floor of `npm run bench -- lola-upstream`: a raw relay that does nothing but copy. It
 * connects to the upstream LoLA socket (argv[2]) as a client, serves one client on argv[3], and
 * writes every chunk it reads from the upstream to that client as it is (one write, no decoding,
 * no cycle, nothing sent upstream). Whatever latency it adds is what two process wake-ups and two
 * socket hops cost on this machine: no LoLA proxy can beat it. Like the proxy's core thread, it
 * asks for nice -10 (kept as it is where not allowed), so both get the same scheduler. Prints
 * "relay ready" when both sockets are up.
 */
import { rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { setPriority } from "node:os";

try {
  setPriority(0, -10);
} catch {
  // unprivileged: as the proxy's core, it stays as it is
}

const [upPath, downPath] = process.argv.slice(2);
let client = null;
const server = createServer((s) => {
  s.on("error", () => {});
  s.on("data", () => {}); // commands are not forwarded: the floor copies one way only
  client = s;
});
rmSync(downPath, { force: true });
server.listen(downPath, () => {
  const up = connect(upPath);
  up.on("data", (b) => {
    if (client?.writable && client.writableLength === 0) client.write(b);
  });
  up.on("error", (e) => {
    console.error(`relay: ${e.message}`);
    process.exit(1);
  });
  up.once("connect", () => console.log("relay ready"));
});
process.on("SIGINT", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
