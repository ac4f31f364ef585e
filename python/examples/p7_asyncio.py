"""AIRBOT P7 with asyncio: the same client, awaited.

    bodylink serve --body p7          (then)   PYTHONPATH=python python3 python/examples/p7_asyncio.py
"""

import asyncio
import os
import sys

from bodylink import BodylinkError
from bodylink.aio import connect


async def main(url: str) -> None:
    async with await connect(url, body="p7", owner="p7-asyncio-example") as arm:
        async with arm.acquire_control(lease_ms=1000):
            move = await arm.move_joints([0.0, 0.4, 0.0, -0.8, 0.0, 0.4, 0.0])
            await asyncio.sleep(move.eta_s + 0.3)
        state = arm.get_arm_joint_state()
        if state is not None:
            print(f"P7: joint 2 at {state.angles[1]:.3f} rad (cycle {state.seq})")


try:
    asyncio.run(main(os.environ.get("BODYLINK_URL", "http://127.0.0.1:8780")))
except BodylinkError as e:
    sys.exit(f"p7-asyncio-example: {e}")
