"""relaycore behind mesh-harness's adapter protocol, on the harness's virtual loop.

The relay reports in the trace language already, so its telemetry is recorded as it
is. A routed post is accepted by its router when it is made (its leg starts then) and
carried on the loop; a direct post is written on its sender's own connection, whose
frames land in the order written, each connection independently of the others.
Faults reach the relay through its own controls (a node's pause, a link's extra
latency, a node's removal) and through placement, which asks the harness's fault
point before each call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from types import MappingProxyType

from invariants.adapter import Capability, Chooser, Fault, FaultKind, MessageSpec, Route
from invariants.aio import AsyncMeshAdapter, point
from invariants.trace import EventKind, MessageClass

from relaycore.calls import Verdict
from relaycore.config import RelayConfig
from relaycore.frames import Frame, Note, Path, Undeliverable, make_frame
from relaycore.relay import Relay

PATHS: MappingProxyType[Route, Path] = MappingProxyType(
    {Route.DIRECT: "direct", Route.MONOLITH: "routed", Route.GRAIN: "call"})
VERDICTS: MappingProxyType[FaultKind, Verdict] = MappingProxyType({
    FaultKind.REMOVE_TARGET: Verdict.MISSING,
    FaultKind.REJECT_NEXT: Verdict.REFUSE,
    FaultKind.TIMEOUT_NEXT: Verdict.STALL,
})


class RelayAdapter(AsyncMeshAdapter):
    """Drives one Relay on the kit's virtual loop."""

    capabilities = frozenset({
        Capability.GRAIN_ROUTER, Capability.SUBSCRIBE, Capability.STOP_LIFECYCLE,
        Capability.AGGREGATE_FAULTS, Capability.ENVELOPE_ROUNDTRIP,
        Capability.RAISING_HANDLERS, Capability.BREAKER_THRESHOLD, Capability.TIMER_TIES,
    })

    def __init__(self, chooser: Chooser, config: RelayConfig | None = None, *,
                 bugs: Iterable[str] = ()) -> None:
        super().__init__(chooser)
        self.relay = Relay(self.loop, config, telemetry=self._record,
                           placement=self._placement, bugs=bugs)
        self._outbox: dict[str, list[tuple[Frame, Path]]] = {}
        self._clients: dict[str, asyncio.Task[None]] = {}
        self._stopper: asyncio.Task[None] | None = None

    def _record(self, kind: str, **fields: object) -> None:
        cls = fields.get("message_class")
        if isinstance(cls, str):  # the relay's class names are the trace's, as plain strings
            fields["message_class"] = MessageClass(cls)
        self.emit(EventKind(kind), **fields)  # type: ignore[arg-type]

    # The protocol.

    def create_hub(self, address: str, *, watermark: int | None = None,
                   breaker_threshold: int | None = None) -> None:
        with self.active():
            self.relay.add_node(address, watermark=watermark, breaker_threshold=breaker_threshold)

    def has_hub(self, address: str) -> bool:
        return address in self.relay.nodes

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        relay = self.relay
        cls = MessageClass(message.message_class).value
        with self.active():
            relay.ensure_node(sender)
            fid = relay.next_id("d")
            body: Note | Undeliverable
            if cls == "failure":  # the relay's own failure notice, about a frame sent earlier
                earlier, key = f"{fid}-earlier", message.diagnostic_key
                body = Undeliverable(earlier, "Failed", key)  # harness: allow[MESH001] test traffic
            else:
                body = Note(cls, message.diagnostic_key, message.handler_raises)
            frame = make_frame(fid, sender, target, message.type_name, cls, body, identity)
            path = PATHS[Route(route)]
            if path != "direct":
                # The application hands the frame to a router, which accepts it at once;
                # carrying it is the loop's work, independent of every other post's.
                self.loop.fresh_lane()
                relay.submit(frame, path)
                return fid
        # A direct post is written on the sender's own connection: one sender's frames
        # land in the order written, each connection independently of the others.
        box = self._outbox.setdefault(sender, [])
        box.append((frame, path))
        if len(box) == 1:
            self._clients[sender] = self.spawn(self._flush(sender), name=f"client {sender}")
        return fid

    async def _flush(self, sender: str) -> None:
        for frame, path in self._outbox.pop(sender, []):
            self.relay.submit(frame, path)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        with self.active():
            watch = self.relay.open_watch(subscriber, target, retries)
        watch.task = self.spawn(watch.run(), name=f"watch {watch.id}")
        return watch.id

    def stop(self, *, graceful: bool = True) -> None:
        with self.active():
            if self.relay.shutdown.begin(graceful):
                self._stopper = self.spawn(self.relay.shutdown.stages(), name="stop")

    def set_envelope_roundtrip(self, on: bool) -> None:
        self.relay.switchboard.roundtrip = on

    # Faults.

    def on_fault(self, fault: Fault) -> None:
        kind = FaultKind(fault.kind)
        if kind is FaultKind.BLOCK_HUB:
            node = self.relay.nodes.get(fault.target)
            if node is not None:
                node.pause(fault.duration_ms)
        elif kind is FaultKind.REMOVE_TARGET:
            self.relay.remove_node(fault.target)
        elif kind is FaultKind.SLOW_DESTINATION:
            self.relay.shape_link(fault.target, fault.duration_ms)

    async def _placement(self, target: str) -> Verdict:
        fault = await point(target)
        if fault is None:
            return Verdict.PROCEED
        kind = FaultKind(fault.kind)
        if kind is FaultKind.AGGREGATE_NEXT:
            if fault.timeout_first:
                return Verdict.STALL_TIMEOUT_FIRST
            return Verdict.STALL_REFUSAL_FIRST
        return VERDICTS.get(kind, Verdict.PROCEED)


def make(chooser: Chooser) -> RelayAdapter:
    """The adapter factory named in [tool.harness] adapter."""
    return RelayAdapter(chooser)


# One factory per variant of the relay under test, each with a single switch on
# (`--harness-adapter relaycore.harness_adapter:bug_b01`, ...); `make` is the relay as it is.


def bug_b01(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b01"})


def bug_b02(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b02"})


def bug_b03(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b03"})


def bug_b04(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b04"})


def bug_b05(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b05"})


def bug_b06(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b06"})


def bug_b07(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b07"})


def bug_b08(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b08"})


def bug_b09(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b09"})


def bug_b10(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b10"})


def bug_b11(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b11"})


def bug_b12(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b12"})


def bug_b13(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b13"})


def bug_b14(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b14"})


def bug_b15(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b15"})


def bug_b16(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b16"})


def bug_b17(chooser: Chooser) -> RelayAdapter:
    return RelayAdapter(chooser, bugs={"b17"})
