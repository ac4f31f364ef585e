"""The blocking client: ``connect(url)`` returns the body's client, its calls return values.

Underneath is the asyncio core (``_core.py``), running on an event loop in a daemon thread that
this client owns; a blocking call submits one coroutine to it and waits for its answer. Getters
never wait: they read the newest state the loop thread has received. Lease renewal runs on that
thread too, so it goes on while your code sleeps or computes.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any, Callable, Coroutine, Literal, Mapping, Optional, Sequence, TypeVar, Union, overload

from . import _bodies as b
from ._core import Core, Lease, LeaseView, client_class, new_core
from .errors import BodylinkError, ControlHolder

T = TypeVar("T")


class _LoopThread:
    """An event loop in a daemon thread, for one client."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="bodylink-client", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: Optional[float] = None) -> T:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a blocking bodylink call from the client's own thread (a callback) would wait forever; use bodylink.aio there")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def stop(self, join: bool = True) -> None:
        if self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self.loop.stop)
        except RuntimeError:  # closed meanwhile
            return
        if join and threading.current_thread() is not self._thread:
            self._thread.join(5)
            if not self._thread.is_alive():
                self.loop.close()


class Control(LeaseView):
    """A held control lease (``with robot.acquire_control(lease_ms=1000):``).

    It renews itself in the background (every third of its duration) until ``release()`` or the
    end of the ``with`` block. If a renewal is refused (it expired, an emergency stop revoked it)
    ``active`` turns False and ``lost_reason`` says why; commands are then refused with
    ``BL_ERR_AUTH_REQUIRED``.
    """

    def __init__(self, lease: Lease, run: Callable[[Coroutine[Any, Any, None]], None]) -> None:
        super().__init__(lease)
        self._run = run

    def release(self) -> None:
        """Release control now (idempotent)."""
        self._run(self._lease.release())

    def __enter__(self) -> Control:
        return self

    def __exit__(self, t: Optional[type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.release()


class Robot:
    """What every body's blocking client has: control, emergency stop, REST reads, close."""

    _core: Core

    def __init__(self, core: Core, loop: _LoopThread) -> None:
        self._core = core
        self._loop = loop

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coro)

    def acquire_control(self, lease_ms: int = 2000, *, owner: Optional[str] = None, renew_every_s: Optional[float] = None) -> Control:
        """Take control for ``lease_ms`` (50..60000), renewed in the background until released.

        Use it as a context manager: ``with robot.acquire_control(lease_ms=1000): …`` releases on
        exit. Raises BodylinkError ``BL_ERR_AUTH_HELD`` (``holder`` names who) while another client
        holds control, ``BL_ERR_ESTOP_LATCHED`` while the emergency stop is latched.
        """
        lease = self._run(self._core.acquire(lease_ms, owner, renew_every_s))
        return Control(lease, self._run)

    @property
    def control(self) -> Optional[Control]:
        """The lease this client holds, or None."""
        lease = self._core.lease
        return Control(lease, self._run) if lease is not None and lease.active else None

    def release_control(self) -> None:
        lease = self._core.lease
        if lease is not None:
            self._run(lease.release())

    def on_control_lost(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(reason)`` (on the client's thread) when a held lease ends without release()."""
        self._core.on_control_lost.append(callback)

    def get_control(self) -> Optional[ControlHolder]:
        """Who holds control now (GET /v1/control), or None."""
        a = self._run(self._core.request("GET", "/v1/control"))
        return ControlHolder.from_wire(a.get("holder")) if isinstance(a, Mapping) else None

    def emergency_stop(self, reason: Optional[str] = None, *, category: Optional[Literal[0, 1]] = None) -> b.EstopState:
        """Latch the emergency stop (no lease needed; revokes every lease) until ``reset_estop``."""
        return b.EstopState.from_wire(self._run(self._core.emergency_stop(reason, category)))

    def reset_estop(self, reason: str) -> b.EstopState:
        """Release the latch (a reason is required). Nothing moves until a client takes control and commands."""
        return b.EstopState.from_wire(self._run(self._core.request("POST", "/v1/estop/reset", {"reason": reason})))

    def get_estop(self) -> b.EstopState:
        return b.EstopState.from_wire(self._run(self._core.request("GET", "/v1/estop")))

    def fetch_state(self) -> Mapping[str, Any]:
        """GET /v1/state: the newest state in REST units (raises BL_ERR_STATE_NONE before the first)."""
        return dict(self._run(self._core.request("GET", "/v1/state")))

    def fetch_info(self) -> Mapping[str, Any]:
        return dict(self._run(self._core.request("GET", "/v1/info")))

    def fetch_health(self) -> Mapping[str, Any]:
        return dict(self._run(self._core.request("GET", "/v1/health")))

    def command(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """Any body command (POST /v1/commands/…) with this client's lease; its ``result``."""
        return self._run(self._core.command(path, body))

    def close(self) -> None:
        """Release control, close the stream, stop the client's thread. Idempotent; getters return None after."""
        if not self._loop.loop.is_closed():
            self._run(self._core.close())
            self._loop.stop()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, t: Optional[type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        # A client that was never closed: stop its thread (its lease then expires on the runtime).
        loop = getattr(self, "_loop", None)
        if loop is not None:
            loop.stop(join=False)


class P7Client(Robot, b.P7Reads):
    """An AIRBOT P7: the vendor SDK's three getters, moves, servoing, clearing errors."""

    def move_joints(self, positions: Sequence[float], speed: Union[None, float, Sequence[float]] = None) -> b.MoveResult:
        """Move J1..J7 to ``positions`` (rad) under a speed limit (rad/s: one or 7; default π/3); joints arrive together.

        Targets outside the command limits are refused (BL_ERR_CMD_INVALID, 400).
        """
        return self._run(b.p7_move_joints(self._core, positions, speed))

    def servo_joints(self, positions: Sequence[float]) -> None:
        """Each joint tracks ``positions`` (rad) at full speed; each call replaces the previous targets."""
        self._run(b.p7_servo_joints(self._core, positions))

    def clear_error(self, joint: Optional[int] = None) -> tuple[int, ...]:
        """Clear the error id of ``joint`` (0..6), or of every joint; the joints cleared."""
        return self._run(b.p7_clear_error(self._core, joint))


class NaoClient(Robot, b.NaoReads):
    """A NAO: joints with stiffness, LEDs, sonar, stand up and sit down."""

    def set_joints(self, positions: Optional[Sequence[float]] = None, stiffness: Optional[Sequence[float]] = None) -> b.Applied:
        """Positions (rad, 26) and/or stiffness (0..1, 26) in ``joint_names`` order; out-of-limit positions are clamped and listed."""
        return self._run(b.nao_set_joints(self._core, positions, stiffness))

    def set_leds(self, **groups: Sequence[float]) -> b.Applied:
        """LED intensities 0..1: ``chest=(r, g, b)``, ``left_ear`` (10), ``left_eye`` (24), ``skull`` (12), …"""
        return self._run(b.nao_set_leds(self._core, groups))

    def set_sonar(self, left: bool, right: bool) -> b.Applied:
        return self._run(b.nao_set_sonar(self._core, left, right))

    def smooth_enable(self) -> float:
        """Stiffness up into the stand posture; the estimated seconds."""
        return self._run(b.smooth(self._core, True))

    def smooth_disable(self) -> float:
        """Into the rest posture, then stiffness off; the estimated seconds."""
        return self._run(b.smooth(self._core, False))


class Tny360Client(Robot, b.TnyReads):
    """A TNY-360 quadruped: velocity, posture, gait, joints, legs. Each returns True when forwarded to a real robot."""

    def set_velocity(self, x_m_s: float, y_m_s: float = 0.0, yaw_rad_s: float = 0.0) -> bool:
        """Walk; renew within 500 ms or the velocity decays to zero."""
        return self._run(b.tny_command(self._core, "/v1/commands/velocity", b.tny_velocity(x_m_s, y_m_s, yaw_rad_s)))

    def set_posture(self, x_m: float, y_m: float, z_m: float, rx_rad: float = 0.0, ry_rad: float = 0.0, rz_rad: float = 0.0) -> bool:
        return self._run(b.tny_command(self._core, "/v1/commands/posture", b.tny_posture(x_m, y_m, z_m, rx_rad, ry_rad, rz_rad)))

    def set_gait(self, gait: Literal["Creep", "Walk", "Run"]) -> bool:
        return self._run(b.tny_command(self._core, "/v1/commands/gait", {"gait": gait}))

    def set_enabled_mask(self, mask: int) -> bool:
        """Power joints, bit i = joint i (0x0FFF: the 12 leg joints)."""
        return self._run(b.tny_command(self._core, "/v1/commands/enabled", {"mask": int(mask)}))

    def set_joints(self, positions: Sequence[float]) -> bool:
        """All 14 joints' targets, rad (outside a joint's limits: refused)."""
        return self._run(b.tny_command(self._core, "/v1/commands/joints", {"positions": b._vec(positions, "positions")}))

    def set_joint(self, joint: int, position_rad: float) -> bool:
        return self._run(b.tny_command(self._core, "/v1/commands/joint", {"joint": int(joint), "position": float(position_rad)}))

    def set_leg_position(self, leg: int, x_m: float, y_m: float, z_m: float) -> bool:
        return self._run(b.tny_command(self._core, "/v1/commands/leg", {"leg": int(leg), "x": float(x_m), "y": float(y_m), "z": float(z_m)}))

    def smooth_enable(self) -> float:
        return self._run(b.smooth(self._core, True))

    def smooth_disable(self) -> float:
        return self._run(b.smooth(self._core, False))


AnyClient = Union[NaoClient, P7Client, Tny360Client]
_CLASSES: Mapping[str, type[AnyClient]] = {"nao": NaoClient, "p7": P7Client, "tny360": Tny360Client}


@overload
def connect(url: str = ..., *, body: Literal["p7"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> P7Client: ...
@overload
def connect(url: str = ..., *, body: Literal["nao"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> NaoClient: ...
@overload
def connect(url: str = ..., *, body: Literal["tny360"], owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> Tny360Client: ...
@overload
def connect(url: str = ..., *, body: None = ..., owner: str = ..., token: Optional[str] = ..., stale_after_s: float = ..., connect_timeout_s: float = ...) -> AnyClient: ...
def connect(
    url: str = "http://127.0.0.1:8780",
    *,
    body: Optional[str] = None,
    owner: str = "python",
    token: Optional[str] = None,
    stale_after_s: float = 0.25,
    connect_timeout_s: float = 5.0,
) -> AnyClient:
    """Connect to a runtime's robot API; returns once the stream's hello and first state arrived.

    (The runtime sends its current state right after the hello; a body that has none yet, still
    starting, lets ``connect`` return one second after the hello, with getters returning None.)

    The hello says which body the runtime serves, and that picks the client: ``P7Client``,
    ``NaoClient`` or ``Tny360Client``. With ``body=`` a runtime of another body is refused
    (BodylinkError ``BL_ERR_CLIENT_WRONG_BODY``). Nothing listening at ``url`` raises
    ``BL_ERR_CLI_NO_RUNTIME`` at once (after ``connect_timeout_s`` for a peer that never says hello).
    ``token``: the runtime's token, when it has one (``serve --token``, BODYLINK_TOKEN).
    ``owner``: the name other clients see while you hold control.
    """
    core = new_core(url, body, owner, token, stale_after_s, connect_timeout_s)
    loop = _LoopThread()
    try:
        loop.run(core.start(body))
        cls = client_class(_CLASSES, core)
    except BaseException:
        loop.run(core.close())
        loop.stop()
        raise
    return cls(core, loop)


__all__ = ["AnyClient", "BodylinkError", "Control", "NaoClient", "P7Client", "Robot", "Tny360Client", "connect"]
