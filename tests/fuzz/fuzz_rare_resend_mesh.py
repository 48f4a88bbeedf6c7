"""A mesh with M2's pre-fix shape confined to one hub: a fuzzing session's kind of bug.

The delivery retry re-sends a timed-out grain call (it gates on `is_transient`, which
admits timeouts) only when the call went to hub `h2`. The seed programs time out calls to
`h0` only, so `run_invariant`'s known shapes pass on this mesh; a session has to find the
bug, and CI can only fail on it by replaying what the session saved.

`make_adapter` is its factory: `--adapter fuzz_rare_resend_mesh:make_adapter`.
`make_twin_adapter` makes the same mesh under another name, so another database key: a
failure saved for one is not replayed on the other.
"""

from __future__ import annotations

from invariants.adapter import Chooser
from invariants.trace import EventKind
from reference_impl.adapter import ReferenceAdapter
from reference_impl.constants import retry_delay_ms
from reference_impl.envelope import Delivery
from reference_impl.grain import GrainDeliveryOperation, GrainRouter
from reference_impl.ladder import classify, is_timeout, is_transient
from reference_impl.pool import LegHandle, LegOperation

BUGGY_HUB = "h2"


class _ResendsTimeoutsOnOneHub(GrainDeliveryOperation):
    def _failed(self, leg: LegHandle, attempt: int, exc: Exception) -> None:
        if self.delivery.target != BUGGY_HUB or not is_timeout(exc):
            super()._failed(leg, attempt, exc)
            return
        self.waiting_attempt = -1
        self.router.mesh.trace.emit(EventKind.ATTEMPT_FAILED, hub=self.router.name,
                                    delivery_id=self.delivery.id, attempt=attempt,
                                    error=type(exc).__name__, timed_out=True)
        if is_transient(exc) and attempt < self.router.retries:  # pre-fix: admits timeouts
            leg.schedule(retry_delay_ms(attempt), self.deliver, leg, attempt + 1)
            return
        self.router.answer_failure(self.delivery, classify(exc))
        leg.end("failed")


class _Router(GrainRouter):
    def operation(self, delivery: Delivery) -> LegOperation:
        return _ResendsTimeoutsOnOneHub(self, delivery)


def make_adapter(chooser: Chooser) -> ReferenceAdapter:
    adapter = ReferenceAdapter(chooser)
    adapter.mesh.grain = _Router(adapter.mesh, retries=adapter.mesh.grain.retries)
    return adapter


def make_twin_adapter(chooser: Chooser) -> ReferenceAdapter:
    return make_adapter(chooser)
