"""The cluster: the nodes of one mesh, where each hub lives, and the staged stop."""
from __future__ import annotations

import asyncio
from typing import Any

from courier.config import STAGE_DETACH, STAGE_FINAL, STAGE_SERVING, Config
from courier.node import Leg, Node
from courier.notices import Parcel
from invariants.aio import emit
from invariants.aio.points import removed


class Cluster:
    def __init__(self, names: list[str], cfg: Config,
                 addresses: dict[str, tuple[str, int]]) -> None:
        self.cfg = cfg
        self.names = list(names)
        self._addresses = addresses
        self.nodes: dict[str, Node] = {n: Node(n, cfg, self) for n in names}
        self.placement: dict[str, str] = {}
        self.watermarks: dict[str, int | None] = {}
        self.legs: dict[str, Leg] = {}
        self.leg_order = 0
        self.late_ok: dict[str, dict[str, Any]] = {}
        self.late_subs: dict[str, Any] = {}
        self.notices: dict[str, Any] = {}
        self.stop_asked = False
        self.stop_done = False
        self.graceful = True
        self.gave_up: asyncio.Event | None = None
        self.drained: asyncio.Event | None = None
        self.epochs = {n: 0 for n in names}
        self.fault_book: Any = None  # under the harness: its armed call faults (else None)
        # open subscriptions: sid -> [home node, subscriber, latest attempt]; the directory's
        # record, so one that a crash or the stop ends is ended once, whoever ends it
        self.subscriptions: dict[str, list[Any]] = {}

    # -- where things are ----------------------------------------------------------------
    def address(self, node: str) -> tuple[str, int]:
        return self._addresses[node]

    def peers(self, node: str) -> list[str]:
        return [n for n in self.names if n != node]

    def node_of(self, hub: str) -> str | None:
        return self.placement.get(hub)

    def now_ms(self) -> int:
        return int(asyncio.get_running_loop().time() * 1000)

    def place(self, hub: str, watermark: int | None = None) -> Node:
        """A new hub, on the node with the fewest hubs (the first such in name order)."""
        node = min(self.names, key=lambda n: (len(self.nodes[n].hubs), self.names.index(n)))
        self.placement[hub] = node
        self.watermarks[hub] = watermark
        h = self.nodes[node].add_hub(hub, watermark)
        emit.hub_created(hub=hub, watermark=h.watermark)
        return self.nodes[node]

    def rebuild(self, name: str) -> Node:
        """A node that restarted: built again, with its hubs and a new incarnation."""
        self.epochs[name] += 1
        node = Node(name, self.cfg, self, epoch=self.epochs[name])
        for hub, where in self.placement.items():
            if where == name:
                made = node.add_hub(hub, self.watermarks[hub])
                if not removed(hub):  # made afresh, empty; a removed hub stays removed
                    emit.hub_created(hub=hub, watermark=made.watermark)
                if self.stop_asked:
                    node.hubs[hub].gate_closed = True
        node.stopping = self.stop_asked
        node.stopped = self.stop_done
        self.lose_legs(name)
        self.nodes[name] = node
        return node

    def lose_legs(self, name: str) -> None:
        """A node crashed: the legs it carried are gone with it. Nobody is left to end them,
        so nothing is said of them (no LEG_ENDED: `failed` would claim an answer is owed);
        they only leave the in-flight count, so a stop's hold does not wait for them."""
        for leg in sorted(self.legs.values(), key=lambda leg: leg.order):
            if leg.node == name:  # type: ignore[attr-defined]
                self.close_leg(leg)
                leg.cut = True

    def crashed(self, name: str) -> None:
        """The failure detector's word that node `name` went down: its legs are lost with it,
        and the subscriptions it ran (its subscribers' own) end there and then."""
        self.lose_legs(name)
        for sid, (home, _subscriber, attempt) in list(self.subscriptions.items()):
            if home == name:
                self.end_subscription(sid, attempt, "retries_exhausted:crashed")

    # -- subscriptions --------------------------------------------------------------------
    def open_subscription(self, sid: str, home: str, subscriber: str) -> None:
        self.subscriptions[sid] = [home, subscriber, 0]

    def subscription_attempt(self, sid: str, attempt: int) -> bool:
        """Note attempt `attempt` of `sid`; False when the subscription has already ended."""
        record = self.subscriptions.get(sid)
        if record is None:
            return False
        record[2] = attempt
        return True

    def close_subscription(self, sid: str) -> bool:
        """Take `sid` off the open list: True for the one caller that ends it."""
        return self.subscriptions.pop(sid, None) is not None

    def end_subscription(self, sid: str, attempt: int | None, reason: str) -> None:
        record = self.subscriptions.pop(sid, None)
        if record is None:
            return
        emit.subscribe_terminated(hub=record[1], subscription_id=sid,
                                  attempt=record[2] if attempt is None else attempt,
                                  reason=reason)

    # -- legs ----------------------------------------------------------------------------
    def open_leg(self, node: Node, kind: str, p: Parcel) -> Leg:
        self.leg_order += 1
        leg = Leg(node.new_id("L"), kind, p.id, self.leg_order)
        leg.node = node.name  # type: ignore[attr-defined]
        self.legs[leg.id] = leg
        if self.drained is not None:
            self.drained.clear()
        return leg

    def close_leg(self, leg: Leg) -> bool:
        if self.legs.pop(leg.id, None) is None:
            return False
        if not self.legs and self.drained is not None:
            self.drained.set()
        return True

    def in_flight(self) -> int:
        return len(self.legs)

    # -- the staged stop -------------------------------------------------------------------
    def request_stop(self, graceful: bool) -> bool:
        """Begin the stop (True: the caller runs `run_stop`); again, non-graceful: give up."""
        if self.stop_asked:
            if not graceful and self.gave_up is not None:
                self.gave_up.set()
            return False
        self.stop_asked, self.graceful = True, graceful
        self.gave_up, self.drained = asyncio.Event(), asyncio.Event()
        if not self.legs:
            self.drained.set()
        emit.stop_requested(hub="courier", graceful=graceful, depth=self.in_flight())
        for node in self.nodes.values():
            node.stopping = True
        return True

    async def run_stop(self) -> None:
        assert self.gave_up is not None and self.drained is not None
        cfg = self.cfg
        emit.stop_stage_entered(hub="courier", stage=STAGE_SERVING, depth=self.in_flight())
        if self.graceful and not self.gave_up.is_set() and self.legs:
            emit.stop_hold_started(hub="courier", depth=self.in_flight())
            reason = await self._hold(cfg.stop_budget_ms / 1000)
            if reason == "budget":
                for leg in sorted(self.legs.values(), key=lambda leg: leg.order):
                    emit.residual_leg(hub="courier", leg_id=leg.id, leg_kind=leg.kind,
                                      delivery_id=leg.parcel_id)
            emit.stop_hold_released(hub="courier", reason=reason, depth=self.in_flight())
        emit.stop_stage_left(hub="courier", stage=STAGE_SERVING, depth=self.in_flight())
        for leg in sorted(self.legs.values(), key=lambda leg: leg.order):
            self._cut(leg)
        emit.stop_stage_entered(hub="courier", stage=STAGE_DETACH, depth=self.in_flight())
        for node in self.nodes.values():
            for hub in node.hubs.values():
                hub.gate_closed = True
        emit.stop_stage_left(hub="courier", stage=STAGE_DETACH, depth=self.in_flight())
        emit.stop_stage_entered(hub="courier", stage=STAGE_FINAL, depth=self.in_flight())
        for sid in sorted(self.subscriptions,
                          key=lambda sid: int(sid[1:]) if sid[1:].isdigit() else 0):
            self.end_subscription(sid, None, "silo_stopped")
        for node in self.nodes.values():
            for task in list(node.subs.values()):
                task.cancel()
            node.stopped = True
        await asyncio.sleep(0)
        emit.stop_stage_left(hub="courier", stage=STAGE_FINAL, depth=self.in_flight())
        self.stop_done = True
        emit.stop_completed(hub="courier")

    async def _hold(self, budget_s: float) -> str:
        assert self.gave_up is not None and self.drained is not None
        waits = {asyncio.ensure_future(self.drained.wait()): "drained",
                 asyncio.ensure_future(self.gave_up.wait()): "cancelled"}
        if self.cfg.bug("c08"):
            waits[asyncio.ensure_future(self._cut_unreceipted())] = "unused"
        if self.cfg.bug("c03"):
            first = asyncio.ensure_future(self._first_leg_ends())
            waits = {first: "drained", **waits}
        done, pending = await asyncio.wait(waits, timeout=budget_s,
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        if not done:
            return "budget"
        return min((waits[t] for t in done if waits[t] != "unused"),
                   key=["cancelled", "drained"].index)

    async def _cut_unreceipted(self) -> None:
        """Legs whose peer never said it got the request: nothing there to wait for."""
        await asyncio.sleep(0.5)
        for leg in sorted(self.legs.values(), key=lambda leg: leg.order):
            if leg.kind != "nack" and not leg.receipt:
                self._cut(leg)
        await asyncio.Event().wait()

    async def _first_leg_ends(self) -> None:
        start = set(self.legs)
        while set(self.legs) >= start:
            await asyncio.sleep(0.001)

    def _cut(self, leg: Leg) -> None:
        node = self.nodes[leg.node]  # type: ignore[attr-defined]
        node.close_leg(leg, "drained")
        leg.cut = True
        if leg.task is not None and not leg.task.done():
            leg.task.cancel()
