// A raw `ws` echo server on a worker thread of its own (bench/tny.bench.ts): the floor for the
// TNY-360 API server in serve's real-time core thread, measured with the same client loop.
import { parentPort } from "node:worker_threads";
import { WebSocketServer } from "ws";

const echo = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
echo.on("listening", () => parentPort.postMessage(echo.address().port));
echo.on("connection", (ws) => ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary })));
