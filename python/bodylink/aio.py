"""The asyncio client: ``robot = await bodylink.aio.connect(url)``; commands are awaited.

The same core as the blocking client (``_core.py``), on the caller's event loop. Getters are
plain calls here too (they read the newest state; nothing to await).

```python
async with await connect("http://127.0.0.1:8780", body="p7") as arm:
    async with arm.acquire_control(lease_ms=1000):
        await arm.move_joints([0.3, 0, 0, -0.6, 0, 0, 0])
    print(arm.get_arm_joint_state())
```
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Callable, Generator, Literal, Mapping, Optional, Sequence, TypeVar, Union, overload

from . import _bodies as b
from ._core import Core, LeaseView, client_class, new_core
from .errors import BodylinkError, ControlHolder

T = TypeVar("T")


class AsyncControl(LeaseView):
    """A held control lease; ``async with`` releases it at the end. Renews itself until then (see client.Control)."""

    async def release(self) -> None:
        await self._lease.release()


class _Acquiring:
    """``acquire_control()``'s answer: await it (``lease = await robot.acquire_control()``) or enter it (``async with robot.acquire_control():``)."""

    def __init__(self, core: Core, lease_ms: int, owner: Optional[str], renew_every_s: Optional[float]) -> None:
        self._core, self._lease_ms, self._owner, self._renew = core, lease_ms, owner, renew_every_s
        self._control: Optional[AsyncControl] = None

    async def _acquire(self) -> AsyncControl:
        self._control = AsyncControl(await self._core.acquire(self._lease_ms, self._owner, self._renew))
        return self._control

    def __await__(self) -> Generator[Any, None, AsyncControl]:
        return self._acquire().__await__()

    async def __aenter__(self) -> AsyncControl:
        return await self._acquire()

    async def __aexit__(self, t: Optional[type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._control is not None:
            await self._control.release()


class AsyncRobot:
    """What every body's asyncio client has: control, emergency stop, REST reads, close."""

    _core: Core

    def __init__(self, core: Core) -> None:
        self._core = core

    def acquire_control(self, lease_ms: int = 2000, *, owner: Optional[str] = None, renew_every_s: Optional[float] = None) -> _Acquiring:
        """Take control (see client.Robot.acquire_control); ``async with`` or ``await``."""
        return _Acquiring(self._core, lease_ms, owner, renew_every_s)

    @property
    def control(self) -> Optional[AsyncControl]:
        lease = self._core.lease
        return AsyncControl(lease) if lease is not None and lease.active else None

    async def release_control(self) -> None:
        lease = self._core.lease
        if lease is not None:
            await lease.release()

    def on_control_lost(self, callback: Callable[[str], None]) -> None:
        self._core.on_control_lost.append(callback)

    async def get_control(self) -> Optional[ControlHolder]:
        a = await self._core.request("GET", "/v1/control")
        return ControlHolder.from_wire(a.get("holder")) if isinstance(a, Mapping) else None

    async def emergency_stop(self, reason: Optional[str] = None, *, category: Optional[Literal[0, 1]] = None) -> b.EstopState:
        return b.EstopState.from_wire(await self._core.emergency_stop(reason, category))

    async def reset_estop(self, reason: str) -> b.EstopState:
        return b.EstopState.from_wire(await self._core.request("POST", "/v1/estop/reset", {"reason": reason}))

    async def get_estop(self) -> b.EstopState:
        return b.EstopState.from_wire(await self._core.request("GET", "/v1/estop"))

    async def fetch_state(self) -> Mapping[str, Any]:
        return dict(await self._core.request("GET", "/v1/state"))

    async def fetch_info(self) -> Mapping[str, Any]:
        return dict(await self._core.request("GET", "/v1/info"))

    async def fetch_health(self) -> Mapping[str, Any]:
        return dict(await self._core.request("GET", "/v1/health"))

    async def command(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self._core.command(path, body)

    async def close(self) -> None:
        await self._core.close()

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, t: Optional[type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()


class AsyncP7Client(AsyncRobot, b.P7Reads):
    async def move_joints(self, positions: Sequence[float], speed: Union[None, float, Sequence[float]] = None) -> b.MoveResult:
        return await b.p7_move_joints(self._core, positions, speed)

    async def servo_joints(self, positions: Sequence[float]) -> None:
        await b.p7_servo_joints(self._core, positions)

    async def clear_error(self, joint: Optional[int] = None) -> tuple[int, ...]:
        return await b.p7_clear_error(self._core, joint)


class AsyncNaoClient(AsyncRobot, b.NaoReads):
    async def set_joints(self, positions: Optional[Sequence[float]] = None, stiffness: Optional[Sequence[float]] = None) -> b.Applied:
        return await b.nao_set_joints(self._core, positions, stiffness)

    async def set_leds(self, **groups: Sequence[float]) -> b.Applied:
        return await b.nao_set_leds(self._core, groups)

    async def set_sonar(self, left: bool, right: bool) -> b.Applied:
        return await b.nao_set_sonar(self._core, left, right)

    async def smooth_enable(self) -> float:
        return await b.smooth(self._core, True)

    async def smooth_disable(self) -> float:
        return await b.smooth(self._core, False)


class AsyncTny360Client(AsyncRobot, b.TnyReads):
    async def set_velocity(self, x_m_s: float, y_m_s: float = 0.0, yaw_rad_s: float = 0.0) -> bool:
        return await b.tny_command(self._core, "/v1/commands/velocity", b.tny_velocity(x_m_s, y_m_s, yaw_rad_s))

    async def set_posture(self, x_m: float, y_m: float, z_m: float, rx_rad: float = 0.0, ry_rad: float = 0.0, rz_rad: float = 0.0) -> bool:
        return await b.tny_command(self._core, "/v1/commands/posture", b.tny_posture(x_m, y_m, z_m, rx_rad, ry_rad, rz_rad))

    async def set_gait(self, gait: Literal["Creep", "Walk", "Run"]) -> bool:
        return await b.tny_command(self._core, "/v1/commands/gait", {"gait": gait})

    async def set_enabled_mask(self, mask: int) -> bool:
        return await b.tny_command(self._core, "/v1/commands/enabled", {"mask": int(mask)})

    async def set_joints(self, positions: Sequence[float]) -> bool:
        return await b.tny_command(self._core, "/v1/commands/joints", {"positions": b._vec(positions, "positions")})

    async def set_joint(self, joint: int, position_rad: float) -> bool:
        return await b.tny_command(self._core, "/v1/commands/joint", {"joint": int(joint), "position": float(position_rad)})

    async def set_leg_position(self, leg: int, x_m: float, y_m: float, z_m: float) -> bool:
        return await b.tny_command(self._core, "/v1/commands/leg", {"leg": int(leg), "x": float(x_m), "y": float(y_m), "z": float(z_m)})

    async def smooth_enable(self) -> float:
        return await b.smooth(self._core, True)

    async def smooth_disable(self) -> float:
        return await b.smooth(self._core, False)


AnyAsyncClient = Union[AsyncNaoClient, AsyncP7Client, AsyncTny360Client]
_CLASSES: Mapping[str, type[AnyAsyncClient]] = {"nao": AsyncNaoClient, "p7": AsyncP7Client, "tny360": AsyncTny360Client}


@overload
async def connect(url: str = ..., *, body: Literal["p7"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> AsyncP7Client: ...
@overload
async def connect(url: str = ..., *, body: Literal["nao"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> AsyncNaoClient: ...
@overload
async def connect(url: str = ..., *, body: Literal["tny360"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> AsyncTny360Client: ...
@overload
async def connect(url: str = ..., *, body: None = ..., owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> AnyAsyncClient: ...
async def connect(
    url: str = "http://127.0.0.1:8780",
    *,
    body: Optional[str] = None,
    owner: str = "python",
    token: Optional[str] = None,
    stale_after_s: float = 0.25,
    connect_timeout_s: float = 5.0,
) -> AnyAsyncClient:
    """Connect on the running event loop (see bodylink.connect for the arguments and errors)."""
    core = new_core(url, body, owner, token, stale_after_s, connect_timeout_s)
    await core.start(body)
    try:
        cls = client_class(_CLASSES, core)
    except BodylinkError:
        await core.close()
        raise
    return cls(core)


__all__ = ["AnyAsyncClient", "AsyncControl", "AsyncNaoClient", "AsyncP7Client", "AsyncRobot", "AsyncTny360Client", "connect"]
