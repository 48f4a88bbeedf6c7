"""`AsyncMeshAdapter`: the adapter protocol over a virtual loop, for a mesh of asyncio code.

A subclass builds its mesh on `self.loop` and implements what is the mesh's own:
`create_hub`, `post`, `subscribe`, `stop` (and `on_fault` for what a fault does beyond
the fault book: removing a hub, say). The base class provides the rest of the protocol:
`advance`, `run_until_idle`, `now_ms`, `trace`, `inject` (the `FAULT_INJECTED` event, the
fault book, `TURN_BLOCKED` / `TURN_RELEASED` around a block), and `capabilities`.

`spawn(coro)` schedules the mesh's coroutine as an arrival of its own and runs nothing: a
`post` that spawns its delivery is carried out by the next `advance` or `run_until_idle`,
so "post, then advance" means what it means on any adapter, and two posts before one
`advance` are independent (the chooser may run either first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar, Unpack

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio.faultbook import FaultBook
from invariants.aio.loop import DEFAULT_STEP_BUDGET, VirtualLoop
from invariants.aio.net.network import Network
from invariants.aio.rig import Rig, active
from invariants.aio.schedule import Legality, Schedule, render_schedule
from invariants.aio.tracelog import TraceFields, TraceLog
from invariants.capabilities import DEFAULT_CAPABILITIES, NETWORK_FAULTS
from invariants.trace import EventKind, Scalar, TraceEvent

_T = TypeVar("_T")


class AsyncMeshAdapter:
    """The `MeshAdapter` protocol over a `VirtualLoop` driven by the harness's chooser."""

    # What the mesh models: a subclass names its own; an instance may add a mode it was
    # built in (at least once, say).
    capabilities: frozenset[Capability] = DEFAULT_CAPABILITIES
    # Which callbacks a step schedules is asyncio's own business and changes between
    # Python versions: a saved choice sequence replays another schedule on another one, so
    # saved failures are keyed by the Python version (invariants.dynamic.mesh_keys).
    schedule_portable: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The loop marks its timer ties, whatever else the subclass names.
        super().__init_subclass__(**kwargs)
        cls.capabilities = frozenset(cls.capabilities) | {Capability.TIMER_TIES}

    def __init__(
        self,
        chooser: Chooser,
        *,
        legality: Legality | str = Legality.PRODUCTION,
        replay: Schedule | None = None,
        step_budget: int | None = DEFAULT_STEP_BUDGET,
    ) -> None:
        self.chooser = chooser
        self.loop = VirtualLoop(chooser, legality=legality, replay=replay,
                                step_budget=step_budget)
        self.rig = Rig(
            trace=TraceLog(lambda: self.loop.now_ms),
            faults=FaultBook(self.loop, on_block=self._turn_blocked,
                             on_release=self._turn_released),
        )
        self.loop.rig = self.rig

    # The mesh's own part of the protocol.

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement create_hub")

    def post(
        self, sender: str, target: str, message: MessageSpec, *,
        identity: str | None = "user", route: Route = Route.MONOLITH,
    ) -> str:
        raise NotImplementedError(f"{type(self).__name__} must implement post")

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        raise NotImplementedError(f"{type(self).__name__} must implement subscribe")

    def stop(self, *, graceful: bool = True) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement stop")

    def on_fault(self, fault: Fault) -> None:
        """What `fault` does to the mesh beyond the fault book (removing a hub, say)."""

    def has_hub(self, address: str) -> bool:
        """Whether `address` is a hub: a block of one that is not emits no turn events."""
        return True

    # The protocol's clock and trace.

    def advance(self, ms: int) -> None:
        self.loop.advance(ms)  # the loop checks `ms`, as for every entry point

    def run_until_idle(self, limit_ms: int) -> bool:
        return self.loop.run_until_idle(limit_ms)

    def now_ms(self) -> int:
        return self.loop.now_ms

    def timers_due_ms(self) -> list[int]:
        """When the timers the mesh has armed fall due (virtual ms, each instant once,
        soonest first, later than now): the harness aims work at them, so that a post or
        a call lands in the instant a mesh's own timer fires."""
        return list(dict.fromkeys(us // 1000 for us in self.loop.due_instants_us()))

    def trace(self) -> Sequence[TraceEvent]:
        return self.rig.trace.events

    def network_verdicts_held(self) -> int:
        """How many segments (or datagrams) the harness's verdicts held past their link's
        latency, or lost, so far: the network failing by the harness's own doing, as a
        fault does (the judge tells the checkers once it happens)."""
        return self.loop.network_verdicts_held

    def schedule_text(self) -> str:
        """The ready order this adapter's loop ran so far, for a failure report: "FIFO", or
        "FIFO except:" and one "at t=…, ran X before Y" line per choice that overtook."""
        return render_schedule(self.loop.schedule)

    def inject(self, fault: Fault) -> None:
        """`FAULT_INJECTED`, then the fault book arms it (a fault of the network: the
        network makes it, at the node hosting its target), then `on_fault`."""
        if fault.count < 0 or fault.duration_ms < 0:
            raise ValueError(f"fault {fault.kind.value}: count and duration_ms must be >= 0")
        with self.active():
            self.emit(EventKind.FAULT_INJECTED, reason=fault.kind.value, target=fault.target)
            self.rig.faults.arm(fault)
            if fault.kind in NETWORK_FAULTS:
                self._network_fault(fault)
            self.on_fault(fault)

    # A mesh of nodes on the simulated network (it declares NETWORK): the subclass puts its
    # nodes on `self.network` (attached to `self.loop`), says which node hosts a hub, and
    # rebuilds a node that restarts after a crash.

    network: Network | None = None

    def node_of(self, hub: str) -> str:
        """The name of the network host (node) that hosts `hub`."""
        raise NotImplementedError(f"{type(self).__name__} declares the network capability: "
                                  "it must implement node_of(hub)")

    def restart_node(self, node: str) -> None:
        """Rebuild `node` (its host is up again with nothing running), as its factory
        builds it at start."""
        raise NotImplementedError(f"{type(self).__name__} declares the network capability: "
                                  "it must implement restart_node(node)")

    def _network_fault(self, fault: Fault) -> None:
        """Make `fault` at the node hosting its target, and end it `duration_ms` later."""
        net = self.network
        if net is None:
            raise ValueError(f"fault {fault.kind.value}: {type(self).__name__} has no network "
                             "(set self.network, attached to self.loop)")
        node = self.node_of(fault.target)
        others = [name for name in net.hosts if name != node]
        links = [(node, other) for other in others]
        end: Callable[[], None]
        if fault.kind is FaultKind.PARTITION_NODE:
            net.partition([node], others)
            end = net.heal  # every partition: they do not nest
        elif fault.kind is FaultKind.ISOLATE_OUTBOUND:
            net.partition([node], others, one_way=True)
            end = net.heal
        elif fault.kind is FaultKind.HOLD_LINKS:
            for link in links:
                net.hold(link)

            def end() -> None:
                for link in links:
                    net.release(link)
        else:  # CRASH_NODE: a node down already stays down until its own restart
            if not net.hosts[node].up:
                return
            net.crash(node)

            def end() -> None:
                net.restart(node)
                self.restart_node(node)
        self.loop.call_later(fault.duration_ms / 1000, end)

    # Helpers for subclasses.

    def spawn(self, coro: Coroutine[Any, Any, _T], *, name: str | None = None
              ) -> asyncio.Task[_T]:
        """Schedule `coro` as a task arriving on its own; nothing runs until the next
        `advance` or `run_until_idle`."""
        self.loop.fresh_lane()
        task = self.loop.create_task(coro, name=name)
        self.loop.fresh_lane()
        return task

    @contextmanager
    def active(self) -> Iterator[Rig]:
        """Make this adapter's trace and faults current for synchronous mesh code called
        from an adapter method (outside the loop)."""
        with active(self.rig) as rig:
            yield rig

    def emit(self, kind: EventKind, **fields: Unpack[TraceFields]) -> TraceEvent:
        """Append an event to the trace directly (the adapter's own events)."""
        return self.rig.trace.emit(kind, **fields)

    def emit_custom(self, name: str, *, hub: str | None = None, **data: Scalar) -> TraceEvent:
        """Append one of the mesh's own events (`EventKind.CUSTOM`, "namespace.kind" and
        JSON-scalar fields), for a team's own invariants to read."""
        return self.rig.trace.custom(name, hub=hub, **data)

    def _turn_blocked(self, hub: str) -> None:
        if self.has_hub(hub):
            self.emit(EventKind.TURN_BLOCKED, hub=hub)

    def _turn_released(self, hub: str) -> None:
        if self.has_hub(hub):
            self.emit(EventKind.TURN_RELEASED, hub=hub)
