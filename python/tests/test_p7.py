"""The Python client against a real ``bodylink serve --body p7``: the seed's getters, control, commands, e-stop, asyncio."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import time
import unittest

import bodylink
import bodylink.aio
from bodylink import ArmJointState, ArmMotorState, BodylinkError, ImuState, P7Client

from .support import LIVE_S, STALE_S, ModuleRuntime, Runtime, assert_refused_while_held, run_example, wait_until

RT = ModuleRuntime("p7")
setUpModule, tearDownModule = RT.start, RT.stop


def url() -> str:
    return RT.url


HOME = [0.0] * 7


class SeedGetters(unittest.TestCase):
    """Seed 002's three lines, unchanged, and the models' shape."""

    def setUp(self) -> None:
        self.client = bodylink.connect(url(), body="p7", stale_after_s=STALE_S)
        self.addCleanup(self.client.close)

    def test_runs_on_the_arm_asked_for(self) -> None:
        # BODYLINK_TEST_SIM=physics: the MuJoCo arm (test/python/client.test.ts runs this module on it too).
        self.assertEqual(self.client.fetch_health()["sim"]["model"], os.environ.get("BODYLINK_TEST_SIM", "kinematic"))

    def test_the_seeds_three_getter_lines(self) -> None:
        client = self.client
        joint_state = client.get_arm_joint_state()  # ArmJointState | None
        motor_state = client.get_arm_motor_state()  # ArmMotorState | None
        imu_state = client.get_imu_state()  # ImuState | None
        assert joint_state is not None and motor_state is not None and imu_state is not None
        self.assertIsInstance(joint_state, ArmJointState)
        self.assertIsInstance(motor_state, ArmMotorState)
        self.assertIsInstance(imu_state, ImuState)
        for t in (joint_state.angles, joint_state.velocities, joint_state.efforts, motor_state.motor_temperatures):
            self.assertIsInstance(t, tuple)
            self.assertEqual(len(t), 7)
            self.assertTrue(all(isinstance(v, float) and math.isfinite(v) for v in t))
        self.assertEqual(len(motor_state.error_ids), 7)
        self.assertTrue(all(type(v) is int for v in motor_state.error_ids))
        self.assertEqual(len(imu_state.angular_velocity), 3)
        self.assertEqual(len(imu_state.linear_acceleration), 3)
        # Gravity, in the arm_imu frame, is in the reading.
        self.assertAlmostEqual(math.hypot(*imu_state.linear_acceleration), 9.8, delta=0.3)
        # The field order is the vendor's: the first three positional fields.
        self.assertEqual([f.name for f in dataclasses.fields(ArmJointState)][:3], ["angles", "velocities", "efforts"])
        self.assertEqual([f.name for f in dataclasses.fields(ArmMotorState)][:2], ["motor_temperatures", "error_ids"])
        self.assertEqual([f.name for f in dataclasses.fields(ImuState)][:2], ["angular_velocity", "linear_acceleration"])

    def test_snapshots_are_frozen(self) -> None:
        s = self.client.get_arm_joint_state()
        assert s is not None
        with self.assertRaises(dataclasses.FrozenInstanceError):
            s.angles = (1.0,) * 7  # type: ignore[misc]
        with self.assertRaises(TypeError):
            s.angles[0] = 1.0  # type: ignore[index]

    def test_snapshots_carry_the_runtimes_stamp_and_advance(self) -> None:
        first = self.client.get_arm_joint_state()
        assert first is not None
        self.assertGreater(first.seq, 0)
        self.assertLess(abs(first.epoch_ms - time.time() * 1000), 5000)
        first_seq = first.seq
        self.assertTrue(wait_until(lambda: (s := self.client.get_arm_joint_state()) is not None and s.seq > first_seq, LIVE_S))
        later = self.client.get_arm_joint_state()
        assert later is not None
        self.assertGreater(later.timestamp_ms, first.timestamp_ms)
        # The three getters of one message share its stamp.
        m, i = self.client.get_arm_motor_state(), self.client.get_imu_state()
        if m is not None and i is not None and m.seq == i.seq:
            self.assertEqual(m.timestamp_ms, i.timestamp_ms)

    def test_none_after_close(self) -> None:
        c = bodylink.connect(url(), stale_after_s=STALE_S)
        assert isinstance(c, P7Client)  # the hello picked it (and mypy narrows on it)
        self.assertIsNotNone(c.get_arm_joint_state())
        c.close()
        self.assertIsNone(c.get_arm_joint_state())
        self.assertIsNone(c.get_arm_motor_state())
        self.assertIsNone(c.get_imu_state())
        c.close()  # idempotent

    def test_the_hello_picks_the_client_and_a_wrong_body_is_refused(self) -> None:
        self.assertEqual(self.client.body, "p7")
        self.assertEqual(self.client.joint_names, tuple(f"joint{i}" for i in range(1, 8)))
        with self.assertRaises(BodylinkError) as e:
            bodylink.connect(url(), body="nao", stale_after_s=STALE_S)
        self.assertEqual(e.exception.code, "BL_ERR_CLIENT_WRONG_BODY")
        self.assertIn("serves a p7 body", str(e.exception))


class Control(unittest.TestCase):
    def setUp(self) -> None:
        self.arm = bodylink.connect(url(), body="p7", owner="py-test", stale_after_s=STALE_S)
        self.addCleanup(self.arm.close)

    def test_take_control_move_see_it_release(self) -> None:
        target = [0.3, -0.3, 0.0, -0.6, 0.0, 0.2, 0.0]
        # The default 2 s lease. With a 500 ms one (renewed every ~170 ms by a background thread) a full-suite
        # run on 2 saturated cores once never saw the NAO move in 60 s: most likely a renewal came too late.
        with self.arm.acquire_control(lease_ms=2000) as control:
            self.assertTrue(control.active)
            holder = self.arm.get_control()
            assert holder is not None
            self.assertEqual(holder.owner, "py-test")
            r = self.arm.move_joints(target, speed=2.0)
            self.assertGreater(r.eta_s, 0)
            self.assertEqual(len(r.speed_rad_s), 7)

            def arrived() -> bool:
                s = self.arm.get_arm_joint_state()
                return s is not None and all(abs(a - t) < 1e-3 for a, t in zip(s.angles, target))

            # A 500 ms lease outlives the move only because it is renewed in the background.
            self.assertTrue(wait_until(arrived, LIVE_S), self.arm.get_arm_joint_state())
            self.assertTrue(control.active)
            self.arm.move_joints(HOME, speed=2.0)
            self.assertTrue(wait_until(lambda: (s := self.arm.get_arm_joint_state()) is not None and max(abs(a) for a in s.angles) < 1e-3, LIVE_S))
        self.assertFalse(control.active)
        self.assertIsNone(self.arm.get_control())
        with self.assertRaises(BodylinkError) as e:
            self.arm.move_joints(HOME)
        self.assertEqual(e.exception.code, "BL_ERR_AUTH_REQUIRED")

    def test_refused_while_another_client_holds_control_with_the_holder_named(self) -> None:
        assert_refused_while_held(self, url(), self.arm, "alice")

    def test_a_target_outside_the_limits_is_refused_with_its_code(self) -> None:
        with self.arm.acquire_control(lease_ms=1000):
            with self.assertRaises(BodylinkError) as e:
                self.arm.move_joints([10.0, 0, 0, 0, 0, 0, 0])
            self.assertEqual(e.exception.code, "BL_ERR_CMD_INVALID")
            self.assertEqual(e.exception.status, 400)
            with self.assertRaises(BodylinkError) as e:
                self.arm.move_joints([0.0] * 6)
            self.assertEqual(e.exception.code, "BL_ERR_API_BAD_REQUEST")

    def test_emergency_stop_revokes_the_lease_and_latches_until_reset(self) -> None:
        lost: list[str] = []
        self.arm.on_control_lost(lost.append)
        control = self.arm.acquire_control(lease_ms=1000)
        try:
            stop = self.arm.emergency_stop("python test")
            self.assertTrue(stop.latched)
            self.assertFalse(control.active)
            self.assertIn("emergency stop", control.lost_reason or "")
            self.assertEqual(len(lost), 1)
            self.assertTrue(self.arm.get_estop().latched)
            with self.assertRaises(BodylinkError) as e:
                self.arm.acquire_control()
            self.assertEqual(e.exception.code, "BL_ERR_ESTOP_LATCHED")
        finally:
            reset = self.arm.reset_estop("python test done")
        self.assertFalse(reset.latched)
        with self.arm.acquire_control(lease_ms=1000) as again:
            self.assertTrue(again.active)


class Examples(unittest.TestCase):
    def test_the_examples_run_as_written(self) -> None:
        for name, expect in (("p7.py", "joint 4 at -0.600 rad"), ("p7_asyncio.py", "joint 2 at 0.400 rad")):
            r = run_example(name, url())
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(expect, r.stdout)

    def test_an_example_against_another_body_fails_with_one_line(self) -> None:
        r = run_example("nao.py", url())
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("[BL_ERR_CLIENT_WRONG_BODY]", r.stderr)


class Asyncio(unittest.IsolatedAsyncioTestCase):
    async def test_the_same_with_await(self) -> None:
        async with await bodylink.aio.connect(url(), body="p7", owner="py-async", stale_after_s=STALE_S) as arm:
            s = arm.get_arm_joint_state()
            assert s is not None
            self.assertEqual(len(s.angles), 7)
            target = [0.0, 0.25, 0.0, -0.25, 0.0, 0.0, 0.1]
            async with arm.acquire_control(lease_ms=400) as control:
                await arm.move_joints(target, speed=2.0)
                for _ in range(500):
                    j = arm.get_arm_joint_state()
                    if j is not None and all(abs(a - t) < 1e-3 for a, t in zip(j.angles, target)):
                        break
                    await asyncio.sleep(0.02)
                else:
                    self.fail(f"the arm did not arrive: {arm.get_arm_joint_state()}")
                self.assertTrue(control.active)
                await arm.move_joints(HOME, speed=2.0)
            self.assertFalse(control.active)
            with self.assertRaises(BodylinkError) as e:
                await arm.move_joints(HOME)
            self.assertEqual(e.exception.code, "BL_ERR_AUTH_REQUIRED")
        self.assertIsNone(arm.get_arm_joint_state())


if __name__ == "__main__":
    unittest.main()


class Token(unittest.TestCase):
    """A runtime with a token (serve --token): the client presents it on the stream and on REST; without it, the runtime's own refusal."""

    rt: Runtime

    @classmethod
    def setUpClass(cls) -> None:
        cls.rt = Runtime("p7", "--token", "py-secret")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.rt.stop()

    def test_with_and_without_the_token(self) -> None:
        with self.assertRaises(BodylinkError) as e:
            bodylink.connect(self.rt.url, body="p7")
        self.assertEqual(e.exception.code, "BL_ERR_WEB_TOKEN")
        arm = bodylink.connect(self.rt.url.replace("127.0.0.1", "localhost"), body="p7", token="py-secret", stale_after_s=STALE_S)
        self.addCleanup(arm.close)
        self.assertIsNotNone(arm.get_arm_joint_state())
        with arm.acquire_control(lease_ms=1000) as control:
            self.assertTrue(control.active)
            arm.move_joints(HOME)
