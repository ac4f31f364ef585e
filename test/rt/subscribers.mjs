// Child process for test/rt/isolation.test.ts: opens N robot-API stream subscribers and keeps them
// reading until killed (a separate process, so the test's own LoLA controller keeps its CPU).
import WebSocket from "ws";
const [url, n] = [process.argv[2], Number(process.argv[3])];
let open = 0;
for (let i = 0; i < n; i++) {
  const ws = new WebSocket(url);
  ws.on("open", () => {
    if (++open === n) process.stdout.write("open\n");
  });
  ws.on("message", () => {});
  ws.on("error", () => {});
}
setInterval(() => process.stdout.write(`open ${open}\n`), 1000);
