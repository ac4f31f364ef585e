"""bodylink: a Python client for a bodylink runtime's robot API (NAO, AIRBOT P7, TNY-360).

```python
from bodylink import connect
arm = connect("http://127.0.0.1:8780")          # the hello picks the body's client: here a P7Client
joint_state = arm.get_arm_joint_state()          # ArmJointState | None
motor_state = arm.get_arm_motor_state()          # ArmMotorState | None
imu_state = arm.get_imu_state()                  # ImuState | None
with arm.acquire_control(lease_ms=1000):         # renewed in the background, released on exit
    arm.move_joints([0.3, -0.3, 0, -0.6, 0, 0.2, 0])
arm.close()
```

Standard library plus ``websockets`` (Debian: python3-websockets). Blocking here; asyncio in
``bodylink.aio`` (the same implementation underneath). Errors: ``BodylinkError`` with the
runtime's ``BL_ERR_*`` code.
"""

from ._bodies import Applied, Clamped, EstopState, MoveResult
from .client import AnyClient, Control, NaoClient, P7Client, Robot, Tny360Client, connect
from .errors import BodylinkError, ControlHolder
from .models import (
    ArmJointState,
    ArmMotorState,
    BatteryState,
    FootState,
    FsrState,
    HeadState,
    ImuState,
    LocomotionState,
    NaoImuState,
    NAO_JOINT_NAMES,
    NaoJoint,
    NaoJointState,
    NaoMotorState,
    OdometryState,
    SonarState,
    Stamp,
    TnyImuState,
    TnyJointState,
    TouchState,
)

__version__ = "0.1.0"

__all__ = [
    "AnyClient",
    "Applied",
    "ArmJointState",
    "ArmMotorState",
    "BatteryState",
    "BodylinkError",
    "Clamped",
    "Control",
    "ControlHolder",
    "EstopState",
    "FootState",
    "FsrState",
    "HeadState",
    "ImuState",
    "LocomotionState",
    "MoveResult",
    "NaoClient",
    "NaoImuState",
    "NAO_JOINT_NAMES",
    "NaoJoint",
    "NaoJointState",
    "NaoMotorState",
    "OdometryState",
    "P7Client",
    "Robot",
    "SonarState",
    "Stamp",
    "TnyImuState",
    "TnyJointState",
    "Tny360Client",
    "TouchState",
    "connect",
]
