"""aiomesh behind mesh-harness's adapter protocol, on the harness's virtual-time loop.

The mesh is built on the kit's loop (`invariants.aio.AsyncMeshAdapter`), so its ready
order is the harness's to choose; its observer becomes the harness's trace (the field
names are the trace's; only the payload kinds are translated). Each protocol call starts
a lane of its own, so what two calls set going (a post and a stop, say) is independent
and either may run first. The turn events of a block and `FAULT_INJECTED` are the kit's.
aiomesh's own events (`observer.OWN_KINDS`: a hub's turn starting and ending) become the
trace's custom events, `aiomesh.turn_started` and `aiomesh.turn_ended`, which the
built-in invariants ignore and aiomesh's own (aiomesh_invariants/) read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from aiomesh.bugs import BUGS, checked
from aiomesh.envelope import DeliveryFailure, Kind, Message
from aiomesh.mesh import FAULTING, Mesh
from aiomesh.observer import Observer
from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter
from invariants.trace import EventKind, MessageClass

ROUTES: Mapping[Route, str] = MappingProxyType(
    {Route.DIRECT: "direct", Route.MONOLITH: "routed", Route.GRAIN: "call"})
KINDS: Mapping[MessageClass, Kind] = MappingProxyType({c: Kind(c.value) for c in MessageClass})
KIT_EMITS = frozenset({"turn_blocked", "turn_released", "fault_injected"})
# The namespace of aiomesh's own events in the trace ("aiomesh.turn_started").
NAMESPACE = "aiomesh"
# Bugs that live in the at-least-once mode (`Mesh(at_least_once=True)`).
AT_LEAST_ONCE_BUGS = frozenset({"dedupe-after-reply", "forget-answered"})


class _Trace(Observer):
    def __init__(self, adapter: AioMeshAdapter, *, applied: bool = False) -> None:
        self.adapter = adapter
        self.applied = applied  # report EFFECT_APPLIED (the at-least-once mode)
        self.called: dict[str, str] = {}  # delivery id -> the target its calls name

    def note(self, kind: str, fields: dict[str, Any]) -> None:
        if kind in KIT_EMITS:
            return
        values = {k: v for k, v in fields.items() if v is not None}
        if "message_class" in values:
            values["message_class"] = MessageClass(values["message_class"])
        self.adapter.emit(EventKind(kind), **values)
        did, hub = str(values.get("delivery_id")), str(values.get("hub"))
        if kind == "attempt" and self.applied:
            self.called[did] = values["target"]
        elif kind == "posted" and self.called.get(did) == hub:
            # A call's callee offers it to its hub: that is the call's effect applied.
            self.adapter.emit(EventKind.EFFECT_APPLIED, hub=hub, delivery_id=did)

    def custom(self, kind: str, **fields: Any) -> None:
        hub = fields.pop("hub", None)
        self.adapter.emit_custom(f"{NAMESPACE}.{kind}", hub=hub,
                                 **{k: v for k, v in fields.items() if v is not None})


class AioMeshAdapter(AsyncMeshAdapter):
    capabilities = frozenset({Capability.GRAIN_ROUTER, Capability.SUBSCRIBE,
                              Capability.STOP_LIFECYCLE, Capability.AGGREGATE_FAULTS,
                              Capability.RAISING_HANDLERS, Capability.BREAKER_THRESHOLD})

    def __init__(self, chooser: Chooser, *, bugs: Iterable[str] = (),
                 at_least_once: bool = False) -> None:
        super().__init__(chooser)
        if at_least_once:
            self.capabilities = type(self).capabilities | {Capability.AT_LEAST_ONCE}
        self.mesh = Mesh(observer=_Trace(self, applied=at_least_once), bugs=bugs,
                         at_least_once=at_least_once, loop=self.loop)

    @contextmanager
    def _lane(self) -> Iterator[None]:
        self.loop.fresh_lane()
        with self.active():
            yield
        self.loop.fresh_lane()

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        with self._lane():
            self.mesh.hub(address, watermark=watermark, breaker_threshold=breaker_threshold)

    def has_hub(self, address: str) -> bool:
        return address in self.mesh.hubs

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        body: Message | DeliveryFailure
        if message.message_class is MessageClass.FAILURE:
            # The harness posts a failure as traffic: it answers a delivery outside the run.
            body = DeliveryFailure("x0", "Lost")  # harness: allow[MESH001] test traffic
        else:
            type_name = FAULTING if message.handler_raises else message.type_name
            body = Message(type_name, KINDS[message.message_class], message.diagnostic_key)
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


def make_with(bugs: Iterable[str] = (), *, at_least_once: bool = False,
              name: str | None = None) -> Callable[[Chooser], AioMeshAdapter]:
    """A factory of meshes with the planted `bugs` switched on (names checked now, so a
    typo fails here, not in the first example). `name` is the factory's own name in this
    module, which names the mesh in reports and keys the example database by it."""
    chosen = checked(bugs)

    def factory(chooser: Chooser) -> AioMeshAdapter:
        return AioMeshAdapter(chooser, bugs=chosen, at_least_once=at_least_once)

    if name is not None:
        factory.__name__ = factory.__qualname__ = name
    return factory


def factory_name(bug: str) -> str:
    """The module-level factory of a planted bug: `bug_<name>`, dashes as underscores."""
    return "bug_" + bug.replace("-", "_")


# One factory per planted bug, for `--harness-adapter aiomesh.harness_adapter:bug_<name>`
# (or `adapter = ...` in [tool.harness]): `bug_resend_timeouts`, `bug_no_stop_hold`, ...
# A bug of the at-least-once mode gets a mesh in that mode; `make_at_least_once` is that
# mode without a bug.
BUG_FACTORIES: Mapping[str, Callable[[Chooser], AioMeshAdapter]] = MappingProxyType({
    bug: make_with({bug}, at_least_once=bug in AT_LEAST_ONCE_BUGS, name=factory_name(bug))
    for bug in BUGS
})
globals().update({factory.__name__: factory for factory in BUG_FACTORIES.values()})
make_at_least_once = make_with(at_least_once=True, name="make_at_least_once")
