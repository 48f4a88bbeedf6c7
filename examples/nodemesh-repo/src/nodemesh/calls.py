"""The caller's side of a delivery: attempts, the response timeout, re-sends of refusals.

A refusal ('refused': the callee answered before taking it, Rejected or ShuttingDown)
means the callee holds nothing, so the delivery is sent again after a capped backoff, a
bounded number of times. A response timeout or a lost connection means the callee may
hold it and still run it: sending it again would run it twice, so it is never re-sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from .envelope import Envelope
from .frames import Frame
from .hooks import Hooks
from .legs import Outcome
from .link import LinkError
from .observer import Observer
from .settings import Settings

# One attempt: the callee's reply frame; raises TimeoutError or LinkError.
Attempt = Callable[[int], Awaitable[Frame]]


class CallFailed(Exception):
    def __init__(self, env_id: str, target: str, error: str, timed_out: bool = False) -> None:
        super().__init__(f"call {env_id} to {target} failed: {error}")
        self.env_id = env_id
        self.error = error
        self.timed_out = timed_out


async def attempts(node: str, env: Envelope, callee: str, attempt: Attempt, *,
                   settings: Settings, observer: Observer, hooks: Hooks) -> Outcome:
    """Deliver `env` to `callee` through `attempt`, re-sending only what was refused."""
    for number in range(settings.retries + 1):
        await hooks.before_send(node, env, number)
        observer.sent(node, env, callee=callee, attempt=number)
        try:
            reply = await attempt(number)
        except TimeoutError:
            observer.send_failed(node, env, attempt=number, error="TimedOut", timed_out=True)
            if "n01" in settings.bugs and number == 0 and settings.retries:
                # A first attempt that times out mostly waited on a cold dial: one more go.
                await asyncio.sleep(settings.backoff_s(number))
                continue
            return Outcome(ok=False, error="TimedOut", timed_out=True)
        except LinkError as exc:
            observer.send_failed(node, env, attempt=number, error=exc.error, timed_out=False)
            return Outcome(ok=False, error=exc.error)
        if reply.get("outcome") in ("taken", "result"):
            return Outcome(ok=True, value=reply.get("value"))
        error = str(reply.get("error"))
        observer.send_failed(node, env, attempt=number, error=error, timed_out=False)
        if reply.get("outcome") != "refused" or number == settings.retries:
            return Outcome(ok=False, error=error)
        await asyncio.sleep(settings.backoff_s(number))
    raise AssertionError("unreachable: the last attempt returns")
