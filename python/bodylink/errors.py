"""Errors the client raises: one exception class carrying the runtime's ``BL_ERR_*`` code.

The codes and their meaning are the runtime's (docs/errors.md); the client adds none of its own.
A refused request keeps everything the runtime said: ``status`` (HTTP), ``holder`` (who holds
control, on ``BL_ERR_AUTH_HELD`` and ``BL_ERR_AUTH_UNKNOWN_LEASE``) and ``problems`` (which
fields a ``400`` refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class ControlHolder:
    """Who holds control, as the runtime reports it (never the lease id)."""

    owner: str
    """The holder's name (``acquire_control(owner=…)``, or the client's ``owner``)."""
    source: str
    """How it took control: ``api``, ``lola``, ``tny``, ``cli``, ``fleet`` …"""
    expires_at_epoch_ms: float
    """When its lease runs out unless renewed: the runtime's wall clock, ms since the Unix epoch."""

    @staticmethod
    def from_wire(o: object) -> ControlHolder | None:
        if not isinstance(o, Mapping):
            return None
        owner, source, expires = o.get("owner"), o.get("source"), o.get("expires_at_epoch_ms")
        if not isinstance(owner, str) or not isinstance(source, str) or not isinstance(expires, (int, float)):
            return None
        return ControlHolder(owner, source, float(expires))


class BodylinkError(Exception):
    """A request the runtime refused, or a client-side failure, with its ``BL_ERR_*`` code.

    ``code`` is one of the runtime's codes (docs/errors.md), e.g. ``BL_ERR_AUTH_HELD`` (409: another
    client holds control; ``holder`` names it), ``BL_ERR_CMD_INVALID`` (400: a target outside the
    limits), ``BL_ERR_ESTOP_LATCHED``, ``BL_ERR_CLI_NO_RUNTIME`` (nothing answers at the URL),
    ``BL_ERR_CLIENT_WRONG_BODY`` (the runtime serves another body), ``BL_ERR_CLIENT_CLOSED``.
    ``status`` is the HTTP status (0 when no answer arrived).
    """

    code: str
    status: int
    message: str
    holder: ControlHolder | None
    problems: tuple[str, ...]

    def __init__(self, code: str, status: int, message: str, holder: ControlHolder | None = None, problems: tuple[str, ...] = ()) -> None:
        super().__init__(f"{message} [{code}]")
        self.code = code
        self.status = status
        self.message = message
        self.holder = holder
        self.problems = problems

    @staticmethod
    def from_answer(status: int, answer: Any, what: str) -> BodylinkError:
        """The error of a refused request: the runtime's ``{code, status, message, holder?, problems?}``."""
        if isinstance(answer, Mapping) and isinstance(answer.get("code"), str):
            problems = answer.get("problems")
            return BodylinkError(
                str(answer["code"]),
                status,
                str(answer.get("message", f"HTTP {status} from {what}")),
                ControlHolder.from_wire(answer.get("holder")),
                tuple(_problem(p) for p in problems) if isinstance(problems, list) else (),
            )
        return BodylinkError("BL_ERR_API_INTERNAL", status, f"HTTP {status} from {what}: {str(answer)[:200]}")


def _problem(p: object) -> str:
    """One refused field, ``"body/positions/3: must be number"``."""
    if isinstance(p, Mapping):
        return f"{p.get('key', '?')}: {p.get('reason', '?')}"
    return str(p)


# The messages of the codes the client raises itself: the runtime's own table (src/errors.ts),
# so a user reads the same words whichever side noticed.
def no_runtime(url: str) -> BodylinkError:
    return BodylinkError("BL_ERR_CLI_NO_RUNTIME", 503, f"no runtime answers at {url}; start one with `bodylink serve` (or pass --url)")


def wrong_body(url: str, got: str, expected: str) -> BodylinkError:
    return BodylinkError(
        "BL_ERR_CLIENT_WRONG_BODY", 409, f"the server at {url} serves a {got} body, not {expected}; check the URL or connect() without body= to take any"
    )


def closed() -> BodylinkError:
    return BodylinkError("BL_ERR_CLIENT_CLOSED", 499, "the client was closed; connect() again")
