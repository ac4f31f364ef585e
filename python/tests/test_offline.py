"""The client's rules without a runtime: a scripted stream server (websockets, loopback, free port).

What it proves: None before the first state, for a state that does not fit the body, while the
link is lost, and once the newest state is stale (also when it arrives late); reconnects; and the
errors for nothing listening and for a peer that never says hello. Plus the builders on golden messages.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import unittest
from typing import Any, Optional

import websockets.server
from websockets.legacy.server import WebSocketServerProtocol

import bodylink
from bodylink import ArmJointState, ArmMotorState, BodylinkError, P7Client
from bodylink import models

from .support import wait_until

P7_HELLO = {"type": "hello", "body": "p7", "api_version": 1, "joint_names": [f"joint{i}" for i in range(1, 8)], "rate_hz": 20, "epoch_ms": 0}


def p7_state(seq: int, timestamp_ms: float, **over: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        "type": "state",
        "body": "p7",
        "seq": seq,
        "timestamp_ms": timestamp_ms,
        "epoch_ms": 1_700_000_000_000 + timestamp_ms,
        "link": "ok",
        "joint_positions": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
        "joint_velocities": [0, 0, 0, 0, 0, 0, 0],
        "joint_efforts": [1, 2, 3, 4, 5, 6, 7.5],
        "motor_temperatures": [25, 25, 25, 25, 25, 25, 25],
        "error_ids": [0, 0, 0, 0, 0, 0, 3],
        "imu": {"angular_velocity": [0, 0, 0.5], "linear_acceleration": [0, 0, 9.81]},
    }
    m.update(over)
    return m


class ScriptedStream:
    """A stream server in its own thread: each connection gets the hello, then whatever ``send()`` queues."""

    def __init__(self, hello: Optional[dict[str, Any]] = P7_HELLO) -> None:
        self.hello = hello
        self.connections = 0
        self._clients: set[WebSocketServerProtocol] = set()
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(started,), daemon=True)
        self._thread.start()
        started.wait(5)
        self.url = f"http://127.0.0.1:{self.port}"

    def _main(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def handler(ws: WebSocketServerProtocol, path: str) -> None:
            self.connections += 1
            self._clients.add(ws)
            try:
                if self.hello is not None:
                    await ws.send(json.dumps(self.hello))
                await ws.wait_closed()
            finally:
                self._clients.discard(ws)

        self.server = self.loop.run_until_complete(websockets.server.serve(handler, "127.0.0.1", 0))
        self.port = next(iter(self.server.sockets)).getsockname()[1]
        started.set()
        self.loop.run_forever()

    def send(self, msg: dict[str, Any]) -> None:
        async def go() -> None:
            for ws in list(self._clients):
                await ws.send(json.dumps(msg))

        asyncio.run_coroutine_threadsafe(go(), self.loop).result(5)

    def drop_clients(self) -> None:
        async def go() -> None:
            for ws in list(self._clients):
                await ws.close()

        asyncio.run_coroutine_threadsafe(go(), self.loop).result(5)

    def stop(self) -> None:
        async def go() -> None:
            self.server.close()
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(go(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


class StreamRules(unittest.TestCase):
    def setUp(self) -> None:
        self.server = ScriptedStream()
        self.addCleanup(self.server.stop)
        self.t0 = 1000.0

    def now(self) -> float:
        """A stamp that advances with real time from t0, as a runtime's clock does (so a state sent
        later is not late: only the test that means it sends a stale stamp; a loaded machine's delays
        between sends must not make the others stale)."""
        if not hasattr(self, "_start"):
            self._start = time.monotonic()
        return self.t0 + (time.monotonic() - self._start) * 1000

    def connect(self, stale_after_s: float = 2.0) -> P7Client:
        # 2 s unless staleness is what a test checks: a loaded machine may pause this process longer than 0.25 s.
        c = bodylink.connect(self.server.url, body="p7", stale_after_s=stale_after_s)
        self.addCleanup(c.close)
        return c

    def test_none_before_the_first_state_then_a_snapshot(self) -> None:
        c = self.connect()  # no state follows the hello: connect returns after a second
        self.assertIsNone(c.get_arm_joint_state())
        self.assertIsNone(c.get_arm_motor_state())
        self.assertIsNone(c.get_imu_state())
        self.server.send(p7_state(1, self.t0))
        self.assertTrue(wait_until(lambda: c.get_arm_joint_state() is not None, 2))
        self.assertEqual(c.get_arm_joint_state(), ArmJointState((0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7), (0.0,) * 7, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.5), 1, self.t0, 1_700_000_000_000 + self.t0))
        self.assertEqual(c.get_arm_motor_state(), ArmMotorState((25.0,) * 7, (0, 0, 0, 0, 0, 0, 3), 1, self.t0, 1_700_000_000_000 + self.t0))
        # One message, one snapshot object.
        self.assertIs(c.get_arm_joint_state(), c.get_arm_joint_state())

    def test_a_state_that_does_not_fit_the_body_is_none_per_model(self) -> None:
        c = self.connect()
        self.server.send(p7_state(1, self.now(), joint_efforts=[1, 2, 3]))
        self.assertTrue(wait_until(lambda: c.get_arm_motor_state() is not None, 2))
        self.assertIsNone(c.get_arm_joint_state())  # 3 efforts, not 7
        self.assertIsNotNone(c.get_imu_state())
        self.server.send(p7_state(2, self.now(), error_ids=[0, 0, 0, 0, 0, 0, -1]))
        self.assertTrue(wait_until(lambda: (s := c.get_arm_joint_state()) is not None and s.seq == 2, 2))
        self.assertIsNone(c.get_arm_motor_state())  # a negative error id
        self.server.send(p7_state(3, self.now(), imu={"angular_velocity": [0, 0, None], "linear_acceleration": [0, 0, 9.8]}))
        self.assertTrue(wait_until(lambda: (s := c.get_arm_joint_state()) is not None and s.seq == 3, 2))
        self.assertIsNone(c.get_imu_state())

    def test_none_while_the_link_is_lost(self) -> None:
        c = self.connect()
        self.server.send(p7_state(1, self.now(), link="lost"))
        time.sleep(0.2)
        self.assertIsNone(c.get_arm_joint_state())
        self.server.send(p7_state(2, self.now(), link="degraded"))
        self.assertTrue(wait_until(lambda: c.get_arm_joint_state() is not None, 2))

    def test_none_once_stale_and_for_a_state_that_arrives_late(self) -> None:
        c = self.connect(stale_after_s=0.25)  # the default
        self.server.send(p7_state(1, self.t0))
        self.assertTrue(wait_until(lambda: c.age_s() != float("inf"), 2))  # arrived (fresh then: the other tests show it)
        self.assertTrue(wait_until(lambda: c.get_arm_joint_state() is None, 1))
        self.assertGreater(c.age_s(), 0.25)
        # Sent now but stamped as if 0.2 s after the first: it spent ~0.8 s somewhere, stale on arrival.
        time.sleep(0.5)
        self.server.send(p7_state(2, self.t0 + 200))
        time.sleep(0.1)
        self.assertIsNone(c.get_arm_joint_state())

    def test_reconnects_by_itself_and_says_none_meanwhile(self) -> None:
        c = self.connect()
        self.server.send(p7_state(1, self.t0))
        self.assertTrue(wait_until(lambda: c.get_arm_joint_state() is not None, 2))
        self.server.drop_clients()
        self.assertTrue(wait_until(lambda: not c.connected, 2))
        self.assertIsNone(c.get_arm_joint_state())
        self.assertTrue(wait_until(lambda: c.connected and self.server.connections == 2, 5))
        self.server.send(p7_state(2, 5000.0))  # a new connection may be a new runtime: another clock origin
        self.assertTrue(wait_until(lambda: (s := c.get_arm_joint_state()) is not None and s.seq == 2, 2))


class ConnectErrors(unittest.TestCase):
    def test_nothing_listening_fails_at_once(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        t = time.monotonic()
        with self.assertRaises(BodylinkError) as e:
            bodylink.connect(f"http://127.0.0.1:{port}")
        self.assertEqual(e.exception.code, "BL_ERR_CLI_NO_RUNTIME")
        self.assertLess(time.monotonic() - t, 2)

    def test_a_peer_that_never_says_hello_times_out(self) -> None:
        server = ScriptedStream(hello=None)
        self.addCleanup(server.stop)
        with self.assertRaises(BodylinkError) as e:
            bodylink.connect(server.url, connect_timeout_s=0.5)
        self.assertEqual(e.exception.code, "BL_ERR_CLI_NO_RUNTIME")

    def test_a_body_this_package_does_not_know(self) -> None:
        server = ScriptedStream(hello=dict(P7_HELLO, body="hexapod"))
        self.addCleanup(server.stop)
        with self.assertRaises(BodylinkError) as e:
            bodylink.connect(server.url)
        self.assertEqual(e.exception.code, "BL_ERR_CLIENT_WRONG_BODY")
        self.assertIn("hexapod", e.exception.message)

    def test_bad_urls(self) -> None:
        with self.assertRaises(ValueError):
            bodylink.connect("ftp://robot")
        with self.assertRaises(ValueError):
            bodylink.connect("http://127.0.0.1:1", body="hexapod")  # type: ignore[call-overload]


class Builders(unittest.TestCase):
    """Golden messages → snapshots, and the edge values that make a model None."""

    S = models.Stamp(7, 1.5, 2.5)

    def test_number_rules(self) -> None:
        self.assertEqual(models.floats([1, 2.5, -0.0], 3), (1.0, 2.5, -0.0))
        for bad in ([1, 2], [1, 2, 3, 4], [1, float("nan"), 3], [1, float("inf"), 3], [1, True, 3], [1, "2", 3], None, "abc"):
            self.assertIsNone(models.floats(bad, 3), bad)
        self.assertEqual(models.ints([0, 3, 2**31], 3), (0, 3, 2**31))
        for bad_ids in ([0, 1.5, 0], [0, -1, 0], [0, False, 0]):
            self.assertIsNone(models.ints(bad_ids, 3), bad_ids)

    def test_stamp(self) -> None:
        self.assertEqual(models.stamp({"seq": 3, "timestamp_ms": 1.25, "epoch_ms": 9}), models.Stamp(3, 1.25, 9.0))
        self.assertIsNone(models.stamp({"seq": 3.5, "timestamp_ms": 1.25, "epoch_ms": 9}))
        self.assertIsNone(models.stamp({"seq": 3, "epoch_ms": 9}))

    def test_nao_golden(self) -> None:
        m: dict[str, Any] = {
            "battery": {"charge": 0.982, "current": -0.908, "temperature": 2.8, "charging": False, "status": -32724},
            "touch": {"chest_button": True, "head_front": False, "head_middle": False, "head_rear": False, "left_foot": False, "left_hand": False, "right_foot": True, "right_hand": False},
            "foot_weight": {"left": 3.25, "right": 2.0},
            "center_of_pressure": {"left": [0.02, 0.004], "right": [0.03, -0.004]},
            "sonar": [1.6, 1.67],
        }
        self.assertEqual(models.battery_state(m, self.S), models.BatteryState(0.982, -0.908, 2.8, False, -32724, 7, 1.5, 2.5))
        t = models.touch_state(m, self.S)
        assert t is not None
        self.assertEqual((t.chest_button, t.right_foot, t.left_foot), (True, True, False))
        self.assertEqual(models.foot_state(m, self.S), models.FootState(3.25, 2.0, (0.02, 0.004), (0.03, -0.004), 7, 1.5, 2.5))
        self.assertEqual(models.sonar_state(m, self.S), models.SonarState(1.6, 1.67, 7, 1.5, 2.5))
        self.assertIsNone(models.battery_state({"battery": {**m["battery"], "charging": 0}}, self.S))
        self.assertIsNone(models.nao_joint_state({"joint_positions": [0] * 25}, self.S))

    def test_nao_joints_by_name(self) -> None:
        m: dict[str, Any] = {k: [float(i) + 0.5 * j for i in range(26)] for j, k in enumerate(["joint_positions", "joint_velocities", "joint_currents", "joint_stiffness"])}
        m["joint_positions"][8] = m["joint_positions"][14] = -0.25  # the one hip yaw-pitch motor, read twice
        s = models.nao_joint_state(m, self.S)
        assert s is not None
        self.assertEqual(len(models.NAO_JOINT_NAMES), 26)
        self.assertEqual(s.joint("HeadPitch"), models.NaoJoint(1.0, 1.5, 2.0, 2.5))
        self.assertEqual(s.joint("RHand").angle, 25.0)
        self.assertEqual(s.joint("RHipYawPitch").angle, s.joint("LHipYawPitch").angle)
        with self.assertRaises(KeyError):
            s.joint("Tail")

    def test_tny_efforts_may_be_null_on_a_real_robot(self) -> None:
        m: dict[str, Any] = {"joint_positions": [0] * 14, "joint_targets": [0] * 14, "joint_velocities": [0] * 14, "joint_enabled": [True] * 14, "joint_efforts": None}
        j = models.tny_joint_state(m, self.S)
        assert j is not None
        self.assertIsNone(j.efforts)
        m["joint_efforts"] = [0] * 13
        self.assertIsNone(models.tny_joint_state(m, self.S))


if __name__ == "__main__":
    unittest.main()
