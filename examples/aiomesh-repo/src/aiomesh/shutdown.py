"""The stop: stages in descending order; SERVING holds until the legs in flight land.

From the stop's first step nothing new is dispatched, but a refused dispatch is answered,
and its NACK is a leg: one may start in the very instant the last leg lands. A graceful
stop with legs in flight holds SERVING until none is in flight, at most `BUDGET_MS`; then
it names the legs still in flight, oldest first, and goes on. DETACHING cuts what did not
land, closes every hub's gate and deactivates the callees; CLOSING ends the open
subscriptions. A stop that is not graceful holds nothing, and one asked for while a
graceful stop runs (the host gave up waiting) ends the hold at once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh

SERVING, DETACHING, CLOSING = 30, 20, 10
BUDGET_MS = 10_000


class Shutdown:
    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.task: asyncio.Task[None] | None = None
        self.graceful = True
        self._release: asyncio.Future[str] | None = None

    def request(self, graceful: bool) -> None:
        mesh = self.mesh
        if self.task is not None:
            if not graceful and self.graceful and "give-up-ignored" not in mesh.bugs:
                self.graceful = False  # the host gave up: hold no longer
                self._end_hold("cancelled")
            return
        self.graceful = graceful
        mesh.closing = True  # dispatches are refused from now on
        self.task = mesh.loop.create_task(self._run(graceful), name="stop")

    def drained(self) -> None:
        """The last leg in flight ended."""
        self._end_hold("drained")

    def _end_hold(self, why: str) -> None:
        if self._release is not None and not self._release.done():
            self._release.set_result(why)

    def _stage(self, kind: str, stage: int) -> None:
        mesh = self.mesh
        getattr(mesh.observer, kind)(hub="mesh", stage=stage, depth=len(mesh.legs.in_flight))

    async def _run(self, asked_graceful: bool) -> None:
        mesh, legs, obs = self.mesh, self.mesh.legs, self.mesh.observer
        obs.stop_requested(hub="mesh", graceful=asked_graceful, depth=len(legs.in_flight))
        self._stage("stop_stage_entered", SERVING)
        if self.graceful and legs.in_flight and "no-stop-hold" not in mesh.bugs:
            await self._hold()
        self._stage("stop_stage_left", SERVING)
        self._stage("stop_stage_entered", DETACHING)
        await legs.cut()
        for hub in mesh.hubs.values():
            hub.closed = True
        for activation in mesh.activations.values():
            activation.close()
        self._stage("stop_stage_left", DETACHING)
        self._stage("stop_stage_entered", CLOSING)
        for subscription in mesh.subscriptions.values():
            subscription.end()
        self._stage("stop_stage_left", CLOSING)
        mesh.stopped = True
        obs.stop_completed(hub="mesh")

    async def _hold(self) -> None:
        mesh, legs, obs = self.mesh, self.mesh.legs, self.mesh.observer
        obs.stop_hold_started(hub="mesh", depth=len(legs.in_flight))
        self._release = mesh.loop.create_future()
        try:
            async with asyncio.timeout(self.mesh.seconds(BUDGET_MS)):
                why = await self._release
                while why == "drained" and legs.in_flight:  # a NACK started as it drained
                    self._release = mesh.loop.create_future()
                    why = await self._release
        except TimeoutError:
            why = "budget"
            for leg in legs.in_flight.values():
                obs.residual_leg(hub="mesh", leg_id=leg.id, leg_kind=leg.kind,
                                 delivery_id=leg.env.id)
        finally:
            self._release = None
        obs.stop_hold_released(hub="mesh", reason=why, depth=len(legs.in_flight))
