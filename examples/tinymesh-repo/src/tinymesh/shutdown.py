"""The graceful stop: stages in descending order; SERVING holds until the legs drain.

From the first step no new letter is dispatched (the couriers turn them away), so the
in-flight count only falls; SERVING waits for it to reach zero, at most `BUDGET_MS`,
then names what is left, oldest first. DETACHING cuts what did not land and closes the
mailboxes' gates; FINAL ends the open watches. A stop that is not graceful holds nothing,
and one asked for while a graceful stop runs (the host gave up waiting) ends its hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinymesh.clock import Timer

if TYPE_CHECKING:
    from tinymesh.mesh import TinyMesh

SERVING, DETACHING, FINAL = 300, 200, 100
BUDGET_MS = 20_000


class Shutdown:
    def __init__(self, mesh: TinyMesh) -> None:
        self.mesh = mesh
        self.begun = False
        self.graceful = True
        self._budget: Timer | None = None
        self._next: Timer | None = None

    def begin(self, graceful: bool) -> None:
        if self.begun:
            if not graceful and self.graceful:  # the host gave up: hold no longer
                self.graceful = False
                if self.mesh.courier.on_drained is not None:
                    self._release("cancelled")
            return
        mesh = self.mesh
        self.begun, self.graceful = True, graceful
        mesh.courier.closing = True
        mesh.log.write(mesh.clock.now, "stop_begin", box="mesh", graceful=graceful,
                       depth=len(mesh.courier.in_flight))
        self._next = mesh.clock.after(0, self._serving)

    def _stage(self, what: str, stage: int) -> None:
        mesh = self.mesh
        mesh.log.write(mesh.clock.now, what, box="mesh", stage=stage,
                       depth=len(mesh.courier.in_flight))

    def _serving(self) -> None:
        courier = self.mesh.courier
        self._stage("stage_in", SERVING)
        if not self.graceful or not courier.in_flight:
            self._leave_serving()
            return
        self.mesh.log.write(self.mesh.clock.now, "hold_on", box="mesh",
                            depth=len(courier.in_flight))
        courier.on_drained = lambda: self._release("drained")
        self._budget = self.mesh.clock.after(BUDGET_MS, lambda: self._release("budget"))

    def _release(self, why: str) -> None:
        mesh, courier = self.mesh, self.mesh.courier
        courier.on_drained = None
        if self._budget is not None:
            self._budget.cancel()
        if why == "budget":
            for leg in courier.in_flight.values():
                mesh.log.write(mesh.clock.now, "leftover", box="mesh", leg=leg.id,
                               trip=leg.trip, letter=leg.letter.id)
        mesh.log.write(mesh.clock.now, "hold_off", box="mesh", why=why,
                       depth=len(courier.in_flight))
        self._leave_serving()

    def _leave_serving(self) -> None:
        mesh = self.mesh
        self._stage("stage_out", SERVING)
        self._stage("stage_in", DETACHING)
        mesh.courier.cut()
        for box in mesh.boxes.values():
            box.closed = True
        self._stage("stage_out", DETACHING)
        self._stage("stage_in", FINAL)
        for watch in mesh.watches.values():
            watch.end()
        self._stage("stage_out", FINAL)
        mesh.stopped = True
        mesh.log.write(mesh.clock.now, "stop_done", box="mesh")
