"""INV4 on a mesh whose calls take a hop to reach the callee: the response timeout runs
from when the call was sent (its ATTEMPT), not from its CALL_RECEIVED a hop later, so a
timeout the mesh calls a refusal is still one, and a mesh with a hop passes INV4 with the
fault obligations exercised."""

from __future__ import annotations

import pytest
from dyn_traces import C, K, Trace

from invariants.adapter import Capability, Chooser, FaultKind, Route
from invariants.checks import inv4_no_resend_after_timeout as inv4
from invariants.checks.harness_facts import Injected, Posted
from invariants.dynamic.runner import run_invariant
from invariants.trace import EventKind
from reference_impl.adapter import ReferenceAdapter
from reference_impl.constants import HOP_MS, RESPONSE_TIMEOUT_MS
from reference_impl.envelope import Delivery
from reference_impl.errors import RejectionError, ResponseTimeout, TargetNotFoundError
from reference_impl.grain import GrainDeliveryOperation, GrainRouter, HeldCall
from reference_impl.pool import LegHandle, LegOperation


def _slowed_call_failing_at(t: Trace, failed_at: int, *, hop: int) -> list[object]:
    slowed = Injected(FaultKind.SLOW_DESTINATION, "g", 1, 40_000, 0, 0)
    posted = Posted("d1", "client", "g", "Request", C.USER, None, "user", Route.GRAIN, 0, 0)
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(hop).add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=0)
    t.at(failed_at).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", attempt=0,
                        error="rejected", timed_out=False)
    return [slowed, posted]


def test_a_timeout_called_a_refusal_counts_from_the_attempt_not_from_the_hop() -> None:
    t = Trace()
    facts = _slowed_call_failing_at(t, RESPONSE_TIMEOUT_MS, hop=1)
    messages = [v.message for v in inv4.check(t.events, facts=facts)]  # type: ignore[arg-type]
    assert any("(not timed out), but d1 reached the callee and failed 30,000 ms after it "
               "was sent: that is a response timeout" in m for m in messages), messages


def test_a_refusal_sooner_than_a_response_timeout_after_the_attempt_is_one() -> None:
    t = Trace()
    facts = _slowed_call_failing_at(t, RESPONSE_TIMEOUT_MS - 1, hop=1)
    assert inv4.check(t.events, facts=facts) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("refusal", [FaultKind.REJECT_NEXT, FaultKind.REMOVE_TARGET])
@pytest.mark.parametrize(("late_ms", "received", "flagged"), [
    (0, False, False),  # the harness's refusal, slowed, in the timeout's instant: a refusal
    (1, False, True),  # a millisecond later, the caller's timeout had fired first
    (0, True, True),  # received: the callee held it, whatever it calls its answer
])
def test_a_harness_refusal_landing_as_the_timeout_falls_due_is_a_refusal(
        refusal: FaultKind, late_ms: int, received: bool, flagged: bool) -> None:
    armed = [Injected(refusal, "g", 1, 0, 0, 0),
             Injected(FaultKind.SLOW_DESTINATION, "g", 1, RESPONSE_TIMEOUT_MS, 0, 0)]
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(RESPONSE_TIMEOUT_MS + late_ms)
    if received:
        t.add(K.CALL_RECEIVED, hub="g", delivery_id="d1", attempt=0)
    t.add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", attempt=0, error="rejected",
          timed_out=False)
    messages = [v.message for v in inv4.check(t.events, facts=armed)]  # type: ignore[arg-type]
    assert any("that is a response timeout" in m for m in messages) is flagged, messages


class _HopCall(GrainDeliveryOperation):
    """The reference grain call, reaching the callee HOP_MS after it is sent; the caller's
    response timer starts when it sends, the armed timeout is spent on arrival (or, with
    `timeout_taken_as_sent`, as the call leaves, as a mesh asking the kit's `point()`
    before each call spends it)."""

    timeout_taken_as_sent = False
    _stalled = False

    def deliver(self, leg: LegHandle, attempt: int) -> None:
        mesh, delivery = self.router.mesh, self.delivery
        mesh.trace.emit(EventKind.ATTEMPT, hub=self.router.name, delivery_id=delivery.id,
                        target=delivery.target, attempt=attempt)
        self.waiting_attempt = attempt
        if mesh.faults.take_reject(delivery.target):
            leg.schedule(HOP_MS, self._failed, leg, attempt, RejectionError("invalid"))
            return
        if self.timeout_taken_as_sent:
            self._stalled = mesh.faults.take_timeout(delivery.target)
        self._response_timer = leg.schedule(RESPONSE_TIMEOUT_MS, self._failed, leg, attempt,
                                            ResponseTimeout("no response"))
        leg.schedule(HOP_MS, self._arrive, leg, attempt)

    def _arrive(self, leg: LegHandle, attempt: int) -> None:
        mesh, target = self.router.mesh, self.delivery.target
        if target not in mesh.hubs or mesh.activations.deactivated:
            if self._response_timer is not None:
                self._response_timer.cancel()
            self._failed(leg, attempt, TargetNotFoundError(target))
            return
        run_after = mesh.faults.slow_ms(target)
        if self._stalled if self.timeout_taken_as_sent else mesh.faults.take_timeout(target):
            run_after = RESPONSE_TIMEOUT_MS + HOP_MS  # after the caller gave up
        mesh.trace.emit(EventKind.CALL_RECEIVED, hub=target, delivery_id=self.delivery.id,
                        attempt=attempt)
        mesh.activations.accept(HeldCall(self, attempt), run_after)


class _TimeoutTakenAsSentCall(_HopCall):
    timeout_taken_as_sent = True


class _HopRouter(GrainRouter):
    call: type[_HopCall] = _HopCall

    def operation(self, delivery: Delivery) -> LegOperation:
        return self.call(self, delivery)


class _TimeoutTakenAsSentRouter(_HopRouter):
    call = _TimeoutTakenAsSentCall


class HopMesh(ReferenceAdapter):
    capabilities = ReferenceAdapter.capabilities - {Capability.AGGREGATE_FAULTS}
    router: type[_HopRouter] = _HopRouter

    def __init__(self, chooser: Chooser | None = None) -> None:
        super().__init__(chooser)
        self.mesh.grain = self.router(self.mesh, retries=self.mesh.grain.retries)


class TimeoutTakenAsSentMesh(HopMesh):
    router = _TimeoutTakenAsSentRouter


@pytest.mark.parametrize("mesh", [HopMesh, TimeoutTakenAsSentMesh])
def test_a_mesh_with_a_hop_passes_inv4_with_its_fault_obligations_exercised(
        mesh: type[HopMesh]) -> None:
    # Either way of spending a timeout armed while a call was on its way is honouring it.
    outcome = run_invariant("INV4", mesh)
    assert outcome.verdict == "pass", outcome.failure_text
    for obligation in (inv4.SENT_ONCE, inv4.HONOURED[FaultKind.TIMEOUT_NEXT],
                       inv4.HONOURED[FaultKind.REJECT_NEXT], inv4.DELAYS):
        assert outcome.evidence[obligation] > 0, obligation


def test_a_mesh_with_a_hop_keeps_the_conventions_adapter_check_reads() -> None:
    from invariants.conformance.programs import conformance

    _, results = conformance(HopMesh)
    assert "fault-order" in [r.program for r in results]
    assert [b.line(r.program) for r in results for b in r.broken] == []


def test_a_call_refused_at_the_door_after_its_caller_timed_out_reached_no_callee() -> None:
    # The harness armed a refusal; the call reached the callee's door only after its caller
    # had timed out, and was refused there: no CALL_RECEIVED, and nothing to hold.
    refused = Injected(FaultKind.REJECT_NEXT, "g", 1, 0, 0, 0)
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
                                  attempt=0, error="timeout", timed_out=True)
    assert inv4.check(t.events, facts=[refused], final=True) == []  # type: ignore[arg-type]
    # Negative control: with no refusal armed, a timed-out call that reached no callee is
    # still one the harness cannot account for.
    [v] = inv4.check(t.events, final=True)
    assert "reached the callee 0 times (expected 1)" in v.message


def test_a_timed_out_call_to_a_removed_target_reached_no_callee() -> None:
    # The harness removed g, then a slowed call to it timed out before it arrived: there
    # was no callee to reach, and nothing is held.
    removed = Injected(FaultKind.REMOVE_TARGET, "g", 1, 0, 0, 0)
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
                                  attempt=0, error="timeout", timed_out=True)
    assert inv4.check(t.events, facts=[removed], final=True) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("stopped", [True, False])
def test_a_timed_out_call_slowed_past_the_end_reached_no_callee(stopped: bool) -> None:
    # A mesh that takes the slowdown before the call leaves: the call, slowed past the
    # stop that cut it (or the run's end), never reached g.
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
                                  attempt=0, error="timeout", timed_out=True)
    t.at(RESPONSE_TIMEOUT_MS + 5_000).add(K.STOP_COMPLETED if stopped else K.HANDLED,
                                          hub="silo" if stopped else "client")

    def slowed(ms: int) -> Injected:
        return Injected(FaultKind.SLOW_DESTINATION, "g", 1, ms, 0, 0)

    slow_past_the_end = slowed(RESPONSE_TIMEOUT_MS + 5_000)
    assert inv4.check(t.events, facts=[slow_past_the_end], final=True) == []  # type: ignore[arg-type]
    # Negative control: slowed for less, the call was due at g before the end, and never
    # came: lost, not held.
    [v] = inv4.check(t.events, facts=[slowed(RESPONSE_TIMEOUT_MS)], final=True)  # type: ignore[arg-type]
    assert "reached the callee 0 times (expected 1)" in v.message


def test_a_slowdown_armed_after_the_end_does_not_undo_the_one_that_held_the_call() -> None:
    # The call to g was slowed past the stop that cut it; long after the stop the harness
    # slows g again, for less: that slowdown held no call of the run.
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(RESPONSE_TIMEOUT_MS).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1",
                                  attempt=0, error="timeout", timed_out=True)
    t.add(K.STOP_COMPLETED, hub="silo")
    t.at(RESPONSE_TIMEOUT_MS + 30_000).add(K.HANDLED, hub="client")
    held = Injected(FaultKind.SLOW_DESTINATION, "g", 1, RESPONSE_TIMEOUT_MS + 1_000, 0, 0)
    later = Injected(FaultKind.SLOW_DESTINATION, "g", 1, 5, RESPONSE_TIMEOUT_MS + 30_000,
                     len(t.events) - 1)
    assert inv4.check(t.events, facts=[held, later], final=True) == []  # type: ignore[arg-type]
    # Negative control: slowed for less before the call left, it was due at g before the
    # stop, and never came.
    brief = Injected(FaultKind.SLOW_DESTINATION, "g", 1, 5, 0, 0)
    [v] = inv4.check(t.events, facts=[brief, later], final=True)  # type: ignore[arg-type]
    assert "reached the callee 0 times (expected 1)" in v.message


def test_a_refused_call_to_a_removed_target_owes_no_retry() -> None:
    removed = Injected(FaultKind.REMOVE_TARGET, "g", 1, 0, 0, 0)
    t = Trace()
    t.add(K.ATTEMPT, hub="router", delivery_id="d1", target="g", attempt=0)
    t.at(4).add(K.ATTEMPT_FAILED, hub="router", delivery_id="d1", attempt=0,
                error="rejected", timed_out=False)
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="n1", answers="d1", error="Rejected")
    assert inv4.check(t.events, facts=[removed], final=True) == []  # type: ignore[arg-type]
    # Negative control: to a target that is there, the refusal owes its retries.
    [v] = inv4.check(t.events, final=True)
    assert "given up after 1 attempt(s)" in v.message
