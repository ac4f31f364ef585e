// A hostile TNY-360 API client (bench/isolation.bench.ts, the TNY-360 flood phase), in a process of
// its own: one connection per frame given (stdin's first line: a JSON array of hex frames; a 64 KiB
// frame is too long for an argument; at most the robot's 3 connections), each
// sending its frame, msg_id patched, as fast as the socket takes it (up to 256 KiB queued in this
// client) while it reads every reply; a connection the server closes is opened again.
// "stop" on stdin: stop sending, wait up to 1 s for the replies, print one JSON line and exit.
import { createInterface } from "node:readline";
import WebSocket from "ws";

const url = process.argv[2];
const HIGH_WATER = 1 << 18;
let frames = [];
const report = { sent: 0, sentBytes: 0, replies: 0, byStatus: {}, reconnects: 0, closeCodes: {} };
let running = true;
let opened = 0;

function connection(frame) {
  const buf = Buffer.from(frame);
  let id = 0;
  let ws = null;
  const open = () => {
    ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 20 });
    ws.binaryType = "nodebuffer";
    ws.on("open", () => {
      if (++opened === frames.length) console.log("open");
      pump();
    });
    ws.on("message", (data) => {
      report.replies++;
      const status = data.length >= 6 ? data[4] | (data[5] << 8) : -1;
      report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    });
    ws.on("error", () => {});
    ws.on("close", (code) => {
      report.closeCodes[code] = (report.closeCodes[code] ?? 0) + 1;
      if (running) {
        report.reconnects++;
        setTimeout(open, 10);
      }
    });
  };
  const pump = () => {
    if (!running || ws.readyState !== WebSocket.OPEN) return;
    // a turn's worth at most (the server may read as fast as this writes): then the replies, the other connections
    for (let bytes = 0; bytes < HIGH_WATER && ws.bufferedAmount < HIGH_WATER; bytes += buf.length) {
      id = (id + 1) & 0xffff;
      buf[2] = id & 0xff;
      buf[3] = id >> 8;
      ws.send(buf, { binary: true }); // masked into a copy: buf is free again at once
      report.sent++;
      report.sentBytes += buf.length;
    }
    setImmediate(pump);
  };
  open();
  return () => ws?.terminate();
}

let closers = [];
createInterface({ input: process.stdin }).on("line", (line) => {
  if (frames.length === 0) {
    frames = JSON.parse(line).map((h) => Buffer.from(h, "hex"));
    closers = frames.map(connection);
    return;
  }
  if (line.trim() !== "stop") return;
  running = false;
  setTimeout(() => {
    for (const close of closers) close();
    console.log(JSON.stringify(report));
    process.exit(0);
  }, 1000);
});
