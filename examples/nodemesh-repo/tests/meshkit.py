"""Helpers for the tests: a running mesh with an event log, hubs that keep what they get."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from nodemesh import Cluster, Envelope, EventLog, Hooks, Node, Settings

T = TypeVar("T")

# Fast backoffs; a response timeout no healthy call on a loaded machine comes near.
QUICK = Settings(response_timeout_ms=5000, backoff_base_ms=1, backoff_cap_ms=4,
                 stop_budget_ms=5000)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run on the stock loop, bounded so a hang fails the test instead of CI."""
    return asyncio.run(asyncio.wait_for(coro, 20))


@asynccontextmanager
async def mesh(names: Sequence[str] = ("n1", "n2"), settings: Settings = QUICK,
               hooks: Hooks | None = None) -> AsyncIterator[tuple[Cluster, EventLog]]:
    log = EventLog()
    cluster = Cluster(names, settings=settings, observer=log, hooks=hooks)
    await cluster.start()
    try:
        yield cluster, log
    finally:
        await cluster.stop(graceful=False)


def keeper(node: Node, hub: str) -> list[Envelope]:
    """Open `hub` on `node` with a handler that keeps every envelope it handles."""
    kept: list[Envelope] = []

    async def keep(env: Envelope) -> object:
        kept.append(env)
        return env.body
    node.open_hub(hub, keep)
    return kept


def gate(node: Node, hub: str) -> asyncio.Event:
    """Open `hub` with a handler that waits for the returned event, then answers 'done'."""
    opened = asyncio.Event()

    async def wait(env: Envelope) -> object:
        await opened.wait()
        return "done"
    node.open_hub(hub, wait)
    return opened


async def until(condition: Callable[[], bool], limit_s: float = 5) -> None:
    """Let the mesh run until `condition()` holds; a wait that never ends fails at `limit_s`."""
    async with asyncio.timeout(limit_s):
        while not condition():
            await asyncio.sleep(0)
