"""aiomesh behind mesh-harness's adapter protocol, on the harness's virtual-time loop.

The mesh is built on the kit's loop (`invariants.aio.AsyncMeshAdapter`), so its ready
order is the harness's to choose; its observer becomes the harness's trace (the field
names are the trace's; only the payload kinds are translated). Each protocol call starts
a lane of its own, so what two calls set going (a post and a stop, say) is independent
and either may run first. The turn events of a block and `FAULT_INJECTED` are the kit's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from aiomesh.envelope import DeliveryFailure, Kind, Message
from aiomesh.mesh import Mesh
from aiomesh.observer import Observer
from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.trace import EventKind, MessageClass

ROUTES: Mapping[Route, str] = MappingProxyType(
    {Route.DIRECT: "direct", Route.MONOLITH: "routed", Route.GRAIN: "call"})
KINDS: Mapping[MessageClass, Kind] = MappingProxyType({c: Kind(c.value) for c in MessageClass})
KIT_EMITS = frozenset({"turn_blocked", "turn_released", "fault_injected"})


class _Trace(Observer):
    def __init__(self, adapter: AioMeshAdapter) -> None:
        self.adapter = adapter

    def note(self, kind: str, fields: dict[str, Any]) -> None:
        if kind in KIT_EMITS:
            return
        values = {k: v for k, v in fields.items() if v is not None}
        if "message_class" in values:
            values["message_class"] = MessageClass(values["message_class"])
        self.adapter.emit(EventKind(kind), **values)


class AioMeshAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.SUBSCRIBE,
                              Capability.STOP_LIFECYCLE, Capability.AGGREGATE_FAULTS})

    def __init__(self, chooser: Chooser, *, bugs: Iterable[str] = (),
                 at_least_once: bool = False) -> None:
        super().__init__(chooser)
        self.mesh = Mesh(observer=_Trace(self), bugs=bugs, at_least_once=at_least_once,
                         loop=self.loop)

    @contextmanager
    def _lane(self) -> Iterator[None]:
        self.loop.fresh_lane()
        with self.active():
            yield
        self.loop.fresh_lane()

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        with self._lane():
            self.mesh.hub(address, watermark=watermark)

    def has_hub(self, address: str) -> bool:
        return address in self.mesh.hubs

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        body: Message | DeliveryFailure
        if message.message_class is MessageClass.FAILURE:
            # The harness posts a failure as traffic: it answers a delivery outside the run.
            body = DeliveryFailure("x0", "Lost")  # harness: allow[MESH001] test traffic
        else:
            body = Message(message.type_name, KINDS[message.message_class],
                           message.diagnostic_key)
        with self._lane():
            return self.mesh.post(sender, target, body, identity=identity,
                                  route=ROUTES[route])

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        with self._lane():
            return self.mesh.subscribe(subscriber, target, retries)

    def stop(self, *, graceful: bool = True) -> None:
        with self._lane():
            self.mesh.stop(graceful=graceful)

    def on_fault(self, fault: Fault) -> None:
        mesh, target, faults = self.mesh, fault.target, self.mesh.faults
        if fault.kind is FaultKind.BLOCK_HUB:
            mesh.block(target, fault.duration_ms)
        elif fault.kind is FaultKind.SLOW_DESTINATION:
            mesh.slow_down(target, fault.duration_ms)
        elif fault.kind is FaultKind.REMOVE_TARGET:
            mesh.remove(target)
        elif fault.kind is FaultKind.REJECT_NEXT:
            faults.rejects[target] = faults.rejects.get(target, 0) + fault.count
        elif fault.kind is FaultKind.TIMEOUT_NEXT:
            faults.timeouts[target] = faults.timeouts.get(target, 0) + fault.count
        elif fault.kind is FaultKind.AGGREGATE_NEXT:
            faults.aggregates.setdefault(target, []).extend([fault.timeout_first] * fault.count)


def make(chooser: Chooser) -> AioMeshAdapter:
    """The adapter factory named in pyproject.toml's [tool.harness] adapter."""
    return AioMeshAdapter(chooser)
