"""Call failures and the retry ladder: is_transient ⊇ is_resendable.

A refusal means the callee holds nothing, so the call may be sent again. A timeout
means the callee may hold the call and will still run it, so it is never re-sent.
Failures can arrive as groups (several transports failing at once); the ladder
walks the whole exception graph, members and causes, not one chain.
"""

from __future__ import annotations

from collections.abc import Iterator

MAX_WALK = 256


class CallError(Exception):
    """A call failed without a timeout."""


class CallRefused(CallError):
    """The callee refused the call: it holds nothing."""


class NoSuchNode(CallError):
    """No node answers at the call's target."""


class CallTimedOut(TimeoutError):
    """No reply within the response timeout: the callee may still hold the call."""


class CallFailures(ExceptionGroup[Exception]):
    """Several transports failed one call."""


def walk(exc: BaseException) -> Iterator[BaseException]:
    """Every exception in `exc`'s graph (group members, causes, contexts), each once."""
    seen: set[int] = set()
    queue: list[BaseException] = [exc]
    while queue and len(seen) < MAX_WALK:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            queue.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                queue.append(linked)


def timed_out(exc: BaseException) -> bool:
    return any(isinstance(e, TimeoutError) for e in walk(exc))


def is_transient(exc: BaseException) -> bool:
    """Whether another attempt is conceivable at all."""
    return any(isinstance(e, (TimeoutError, CallRefused)) for e in walk(exc))


def is_resendable(exc: BaseException) -> bool:
    """Whether this request may be sent again: transient, and no timeout anywhere."""
    return is_transient(exc) and not timed_out(exc)


def classify(exc: BaseException) -> str:
    """The error a sender is told: a timeout is terminal, never a reason to keep trying."""
    if timed_out(exc):
        return "Failed"
    if any(isinstance(e, NoSuchNode) for e in walk(exc)):
        return "NotFound"
    if any(isinstance(e, CallRefused) for e in walk(exc)):
        return "Unavailable"
    return "Failed"
