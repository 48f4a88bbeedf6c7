"""Call failures and the ladder that decides what may be re-sent.

is_transient ⊇ is_resendable ⊇ (classify == "ShuttingDown"). A timeout means the callee
accepted the call and may still run it, so nothing with a timeout anywhere in its
exception graph (groups, causes, contexts) is ever re-sent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

GRAPH_LIMIT = 256  # exception nodes walked at most


class CallError(Exception):
    """A call between hubs failed."""


class CallRefused(CallError):
    """The callee refused the call and holds nothing: safe to send again."""


class CalleeClosing(CallError):
    """The callee's gate is closed for the stop; it holds nothing."""


class CallTimedOut(CallError, TimeoutError):
    """The caller stopped waiting; the callee accepted the call and may still run it."""


class NoSuchHub(CallError):
    """The call's target does not exist."""


def exception_graph(exc: BaseException) -> Iterator[BaseException]:
    """Every exception reachable from `exc` (breadth first, each once, at most GRAPH_LIMIT)."""
    seen: dict[int, None] = {}
    todo: deque[BaseException] = deque([exc])
    while todo and len(seen) < GRAPH_LIMIT:
        node = todo.popleft()
        if id(node) in seen:
            continue
        seen[id(node)] = None
        yield node
        if isinstance(node, BaseExceptionGroup):
            todo.extend(node.exceptions)
        for linked in (node.__cause__, node.__context__):
            if linked is not None:
                todo.append(linked)


def _any(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    return any(isinstance(node, kinds) for node in exception_graph(exc))


def has_timeout(exc: BaseException) -> bool:
    return _any(exc, (TimeoutError,))


def is_transient(exc: BaseException) -> bool:
    """Could another attempt conceivably succeed?"""
    return _any(exc, (TimeoutError, CallRefused, CalleeClosing))


def is_resendable(exc: BaseException) -> bool:
    """May this call be sent again? Transient, and no timeout anywhere in the graph."""
    return is_transient(exc) and not has_timeout(exc)


def classify(exc: BaseException) -> str:
    """The error an Undeliverable names for a call that finally failed."""
    if has_timeout(exc):
        return "Failed"  # terminal: a transient answer would arm retries at a wedged callee
    if _any(exc, (NoSuchHub,)):
        return "NotFound"
    if _any(exc, (CalleeClosing,)):
        return "ShuttingDown"
    if _any(exc, (CallRefused,)):
        return "Unavailable"
    return "Failed"
