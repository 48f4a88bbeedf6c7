"""The routing pool: route legs and NACKs as counted operations, and the in-flight gauge.

Every leg runs from dispatch to termination inside the pool; its timers belong to it, so
ending (or draining) a leg cancels everything it still had scheduled. The gauge counts
legs in flight; saturation is logged once on crossing 64 and cleared on falling to 32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from invariants.trace import EventKind
from reference_impl.constants import SATURATION_HIGH, SATURATION_LOW
from reference_impl.envelope import Delivery
from reference_impl.scheduler import Scheduler, Timer
from reference_impl.tracing import TraceRecorder

ROUTE = "route"
NACK = "nack"


class LegHandle:
    """A running leg. `pool` is None for an operation started outside the pool (detached):
    it is neither counted nor drained."""

    __slots__ = (
        "delivery_id", "ended", "kind", "leg_id", "pool", "scheduler", "started_ms", "timers",
    )

    def __init__(
        self,
        pool: RoutingPool | None,
        scheduler: Scheduler,
        leg_id: str,
        kind: str,
        delivery_id: str,
    ) -> None:
        self.pool = pool
        self.scheduler = scheduler
        self.leg_id = leg_id
        self.kind = kind
        self.delivery_id = delivery_id
        self.started_ms = scheduler.now
        self.ended = False
        self.timers: list[Timer] = []

    def schedule(self, delay_ms: int, callback: Callable[..., None], *args: Any) -> Timer:
        """A timer owned by this leg (cancelled when the leg ends)."""
        scheduler = self.scheduler
        # `scheduler.after`, one call (and one unpacking of `args`) fewer: every routed hop.
        timer = scheduler.at(scheduler.now + delay_ms, callback, *args)
        self.timers.append(timer)
        return timer

    def end(self, reason: str = "completed") -> None:
        if self.ended:
            return
        self.ended = True
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()  # timers hold the leg: break the cycle so refcounting frees it
        if self.pool is not None:
            self.pool.leg_ended(self, reason)


class LegOperation:
    """A cold routing operation: nothing happens until it is started in a leg."""

    kind = ROUTE

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery
        self.delivery_id = delivery.id

    def run(self, leg: LegHandle) -> None:
        raise NotImplementedError

    def subscribe(self, scheduler: Scheduler) -> LegHandle:
        """Start outside any pool: uncounted and undrained (the detached shape)."""
        leg_id = f"detached-{self.delivery_id}"
        leg = LegHandle(None, scheduler, leg_id, self.kind, self.delivery_id)
        self.run(leg)
        return leg


class RoutingPool:
    """Runs legs and keeps the in-flight gauge."""

    def __init__(self, scheduler: Scheduler, trace: TraceRecorder) -> None:
        self.scheduler = scheduler
        self.trace = trace
        self.in_flight = 0
        self.saturated = False
        self._legs: dict[str, LegHandle] = {}  # insertion order = oldest first
        self._next_id = 0
        self._idle_waiters: list[Callable[[], None]] = []

    def subscribe(self, operation: LegOperation) -> LegHandle:
        """Start `operation` as a counted leg; the returned handle is the leg."""
        self._next_id += 1
        leg = LegHandle(self, self.scheduler, f"L{self._next_id}", operation.kind,
                        operation.delivery_id)
        self._legs[leg.leg_id] = leg
        self.in_flight += 1
        self.trace.leg_started(leg.leg_id, leg.kind, leg.delivery_id, operation.delivery,
                               self.in_flight)
        if not self.saturated and self.in_flight >= SATURATION_HIGH:
            self.saturated = True
            self.trace.emit(EventKind.SATURATION_LOGGED, depth=self.in_flight)
        operation.run(leg)
        return leg

    def leg_ended(self, leg: LegHandle, reason: str) -> None:
        del self._legs[leg.leg_id]
        self.in_flight -= 1
        self.trace.leg_ended(leg.leg_id, leg.kind, leg.delivery_id, self.in_flight, reason)
        if self.saturated and self.in_flight <= SATURATION_LOW:
            self.saturated = False
            self.trace.emit(EventKind.SATURATION_CLEARED, depth=self.in_flight)
        if self.in_flight == 0 and self._idle_waiters:
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                waiter()

    def when_idle(self, waiter: Callable[[], None]) -> None:
        """Call `waiter` once the gauge reaches zero (at once when it already is)."""
        if self.in_flight == 0:
            waiter()
        else:
            self._idle_waiters.append(waiter)

    def forget_waiter(self, waiter: Callable[[], None]) -> None:
        if waiter in self._idle_waiters:
            self._idle_waiters.remove(waiter)

    def legs_oldest_first(self) -> list[LegHandle]:
        return list(self._legs.values())

    def drain(self) -> None:
        """Terminate every leg still in flight (the pool's teardown at stage First)."""
        for leg in self.legs_oldest_first():
            leg.end("drained")
