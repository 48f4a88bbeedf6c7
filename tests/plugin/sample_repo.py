"""A throwaway "other repo" that adopts mesh-harness: a tiny mesh of its own behind an adapter.

`files(fixed=...)` gives every file of the repo by path. The tiny mesh answers rejected posts
with a DeliveryFailure (an INV1 violation, and an emit site with no `may_answer()` guard:
MESH001) unless `fixed`; either way it carries one suppressed finding (module-level state
allow-listed with a tag and a reason) and one guarded emit site. The tests copy it into a
pytester directory or a temporary directory; nothing here is imported by the suite.
"""

from __future__ import annotations

from pathlib import Path

PYPROJECT = """\
[project]
name = "tinymesh"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["src"]

[tool.harness]
paths = ["src"]
adapter = "tinymesh.adapter:make_adapter"
invariants = ["INV1"]   # the tiny mesh models rejections and failure answers only
profile = "ci"
"""

MESH = '''\
"""A tiny mesh: hubs in virtual time, an identity guard, failure answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from invariants.trace import EventKind, MessageClass, TraceEvent

# Every type name this mesh has seen, for its own diagnostics.
SEEN_TYPES: set[str] = set()  # harness: allow[MESH005] MEMO: names only, same in every run


class DeliveryFailure:
    """The reply that says a delivery failed."""

    def __init__(self, answers: str, error: str) -> None:
        self.answers = answers
        self.error = error


@dataclass(frozen=True)
class Delivery:
    id: str
    sender: str
    target: str
    message_class: MessageClass

    def may_answer(self) -> bool:
        """Failures, heartbeats and lifecycle messages are never answered."""
        return not self.message_class.suppresses_answer


class TinyMesh:
    def __init__(self, choose: Callable[[int, str], int]) -> None:
        self.choose = choose  # which of several hubs with work takes its turn first
        self.now = 0
        self.events: list[TraceEvent] = []
        self.hubs: dict[str, list[str]] = {}
        self.next_id = 0

    def emit(self, kind: EventKind, **fields: object) -> None:
        self.events.append(TraceEvent(len(self.events), self.now, kind, **fields))

    def post(self, sender: str, target: str, type_name: str, message_class: MessageClass,
             identity: str | None) -> str:
        delivery = Delivery(f"d{self.next_id}", sender, target, message_class)
        self.next_id += 1
        SEEN_TYPES.add(type_name)
        if target not in self.hubs:  # no hub, no intake: answered (or not) from here
            self.not_found(delivery)
            return delivery.id
        self.emit(EventKind.POSTED, hub=target, delivery_id=delivery.id, sender=sender,
                  target=target, message_type=type_name, message_class=message_class)
        if identity is None and message_class is not MessageClass.SYSTEM:
            self.reject(delivery)
        else:
            self.hubs[target].append(delivery.id)
            self.emit(EventKind.ENQUEUED, hub=target, delivery_id=delivery.id)
        return delivery.id

    def reject(self, delivery: Delivery) -> None:
        self.emit(EventKind.REJECTED, hub=delivery.target, delivery_id=delivery.id)
        # BUG: a rejection is answered, so a rejected post amplifies.
        self.send(DeliveryFailure(delivery.id, "Rejected"), delivery.target)

    def not_found(self, delivery: Delivery) -> None:
        if delivery.may_answer():
            self.send(DeliveryFailure(delivery.id, "NotFound"), delivery.target)
        else:
            self.emit(EventKind.ANSWER_SUPPRESSED, hub=delivery.target, delivery_id=delivery.id)

    def send(self, failure: DeliveryFailure, hub: str) -> None:
        self.emit(EventKind.FAILURE_EMITTED, hub=hub, delivery_id=f"f{self.next_id}",
                  answers=failure.answers, error=failure.error)
        self.next_id += 1

    def run(self) -> None:
        """Handle everything queued, one message a turn, the next hub asked of the chooser."""
        while busy := [hub for hub, queue in self.hubs.items() if queue]:
            hub = busy[self.choose(len(busy), "next hub")]
            self.emit(EventKind.HANDLED, hub=hub, delivery_id=self.hubs[hub].pop(0))
'''

FIXED_REJECT = '''\
    def reject(self, delivery: Delivery) -> None:
        # Rejection is terminal: logged once, dropped, never answered.
        self.emit(EventKind.REJECTED, hub=delivery.target, delivery_id=delivery.id)
'''

BUGGY_REJECT = '''\
    def reject(self, delivery: Delivery) -> None:
        self.emit(EventKind.REJECTED, hub=delivery.target, delivery_id=delivery.id)
        # BUG: a rejection is answered, so a rejected post amplifies.
        self.send(DeliveryFailure(delivery.id, "Rejected"), delivery.target)
'''

ADAPTER = '''\
"""The tiny mesh behind mesh-harness's adapter protocol."""

from __future__ import annotations

from collections.abc import Sequence

from invariants.adapter import Chooser, Fault, MessageSpec, Route
from invariants.trace import EventKind, TraceEvent

from tinymesh.mesh import TinyMesh


class TinyAdapter:
    # Rejections and failure answers only: no grain router, subscriptions or stop stages.
    capabilities = frozenset()

    def __init__(self, chooser: Chooser) -> None:
        self.mesh = TinyMesh(chooser.choose)

    def create_hub(self, address: str, *, watermark: int | None = None) -> None:
        self.mesh.hubs.setdefault(address, [])
        self.mesh.emit(EventKind.HUB_CREATED, hub=address, watermark=watermark)

    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        return self.mesh.post(sender, target, message.type_name, message.message_class, identity)

    def subscribe(self, subscriber: str, target: str, *, retries: int = 5) -> str:
        subscription = f"s{len(self.mesh.events)}"
        self.mesh.emit(EventKind.SUBSCRIBE_ATTEMPT, hub=subscriber, target=target,
                       subscription_id=subscription, attempt=0)
        return subscription

    def inject(self, fault: Fault) -> None:
        self.mesh.emit(EventKind.FAULT_INJECTED, target=fault.target, reason=fault.kind.value)

    def advance(self, ms: int) -> None:
        self.mesh.now += ms
        self.mesh.run()

    def run_until_idle(self, limit_ms: int) -> bool:
        self.mesh.run()
        return True

    def stop(self, *, graceful: bool = True) -> None:
        self.mesh.emit(EventKind.STOP_REQUESTED, graceful=graceful)
        self.mesh.emit(EventKind.STOP_COMPLETED)

    def now_ms(self) -> int:
        return self.mesh.now

    def trace(self) -> Sequence[TraceEvent]:
        return self.mesh.events


def make_adapter(chooser: Chooser) -> TinyAdapter:
    return TinyAdapter(chooser)
'''

USER_TEST = '''\
from invariants.adapter import MessageSpec
from invariants.trace import EventKind


def test_a_post_to_a_hub_is_handled(mesh_adapter):
    mesh_adapter.create_hub("orders")
    delivery = mesh_adapter.post("client", "orders", MessageSpec("PlaceOrder"))
    mesh_adapter.advance(1)
    handled = [e.delivery_id for e in mesh_adapter.trace() if e.kind is EventKind.HANDLED]
    assert handled == [delivery]
'''


def files(*, fixed: bool) -> dict[str, str]:
    """Every file of the sample repo, by posix path."""
    mesh = MESH.replace(BUGGY_REJECT, FIXED_REJECT) if fixed else MESH
    if fixed and mesh == MESH:
        raise AssertionError("the fix no longer applies to the sample mesh")
    return {
        "pyproject.toml": PYPROJECT,
        "src/tinymesh/__init__.py": "",
        "src/tinymesh/mesh.py": mesh,
        "src/tinymesh/adapter.py": ADAPTER,
        "tests/test_tinymesh.py": USER_TEST,
    }


def write(root: Path, *, fixed: bool) -> Path:
    for relative, text in files(fixed=fixed).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
