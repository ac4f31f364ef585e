"""NAO: battery, feet, then look left with the head under a lease.

    bodylink serve                    (then, in another terminal)
    PYTHONPATH=python python3 python/examples/nao.py
"""

import os
import sys
import time

from bodylink import BodylinkError, connect

url = os.environ.get("BODYLINK_URL", "http://127.0.0.1:8780")
try:
    with connect(url, body="nao", owner="nao-example") as nao:
        battery, feet, joints = nao.get_battery_state(), nao.get_foot_state(), nao.get_joint_state()
        if battery is None or feet is None or joints is None:
            sys.exit("nao-example: no current state (is the chest board's link up?)")
        print(f"NAO: battery {battery.charge:.0%}, {'charging' if battery.charging else 'discharging'}")
        print(f"weight on the feet: left {feet.left_weight_kg:.2f} kg, right {feet.right_weight_kg:.2f} kg")

        with nao.acquire_control(lease_ms=1000):
            positions = list(joints.angles)
            positions[nao.joint_names.index("HeadYaw")] = 0.5  # look left
            r = nao.set_joints(positions=positions, stiffness=[0.6] * 26)
            print(f"applied {' and '.join(r.applied)}, {len(r.clamped)} values clamped to their limits")
            time.sleep(1.0)
            now = nao.get_joint_state()
            if now is not None:
                print(f"head yaw {now.angles[0]:.3f} rad")
        # Released: nobody holds control, the NAO ramps its stiffness to 0.
except BodylinkError as e:
    sys.exit(f"nao-example: {e}")
