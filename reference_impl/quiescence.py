"""Routing quiescence: the Active-stage stop participant that lets accepted work land.

It holds the silo stop until the routing gauge (route legs and NACKs) is zero, at most the
30 s budget; on expiry it names the residual legs, oldest first, and releases. A
non-graceful stop (token already cancelled) holds nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from invariants.trace import EventKind
from reference_impl.constants import STOP_BUDGET_MS
from reference_impl.scheduler import Timer

if TYPE_CHECKING:
    from reference_impl.lifecycle import Silo
    from reference_impl.mesh import Mesh

Done = Callable[[], None]


class RoutingQuiescenceParticipant:
    def __init__(self, mesh: Mesh, silo: Silo, budget_ms: int = STOP_BUDGET_MS) -> None:
        self.mesh = mesh
        self.silo = silo
        self.budget_ms = budget_ms
        self._done: Done | None = None
        self._budget_timer: Timer | None = None

    @property
    def holding(self) -> bool:
        return self._done is not None

    def on_active_stop(self, done: Done) -> None:
        if not self.silo.graceful:
            done()  # a non-graceful stop holds nothing
            return
        self.hold_until_drained(done)

    def hold_until_drained(self, done: Done) -> None:
        """Hold the stop until the gauge is zero or the budget is spent."""
        pool = self.mesh.pool
        self._done = done
        self.mesh.trace.emit(EventKind.STOP_HOLD_STARTED, hub="silo", depth=pool.in_flight)
        self._budget_timer = self.mesh.scheduler.after(self.budget_ms, self._budget_spent)
        pool.when_idle(self._drained)

    def _drained(self) -> None:
        self._release("drained")

    def _budget_spent(self) -> None:
        for leg in self.mesh.pool.legs_oldest_first():
            self.mesh.trace.emit(EventKind.RESIDUAL_LEG, hub="silo", leg_id=leg.leg_id,
                                 leg_kind=leg.kind, delivery_id=leg.delivery_id)
        self._release("budget")

    def cancel(self) -> None:
        """The host's own shutdown budget expired mid-hold: release at once."""
        self._release("cancelled")

    def _release(self, reason: str) -> None:
        done = self._done
        if done is None:
            return
        self._done = None
        if self._budget_timer is not None:
            self._budget_timer.cancel()
            self._budget_timer = None
        self.mesh.pool.forget_waiter(self._drained)
        self.mesh.trace.emit(EventKind.STOP_HOLD_RELEASED, hub="silo", reason=reason,
                             depth=self.mesh.pool.in_flight)
        done()
