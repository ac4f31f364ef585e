"""AIRBOT P7: the vendor SDK's three getters, then a move under a lease.

    bodylink serve --body p7          (then, in another terminal)
    PYTHONPATH=python python3 python/examples/p7.py

Set BODYLINK_URL when the robot API is not on http://127.0.0.1:8780. Any failure (no runtime,
a runtime of another body, control held elsewhere) ends with one line and exit status 1.
"""

import os
import sys
import time

from bodylink import BodylinkError, connect

url = os.environ.get("BODYLINK_URL", "http://127.0.0.1:8780")
try:
    with connect(url, body="p7", owner="p7-example") as client:
        joint_state = client.get_arm_joint_state()  # ArmJointState | None
        motor_state = client.get_arm_motor_state()  # ArmMotorState | None
        imu_state = client.get_imu_state()  # ImuState | None
        if joint_state is None or motor_state is None or imu_state is None:
            sys.exit("p7-example: no current state (is the arm's link up?)")
        print(f"P7: joints {[round(a, 3) for a in joint_state.angles]} rad at cycle {joint_state.seq}")
        print(f"motor temperatures {max(motor_state.motor_temperatures):.1f} °C at most, error ids {motor_state.error_ids}")

        with client.acquire_control(lease_ms=1000) as control:  # renewed in the background, released at the end
            move = client.move_joints([0.3, -0.3, 0.0, -0.6, 0.0, 0.2, 0.0], speed=1.5)
            print(f"moving, about {move.eta_s:.2f} s (lease {control.id[:8]}…)")
            time.sleep(move.eta_s + 0.3)
            after = client.get_arm_joint_state()
            if after is not None:
                print(f"joint 4 at {after.angles[3]:.3f} rad, effort {after.efforts[3]:.2f} N·m")
except BodylinkError as e:
    sys.exit(f"p7-example: {e}")
