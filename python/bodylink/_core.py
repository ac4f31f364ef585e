"""The one implementation under both clients: an asyncio core per connection.

- **State** arrives over one WebSocket (``/v1/stream``, 20 Hz); the core keeps only the newest
  message (never a queue). A getter builds its snapshot from that message when it is *current*:
  the stream is open, the body link is ``ok`` or ``degraded``, and the message is younger than
  ``stale_after_s`` (default 0.25 s, five stream periods).
- **Age** is measured without trusting either machine's wall clock, as the TypeScript SDK does: the
  core keeps the smallest (local receive time − the runtime's monotonic ``timestamp_ms``) it has
  seen, letting it rise by 1 ms per second to follow clock drift; a state's age is how much later
  than that best case it is now. A state that arrives late (a backlog somewhere) is stale on arrival.
- **REST** (``/v1/...``) runs ``http.client`` in a worker thread (``asyncio.to_thread``): the
  standard library has no asyncio HTTP client, and a request is a few hundred bytes on loopback.
  Every request carries ``x-bodylink-client: python`` (non-simple, docs/security.md), the token as
  ``Authorization: Bearer`` when there is one, and the lease id in ``x-bodylink-lease`` when this
  client holds control. No ``Origin`` is sent (a program, not a page).
- **Leases** renew in a background task every third of their duration until released; a refused
  renewal (expired, revoked by an emergency stop) ends the lease and records why.
- **Reconnects**: the stream reopens by itself (backoff 0.1 s doubling to 2 s); getters return
  ``None`` meanwhile; a runtime of another body at the same URL is refused.

The blocking client runs this core on an event loop in a daemon thread; the asyncio client runs it
on the caller's loop.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, TypeVar

import websockets.client
import websockets.exceptions

from . import errors

DEFAULT_STALE_S = 0.25
FIRST_STATE_WAIT_S = 1.0
DRIFT_PER_S = 0.001  # how fast the best-case delay may rise (clock drift allowance)
LEASE_HEADER = "x-bodylink-lease"
BODIES = ("nao", "p7", "tny360")


@dataclass(frozen=True)
class Options:
    stale_after_s: float = DEFAULT_STALE_S
    connect_timeout_s: float = 5.0
    request_timeout_s: float = 5.0
    owner: str = "python"
    token: Optional[str] = None
    reconnect: bool = True


C = TypeVar("C")


def new_core(url: str, body: Optional[str], owner: str, token: Optional[str], stale_after_s: float, connect_timeout_s: float) -> Core:
    """Both connect()s' start: check ``body``, build the core (its start() opens the stream)."""
    if body is not None and body not in BODIES:
        raise ValueError(f"body must be one of {', '.join(BODIES)}, got {body!r}")
    return Core(url, Options(stale_after_s=stale_after_s, connect_timeout_s=connect_timeout_s, owner=owner, token=token))


def client_class(classes: Mapping[str, C], core: Core) -> C:
    """The client class for the body the hello named (a body this package does not know: a clear error)."""
    if core.body not in classes:
        raise errors.BodylinkError(
            "BL_ERR_CLIENT_WRONG_BODY", 409, f"the server at {core.url} serves a {core.body} body, which this client does not know (it knows {', '.join(classes)}); update the bodylink package"
        )
    return classes[core.body]


class Core:
    """The connection: stream, REST, lease. Lives on one event loop; getters may be read from any thread."""

    def __init__(self, url: str, opts: Options) -> None:
        base = url.rstrip("/")
        if base.startswith("ws://") or base.startswith("wss://"):
            base = "http" + base[2:]
        parsed = urllib.parse.urlsplit(base)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"robot API URL must start with http://, https://, ws:// or wss://, got {url}")
        self.url = base
        self.opts = opts
        self._parsed = parsed
        self._stream_url = ("wss" if parsed.scheme == "https" else "ws") + base[len(parsed.scheme) :] + "/v1/stream"
        self.body: str = ""
        self.joint_names: tuple[str, ...] = ()
        self.rate_hz: float = 20.0
        self._latest: Optional[Mapping[str, Any]] = None
        self._min_delay_ms = float("nan")
        self._last_recv_ms = 0.0
        self._open = False
        self._closed = False
        self._task: Optional[asyncio.Task[None]] = None
        self._ready: Optional[asyncio.Future[None]] = None
        self._cache: tuple[Optional[Mapping[str, Any]], dict[str, object]] = (None, {})
        self.lease: Optional[Lease] = None
        self.on_control_lost: list[Callable[[str], None]] = []

    # --- connection ---

    async def start(self, expect_body: Optional[str]) -> None:
        """Open the stream and wait for its hello; raises BodylinkError (no runtime, wrong body, timeout)."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = loop.create_task(self._run(expect_body))
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.opts.connect_timeout_s)
        except asyncio.TimeoutError:
            await self.close()
            raise errors.no_runtime(self.url) from None
        except BaseException:
            await self.close()
            raise

    def _settle(self, e: Optional[BaseException]) -> None:
        r = self._ready
        if r is None or r.done():
            return
        if e is None:
            r.set_result(None)
        else:
            r.set_exception(e)
            r.exception()  # retrieved: nobody may be waiting any more (a close after a timeout)

    async def _run(self, expect_body: Optional[str]) -> None:
        delay_s, ever_opened = 0.1, False
        while not self._closed:
            try:
                headers = {"x-bodylink-client": "python"}
                if self.opts.token:
                    headers["authorization"] = f"Bearer {self.opts.token}"
                async with websockets.client.connect(self._stream_url, extra_headers=headers, max_size=1 << 22, open_timeout=self.opts.connect_timeout_s) as ws:
                    async for raw in ws:
                        if self._closed:
                            return
                        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
                        try:
                            msg = json.loads(text)
                        except ValueError:
                            continue
                        if not isinstance(msg, dict):
                            continue
                        if msg.get("type") == "hello":
                            body = str(msg.get("body"))
                            expected = expect_body or (self.body if ever_opened else None)
                            if expected and body != expected:
                                err = errors.wrong_body(self.url, body, expected)
                                self._settle(err)
                                self._closed = True
                                return
                            self.body = body
                            names = msg.get("joint_names")
                            self.joint_names = tuple(str(n) for n in names) if isinstance(names, list) else ()
                            rate = msg.get("rate_hz")
                            self.rate_hz = float(rate) if isinstance(rate, (int, float)) else 20.0
                            self._min_delay_ms = float("nan")  # a new connection may be a new runtime (another clock origin)
                            self._open = True
                            ever_opened = True
                            delay_s = 0.1
                            # connect() returns with the first state in hand (the runtime sends its current
                            # one right after the hello), or after FIRST_STATE_WAIT_S when the body has none yet.
                            asyncio.get_running_loop().call_later(FIRST_STATE_WAIT_S, self._settle, None)
                        elif msg.get("type") == "state" and self._open and msg.get("body") == self.body:
                            self._on_state(msg)
                            self._settle(None)
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError) as e:
                if not ever_opened:
                    status = getattr(e, "status_code", None)
                    if isinstance(e, ConnectionRefusedError) or (isinstance(e, OSError) and not isinstance(e, asyncio.TimeoutError)):
                        self._settle(errors.no_runtime(self.url))
                        return
                    if isinstance(status, int) and status in (401, 403, 421):
                        self._settle(await self._refusal(status))
                        return
            finally:
                self._open = False
                self._latest = None
            if self._closed or not self.opts.reconnect:
                self._settle(errors.no_runtime(self.url))
                return
            await asyncio.sleep(delay_s)
            delay_s = min(2.0, delay_s * 2)

    async def _refusal(self, status: int) -> errors.BodylinkError:
        """The stream upgrade was refused (token, Host, Origin): ask REST why, to raise the runtime's own words."""
        try:
            await self.request("GET", "/v1/info")
        except errors.BodylinkError as e:
            return e
        return errors.BodylinkError("BL_ERR_API_INTERNAL", status, f"the state stream at {self._stream_url} was refused with HTTP {status}")

    def _on_state(self, m: Mapping[str, Any]) -> None:
        now = time.monotonic() * 1000
        t = m.get("timestamp_ms")
        if isinstance(t, (int, float)):
            delay = now - float(t)
            if self._min_delay_ms != self._min_delay_ms:  # NaN: first message on this connection
                self._min_delay_ms = delay
            else:
                self._min_delay_ms = min(delay, self._min_delay_ms + (now - self._last_recv_ms) * DRIFT_PER_S)
            self._last_recv_ms = now
        self._latest = m

    def age_s(self) -> float:
        """How old the newest state is, s, against the best delivery seen; inf when there is none."""
        m = self._latest
        t = m.get("timestamp_ms") if m is not None else None
        if m is None or not isinstance(t, (int, float)) or self._min_delay_ms != self._min_delay_ms:
            return float("inf")
        return max(0.0, time.monotonic() * 1000 - (float(t) + self._min_delay_ms)) / 1000

    def current(self) -> Optional[Mapping[str, Any]]:
        """The newest state message when it is current (open, link ok/degraded, fresh), else None."""
        m = self._latest
        if m is None or not self._open or self._closed:
            return None
        if m.get("link") not in ("ok", "degraded"):
            return None
        if self.age_s() > self.opts.stale_after_s:
            return None
        return m

    def snapshot(self, key: str, build: Callable[[Mapping[str, Any]], object]) -> object:
        """``build(message)`` for the current message, once per message and key (snapshots are immutable, so shared)."""
        m = self.current()
        if m is None:
            return None
        held, cache = self._cache
        if held is not m:
            cache = {}
            self._cache = (m, cache)
        if key not in cache:
            cache[key] = build(m)
        return cache[key]

    @property
    def connected(self) -> bool:
        return self._open and not self._closed

    async def close(self) -> None:
        """Release control, stop the stream. Idempotent."""
        if self._closed and self._task is None:
            return
        self._closed = True
        self._latest = None
        self._open = False
        self._settle(errors.closed())
        lease, self.lease = self.lease, None
        if lease is not None:
            try:
                await lease.release()
            except errors.BodylinkError:
                pass
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    # --- REST ---

    async def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, lease_id: Optional[str] = None) -> Any:
        """One REST call; the parsed answer, or BodylinkError with the runtime's code."""
        return await asyncio.to_thread(self._request_blocking, method, path, body, lease_id)

    def _request_blocking(self, method: str, path: str, body: Optional[Mapping[str, Any]], lease_id: Optional[str]) -> Any:
        p = self._parsed
        conn_cls = http.client.HTTPSConnection if p.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(p.hostname or "127.0.0.1", p.port, timeout=self.opts.request_timeout_s)
        headers = {"accept": "application/json", "x-bodylink-client": "python"}
        data: Optional[bytes] = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        if self.opts.token:
            headers["authorization"] = f"Bearer {self.opts.token}"
        if lease_id:
            headers[LEASE_HEADER] = lease_id
        try:
            try:
                conn.request(method, (p.path or "") + path, body=data, headers=headers)
                res = conn.getresponse()
                text = res.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException) as e:
                raise errors.no_runtime(self.url) from e
        finally:
            conn.close()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        if res.status >= 400:
            raise errors.BodylinkError.from_answer(res.status, parsed, f"{method} {path}")
        return parsed

    async def command(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """POST a body command with this client's lease; its ``result``."""
        if self._closed:
            raise errors.closed()
        lease = self.lease.id if self.lease is not None and self.lease.active else None
        a = await self.request("POST", path, body, lease)
        r = a.get("result") if isinstance(a, Mapping) else None
        return r if isinstance(r, Mapping) else {}

    # --- control ---

    async def acquire(self, lease_ms: int, owner: Optional[str], renew_every_s: Optional[float]) -> Lease:
        if self._closed:
            raise errors.closed()
        a = await self.request("POST", "/v1/control", {"owner": owner or self.opts.owner, "lease_ms": lease_ms})
        lease = Lease(self, a, renew_every_s if renew_every_s is not None else lease_ms / 3000)
        self.lease = lease
        lease.start()
        return lease

    async def emergency_stop(self, reason: Optional[str], category: Optional[int]) -> Any:
        """POST /v1/estop (no lease needed); our own lease ends without a request (the stop revoked it)."""
        lease = self.lease
        if lease is not None:
            lease.hold(True)
        body: dict[str, Any] = {}
        if reason is not None:
            body["reason"] = reason
        if category is not None:
            body["category"] = category
        try:
            a = await self.request("POST", "/v1/estop", body)
        except BaseException:
            if lease is not None:
                lease.hold(False)
            raise
        if lease is not None:
            lease.revoked(f"revoked by the emergency stop ({a.get('reason') if isinstance(a, Mapping) else reason})")
        return a

    def lease_ended(self, lease: Lease, lost_reason: Optional[str]) -> None:
        if self.lease is lease:
            self.lease = None
        if lost_reason is not None:
            for cb in list(self.on_control_lost):
                cb(lost_reason)


class Lease:
    """A held control lease: renews itself in a task on the core's loop until released or lost."""

    def __init__(self, core: Core, answer: Mapping[str, Any], renew_every_s: float) -> None:
        self._core = core
        self.id: str = str(answer["lease_id"])
        self.owner: str = str(answer.get("owner", ""))
        self.lease_ms: int = int(answer.get("lease_ms", 0))
        self.expires_at_epoch_ms: float = float(answer.get("expires_at_epoch_ms", 0))
        self._expires_local = time.monotonic() + self.lease_ms / 1000
        self._renew_every_s = renew_every_s
        self.active = True
        self._held = False
        self.lost_reason: Optional[str] = None
        self._task: Optional[asyncio.Task[None]] = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew_loop())

    async def _renew_loop(self) -> None:
        while self.active:
            await asyncio.sleep(self._renew_every_s)
            if not self.active:
                return
            if self._held:
                continue
            try:
                a = await self._core.request("PUT", "/v1/control", {"lease_ms": self.lease_ms}, self.id)
                self.expires_at_epoch_ms = float(a.get("expires_at_epoch_ms", self.expires_at_epoch_ms))
                self._expires_local = time.monotonic() + self.lease_ms / 1000
            except errors.BodylinkError as e:
                if not self.active:
                    return
                if e.status in (403, 409) or time.monotonic() >= self._expires_local:
                    self._end(e.message if e.status in (403, 409) else "could not renew before the lease expired (runtime unreachable)")
                    return

    def _end(self, lost_reason: Optional[str]) -> None:
        self.active = False
        self.lost_reason = lost_reason
        self._core.lease_ended(self, lost_reason)
        t = self._task
        if t is not None and t is not asyncio.current_task() and not t.done():
            t.cancel()

    async def release(self) -> None:
        """Release control now (idempotent); a lease already gone (expired, revoked) is not an error."""
        if not self.active:
            return
        self._end(None)
        try:
            await self._core.request("DELETE", "/v1/control", None, self.id)
        except errors.BodylinkError as e:
            if e.status != 403:
                raise

    def hold(self, held: bool) -> None:
        """Send no renewal while an emergency stop is on its way (it would only be refused); resume if it failed."""
        self._held = held

    def revoked(self, reason: str) -> None:
        """The runtime revoked it (our own emergency stop): end it here without a request."""
        if self.active:
            self._end(reason)


class LeaseView:
    """What a held lease shows its user (the blocking Control and the asyncio AsyncControl add release)."""

    def __init__(self, lease: Lease) -> None:
        self._lease = lease

    @property
    def id(self) -> str:
        return self._lease.id

    @property
    def owner(self) -> str:
        return self._lease.owner

    @property
    def lease_ms(self) -> int:
        return self._lease.lease_ms

    @property
    def expires_at_epoch_ms(self) -> float:
        """When it runs out unless renewed: the runtime's wall clock, ms since the Unix epoch."""
        return self._lease.expires_at_epoch_ms

    @property
    def active(self) -> bool:
        """True until released or lost."""
        return self._lease.active

    @property
    def lost_reason(self) -> Optional[str]:
        """Why the lease ended without ``release()`` (expired, revoked), else None."""
        return self._lease.lost_reason
