"""Call errors and the retry ladder: transient ⊇ resendable ⊇ shutting down.

A rejection means the callee refused the call and holds nothing: sending it again is
safe. A response timeout means the callee accepted it and has not answered yet: it still
holds the call and will still run it, so sending it again runs it twice. The walk covers
the whole exception graph (group members, causes, contexts not suppressed), cycle-safe
and bounded.
"""

from __future__ import annotations

from collections.abc import Iterator


class CallError(Exception):
    pass


class Rejected(CallError):
    """The callee refused the call (no activation to take it)."""


class ShuttingDown(CallError):
    """The callee is stopping and takes nothing more."""


class NotFound(CallError):
    """No such hub."""


class ResponseTimeout(CallError, TimeoutError):
    """No reply within the response timeout: the callee may still hold the call."""


class DeliveryFailed(Exception):
    """A subscription request was answered with a DeliveryFailure."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


MAX_NODES = 256


def walk(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    queue = [exc]
    while queue and len(seen) < MAX_NODES:
        node = queue.pop(0)
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, BaseExceptionGroup):
            queue.extend(node.exceptions)
        if node.__cause__ is not None:
            queue.append(node.__cause__)
        if node.__context__ is not None and not node.__suppress_context__:
            queue.append(node.__context__)


def is_timeout(exc: BaseException) -> bool:
    return any(isinstance(e, TimeoutError) for e in walk(exc))


def is_transient(exc: BaseException) -> bool:
    """Another attempt is conceivable (the idempotent retry may use this)."""
    return any(isinstance(e, TimeoutError | Rejected | ShuttingDown) for e in walk(exc))


def is_resendable(exc: BaseException) -> bool:
    """The request may be sent again: transient, and no timeout anywhere in it."""
    return is_transient(exc) and not is_timeout(exc)


def classify(exc: BaseException) -> str:
    """The error a DeliveryFailure answering this call carries."""
    nodes = list(walk(exc))
    if any(isinstance(e, ShuttingDown) for e in nodes):
        return "ShuttingDown"
    if any(isinstance(e, NotFound) for e in nodes):
        return "NotFound"
    return "Failed"


def name(exc: BaseException) -> str:
    return type(exc).__name__
