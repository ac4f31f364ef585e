import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { SimClock } from "../../src/runtime/clock.js";
const clock = new SimClock();
const r = await NaoRobot.create({ clock });
await r.configure();
console.log("prefs", r.prefs?.bodyId, r.prefs?.bodyVersion);
r.loop.step(); console.log("after step sync seq", r.state.seq, r.state.valid);
await Promise.resolve(); console.log("after microtask", r.state.seq);
await new Promise((res) => setImmediate(res)); console.log("after immediate", r.state.seq);
for (let i = 0; i < 3; i++) { await clock.advance(12); r.loop.step(); await new Promise((res) => setImmediate(res)); }
console.log(r.state.seq, r.state.safetyReason, Array.from(r.state.stiffness.slice(0,3)), Array.from(r.state.position.slice(0,3)), r.state.accelerometer, r.state.battery);
await r.start(); console.log("running", r.loop.running);
await r.stop();
