"""The staged stop.

`begin()` is the first step and is synchronous: from it on the routers refuse new
dispatches, so the count of legs in flight only falls. The stages then run from
the highest number down. At ACCEPTING a graceful stop holds while legs are in
flight, waiting on an `asyncio.Event` the leg count sets, for at most the stop
budget (then it names the legs left, oldest first); a non-graceful stop holds
nothing, and a graceful one the host gives up on stops holding at once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from relaycore.config import Stage

if TYPE_CHECKING:
    from relaycore.relay import Relay

HUB = "relay"


class Shutdown:
    def __init__(self, relay: Relay) -> None:
        self._relay = relay
        self.phase = "running"  # then "stopping", then "stopped"
        self.graceful = True
        self._wake = asyncio.Event()

    def begin(self, graceful: bool) -> bool:
        """Start the stop; True when the caller must now run `stages()`.

        Asked again with `graceful=False` while a graceful stop runs, the host has given
        up on it: a hold ends at once, and ACCEPTING, if not reached yet, holds nothing.
        """
        if self.phase == "running":
            self.phase = "stopping"
            self.graceful = graceful
            # From here on the routers refuse new dispatches (a stop that cuts at once has
            # nothing to wait for, so it needs no refusals).
            self._relay.switchboard.closing = graceful or "b17" not in self._relay.bugs
            self._relay.tel("stop_requested", hub=HUB, graceful=graceful,
                            depth=self._relay.gauge.count)
            return True
        if self.phase == "stopping" and not graceful and self.graceful:
            self.graceful = False
            self._wake.set()
        return False

    def legs_changed(self) -> None:
        if self._relay.gauge.count == 0:
            self._wake.set()

    async def stages(self) -> None:
        relay = self._relay
        for stage in sorted(Stage, reverse=True):
            relay.tel("stop_stage_entered", hub=HUB, stage=int(stage), depth=relay.gauge.count)
            if stage is Stage.ACCEPTING:
                await self._hold()
            elif stage is Stage.DETACHING:
                relay.drop_held_calls()
            elif stage is Stage.SEALING:
                relay.seal_nodes()
            elif stage is Stage.FINAL:
                relay.cut_everything()
            relay.tel("stop_stage_left", hub=HUB, stage=int(stage), depth=relay.gauge.count)
        self.phase = "stopped"
        relay.tel("stop_completed", hub=HUB)

    async def _hold(self) -> None:
        gauge = self._relay.gauge
        if not self.graceful or gauge.count == 0:
            return
        self._relay.tel("stop_hold_started", hub=HUB, depth=gauge.count)
        try:
            async with asyncio.timeout(self._relay.config.stop_budget_ms / 1000):
                while gauge.count and self.graceful:
                    self._wake.clear()
                    await self._wake.wait()
        except TimeoutError:
            pass
        if not self.graceful:
            reason = "cancelled"
        elif gauge.count:
            reason = "budget"
            residual = gauge.in_flight()
            if "b10" in self._relay.bugs:
                residual.reverse()  # the most recent first
            for leg in residual:
                self._relay.tel("residual_leg", hub=HUB, leg_id=leg.id, leg_kind=leg.kind,
                                delivery_id=leg.delivery_id)
        else:
            reason = "drained"
        self._relay.tel("stop_hold_released", hub=HUB, reason=reason, depth=gauge.count)
