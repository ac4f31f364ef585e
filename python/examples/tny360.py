"""TNY-360: stand up, walk forward for a second, read the odometry.

    bodylink serve --body tny360      (then, in another terminal)
    PYTHONPATH=python python3 python/examples/tny360.py
"""

import os
import sys
import time

from bodylink import BodylinkError, connect

url = os.environ.get("BODYLINK_URL", "http://127.0.0.1:8780")
try:
    with connect(url, body="tny360", owner="tny-example") as dog:
        with dog.acquire_control(lease_ms=1000):
            print(f"TNY-360: standing up, about {dog.smooth_enable():.1f} s")
            dog.set_gait("Walk")
            for _ in range(5):  # a velocity must be renewed within 500 ms or it decays to zero
                dog.set_velocity(0.05)
                time.sleep(0.2)
            dog.set_velocity(0.0)
            odometry, locomotion = dog.get_odometry_state(), dog.get_locomotion_state()
            if odometry is not None and locomotion is not None:
                print(f"odometry x {odometry.x_m:.3f} m, paws grounded: {locomotion.grounded}")
except BodylinkError as e:
    sys.exit(f"tny-example: {e}")
