"""Faults a grain call can end in, and the walk over a whole exception graph.

Faults arrive wrapped (aggregates from two transports, causes from catch arms), and which
one sits first is a race; so every classification walks the whole graph, not one chain.
"""

from __future__ import annotations

from collections.abc import Iterator

from reference_impl.constants import EXCEPTION_GRAPH_CAP


class ResponseTimeout(TimeoutError):
    """The caller gave up waiting; the callee accepted the call and still holds it."""


class RejectionError(Exception):
    """The callee refused the call (invalid activation): it holds nothing."""


class ShuttingDownError(RejectionError):
    """Refused because the silo is stopping."""


class DirectoryUnstableError(Exception):
    """Placement could not be resolved right now."""


class TargetNotFoundError(Exception):
    """No hub lives at the target address."""


def walk_exception_graph(
    root: BaseException, cap: int = EXCEPTION_GRAPH_CAP
) -> Iterator[BaseException]:
    """Every exception reachable through group members, __cause__ and __context__,
    breadth first, each once (cycles are safe), at most `cap` nodes."""
    seen: set[int] = set()
    queue = [root]
    head = 0
    while head < len(queue) and len(seen) < cap:
        exc = queue[head]
        head += 1
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        if isinstance(exc, BaseExceptionGroup):
            queue.extend(exc.exceptions)
        if exc.__cause__ is not None:
            queue.append(exc.__cause__)
        if exc.__context__ is not None:
            queue.append(exc.__context__)


def graph_contains(root: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    return any(isinstance(exc, kinds) for exc in walk_exception_graph(root))
