"""Legs: work this node sent to another node, counted from dispatch to its end.

A graceful stop holds while any is in flight. Each leg runs in a task of its own, so the
stop can cut it without cancelling whoever waits for its outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from .envelope import Envelope
from .observer import Observer


@dataclass(frozen=True)
class Outcome:
    """How a delivery's attempts ended."""

    ok: bool
    value: Any = None
    error: str | None = None
    timed_out: bool = False


CUT = Outcome(ok=False, error="Cut")


@dataclass(frozen=True)
class Leg:
    id: str
    kind: str    # 'post', 'call' or 'answer' (a DeliveryFailure travelling)
    peer: str    # the node it went to
    env_id: str


class LegBook:
    def __init__(self, node: str, observer: Observer, on_idle: Callable[[], None], *,
                 tag: str | None = None) -> None:
        self._node = node
        self._tag = tag or node  # what leg ids start with
        self._observer = observer
        self._on_idle = on_idle
        self._open: dict[Leg, asyncio.Task[Outcome]] = {}  # in dispatch order
        self._numbered = 0

    @property
    def count(self) -> int:
        return len(self._open)

    def in_flight(self) -> list[Leg]:
        """The legs in flight, oldest first."""
        return list(self._open)

    def open(self, kind: str, env: Envelope, peer: str,
             work: Coroutine[Any, Any, Outcome]) -> asyncio.Task[Outcome]:
        self._numbered += 1
        leg = Leg(f"{self._tag}.L{self._numbered}", kind, peer, env.id)
        task = asyncio.get_running_loop().create_task(work, name=f"leg {leg.id}")
        self._open[leg] = task
        self._observer.leg_opened(self._node, leg, env, in_flight=self.count)
        task.add_done_callback(lambda done: self._closed(leg, done))
        return task

    def _closed(self, leg: Leg, task: asyncio.Task[Outcome]) -> None:
        del self._open[leg]
        outcome = "cut" if task.cancelled() else "landed" if task.result().ok else "failed"
        self._observer.leg_closed(self._node, leg, outcome=outcome, in_flight=self.count)
        if not self._open:
            self._on_idle()

    async def cut_all(self) -> None:
        """Cut every leg in flight and wait until each has ended."""
        tasks = list(self._open.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)


async def outcome_of(task: asyncio.Task[Outcome]) -> Outcome:
    """Wait for a leg's outcome; a leg the stop cut is `CUT`, not the waiter's cancellation."""
    await asyncio.wait([task])
    return CUT if task.cancelled() else task.result()
