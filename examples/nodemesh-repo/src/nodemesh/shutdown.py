"""A node's staged stop: the phase it is in, the stages in order, and the graceful hold.

QUIESCE refuses new work and, for a graceful stop, holds while the node's legs are in
flight: until they drain, the budget runs out (the legs left behind are named, oldest
first), or the host gives up on the stop. DETACH and DISCONNECT are the node's own steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from enum import Enum

from .legs import LegBook
from .observer import Observer
from .settings import Settings, Stage


class Phase(Enum):
    RUNNING = "running"
    STOPPING = "stopping"  # new work refused; DeliveryFailures still travel and land
    DETACHED = "detached"  # legs cut, hubs closed
    STOPPED = "stopped"


Step = Callable[[], Awaitable[None]]


class Shutdown:
    def __init__(self, node: str, settings: Settings, observer: Observer) -> None:
        self.node = node
        self.phase = Phase.RUNNING
        self._budget_s = settings.stop_budget_ms / 1000
        self._bugs = settings.bugs
        self._observer = observer
        self._wake = asyncio.Event()
        self._gave_up = False
        self._begun = False
        self._done = asyncio.Event()

    def legs_idle(self) -> None:
        """The last leg in flight ended, or the last request from a peer was answered."""
        self._wake.set()

    async def stop(self, graceful: bool, legs: LegBook, *, detach: Step,
                   disconnect: Step, answering: Callable[[], int] = lambda: 0) -> None:
        """`answering`: how many requests from peers the node is still answering; a
        graceful stop holds for them too (their callers' legs are in flight until then)."""
        if self._begun:
            if not graceful:  # the host gave up on the stop under way
                self._gave_up = True
                if "n06" not in self._bugs:
                    self._wake.set()
            await self._done.wait()
            return
        self._begun = True
        self.phase = Phase.STOPPING
        try:
            self._observer.stop_asked(self.node, graceful=graceful, in_flight=legs.count)
            self._enter(Stage.QUIESCE, legs)
            if graceful and (legs.count or answering()):
                await self._hold(legs, answering)
            self._leave(Stage.QUIESCE, legs)
            self._enter(Stage.DETACH, legs)
            self.phase = Phase.DETACHED
            await legs.cut_all()
            await detach()
            self._leave(Stage.DETACH, legs)
            self._enter(Stage.DISCONNECT, legs)
            await disconnect()
            self.phase = Phase.STOPPED
            self._leave(Stage.DISCONNECT, legs)
            self._observer.stopped(self.node)
        finally:
            self._done.set()

    async def _hold(self, legs: LegBook, answering: Callable[[], int]) -> None:
        self._observer.hold_began(self.node, in_flight=legs.count)
        reason = "drained"
        try:
            async with asyncio.timeout(self._budget_s):
                while (legs.count or answering()) and not self._gave_up:
                    self._wake.clear()
                    await self._wake.wait()
        except TimeoutError:
            reason = "budget"
            for leg in legs.in_flight():
                self._observer.left_behind(self.node, leg)
        if reason == "drained" and (legs.count or answering()):
            reason = "cancelled"
        self._observer.hold_ended(self.node, reason=reason, in_flight=legs.count)

    def _enter(self, stage: Stage, legs: LegBook) -> None:
        self._observer.stage_entered(self.node, int(stage), in_flight=legs.count)

    def _leave(self, stage: Stage, legs: LegBook) -> None:
        self._observer.stage_left(self.node, int(stage), in_flight=legs.count)
