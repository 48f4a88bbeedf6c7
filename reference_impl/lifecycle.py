"""The silo stop: lifecycle stages in descending order, each with its participants.

From the first stop step new dispatches are refused (ShuttingDown), so the routing gauge
only falls; the routing-quiescence participant at Active holds the stop until it is zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from invariants.trace import EventKind
from reference_impl.constants import (
    STAGE_ACTIVE,
    STAGE_FIRST,
    STAGE_GRAIN_DEACTIVATION,
    STAGE_RUNTIME_SERVICES,
    STOP_STAGES,
)
from reference_impl.quiescence import RoutingQuiescenceParticipant

if TYPE_CHECKING:
    from reference_impl.mesh import Mesh

Done = Callable[[], None]


class Silo:
    """Owns the stop sequence. `refusing` is true from the first stop step on."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.refusing = False
        self.stopped = False
        self.graceful = True
        self.quiescence = RoutingQuiescenceParticipant(mesh, self)
        self.deactivation_depth: int | None = None  # gauge seen by GrainDeactivation
        self._participants: dict[int, Callable[[Done], None]] = {
            STAGE_ACTIVE: self.quiescence.on_active_stop,
            STAGE_GRAIN_DEACTIVATION: self._deactivate_grains,
            STAGE_RUNTIME_SERVICES: self._block_application_messages,
            STAGE_FIRST: self._drain_pool,
        }

    def stop(self, *, graceful: bool = True) -> None:
        """Begin the stop. Once begun, a further graceful stop changes nothing and a
        non-graceful one cancels an Active-stage hold (the host gave up waiting)."""
        if self.refusing:
            if not graceful:  # the host gave up: the token is cancelled from now on
                self.graceful = False
                self.quiescence.cancel()
            return
        self.graceful = graceful
        self.refusing = True
        self.mesh.trace.emit(EventKind.STOP_REQUESTED, hub="silo", graceful=graceful,
                             depth=self.mesh.pool.in_flight)
        self.mesh.scheduler.at(self.mesh.scheduler.now, self._enter, 0)

    def _enter(self, index: int) -> None:
        if index == len(STOP_STAGES):
            self.stopped = True
            self.mesh.trace.emit(EventKind.STOP_COMPLETED, hub="silo")
            for subscription in self.mesh.subscriptions.values():
                subscription.terminate("silo_stopped")  # its hub is gone with the silo
            return
        stage = STOP_STAGES[index]
        self.mesh.trace.emit(EventKind.STOP_STAGE_ENTERED, hub="silo", stage=stage,
                             depth=self.mesh.pool.in_flight)
        participant = self._participants.get(stage)
        if participant is None:
            self._leave(index)
        else:
            participant(lambda: self._leave(index))

    def _leave(self, index: int) -> None:
        self.mesh.trace.emit(EventKind.STOP_STAGE_LEFT, hub="silo", stage=STOP_STAGES[index],
                             depth=self.mesh.pool.in_flight)
        self.mesh.scheduler.at(self.mesh.scheduler.now, self._enter, index + 1)

    def _deactivate_grains(self, done: Done) -> None:
        self.deactivation_depth = self.mesh.pool.in_flight
        self.mesh.activations.deactivate_all()
        done()

    def _block_application_messages(self, done: Done) -> None:
        for address in sorted(self.mesh.hubs):
            self.mesh.hubs[address].gated = True
        done()

    def _drain_pool(self, done: Done) -> None:
        self.mesh.pool.drain()
        done()
