"""Short fixed programs that exercise an adapter, one per capability, and what each proves.

`conformance(factory, params)` drives a fresh mesh through each program the adapter's
declared capabilities call for, records what the harness did (every post and the id it
got back, every subscription, every question the mesh asked its `Chooser`), runs to
quiescence and returns the broken conventions of each program. A declared capability whose
program shows none of its events is itself a broken convention: a declaration the mesh does
not keep would make its obligations look checked. So is a mesh that never asks its Chooser
where same-instant choices exist, or ignores the answer: its schedule cannot be explored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from invariants.adapter import (
    AdapterFactory,
    Capability,
    ConfigurableBreakerAdapter,
    Fault,
    FaultKind,
    FirstChooser,
    MeshAdapter,
    MessageSpec,
    RoundTrippingAdapter,
    Route,
)
from invariants.adapter_calls import calling_adapter, factory_name
from invariants.capabilities import capabilities_of, program_needs
from invariants.checks import CheckParams
from invariants.conformance.conventions import Broken, Post, broken_conventions
from invariants.step_budget import within_budget
from invariants.trace import EventKind, MessageClass, TraceEvent, canonical_line

HUBS = ("alpha", "beta")
MISSING = "nowhere"
QUIET_WITHIN_MS = 10 * 60 * 1000


class AskedChooser:
    """Answers the first option (or the last), counting the questions that had a choice."""

    def __init__(self, *, last: bool = False) -> None:
        self.last = last
        self.questions = 0

    def choose(self, options: int, why: str) -> int:
        if options < 2:
            return 0
        self.questions += 1
        return options - 1 if self.last else 0


@dataclass
class Exercise:
    """One program exercising an adapter: the adapter, and what the harness did to it."""

    adapter: MeshAdapter
    chooser: AskedChooser = field(default_factory=AskedChooser)
    factory: AdapterFactory | None = None  # for a program that runs the mesh once more
    posts: list[Post] = field(default_factory=list)
    subscriptions: list[str] = field(default_factory=list)
    gave_up_at: int | None = None  # when the harness gave up on a graceful stop
    made: set[str] = field(default_factory=lambda: set(HUBS))  # the hubs the harness made

    def post(self, sender: str, target: str, spec: MessageSpec, route: Route) -> str:
        did = self.adapter.post(sender, target, spec, route=route)
        self.posts.append(Post(did, sender, target, spec, route, target in self.made))
        return did


@dataclass(frozen=True)
class Program:
    name: str
    steps: Callable[[Exercise], None]
    proves: Callable[[Sequence[TraceEvent], Exercise, CheckParams], Iterable[Broken]]

    @property
    def needs(self) -> Capability | None:
        """The capability it is run for (its record's, `invariants.capabilities`); None:
        every adapter runs it."""
        return program_needs().get(self.name)


def _intake_steps(run: Exercise) -> None:
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.post("client", "beta", MessageSpec("Update", MessageClass.USER, "node/1"), Route.DIRECT)
    run.post("client", "alpha", MessageSpec("Heartbeat", MessageClass.IGNORABLE), Route.DIRECT)
    run.post("client", MISSING, MessageSpec("Request"), Route.MONOLITH)


def _intake_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    if not any(e.kind is EventKind.POSTED for e in trace):
        return [Broken("intake", None, "POSTED", "four posts and not one POSTED event")]
    return []


def _grain_steps(run: Exercise) -> None:
    run.adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta", count=1))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
    run.adapter.run_until_idle(QUIET_WITHIN_MS)
    run.adapter.inject(Fault(FaultKind.TIMEOUT_NEXT, "beta", count=1))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
    run.adapter.run_until_idle(QUIET_WITHIN_MS)
    # Refused on every call, whatever the mesh's retry budget: the callee never enqueues it.
    run.adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta", count=_REFUSALS))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)


def _grain_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    rejected, timed_out, refused = (post.delivery_id for post in run.posts)
    failures = {
        did: [e for e in trace if e.kind is EventKind.ATTEMPT_FAILED and e.delivery_id == did]
        for did in (rejected, timed_out)
    }
    found: list[Broken] = []
    if not any(e.kind is EventKind.ATTEMPT for e in trace):
        found.append(Broken("capabilities", None, "ATTEMPT",
                            "the adapter declares a grain router, but grain posts made no "
                            "ATTEMPT"))
        return found
    first = failures[rejected][0] if failures[rejected] else None
    if first is None:
        found.append(Broken("grain-calls", None, "ATTEMPT_FAILED",
                            f"the rejection injected at beta failed no attempt of {rejected}"))
    elif first.error not in params.resendable_errors or first.timed_out:
        found.append(Broken("grain-calls", first.seq, "ATTEMPT_FAILED",
                            f"the injected rejection failed {rejected} with error "
                            f"{first.error!r} (timed_out={first.timed_out}), which is not a "
                            "resendable error: name it in resendable_errors of "
                            "[tool.harness.params]"))
    if not any(e.timed_out for e in failures[timed_out]):
        found.append(Broken("grain-calls", None, "ATTEMPT_FAILED",
                            f"the timeout injected at beta did not fail {timed_out} with "
                            "timed_out=true"))
    found.extend(_never_enqueued_proves(trace, refused, params))
    if Capability.AT_LEAST_ONCE in capabilities_of(run.adapter):
        found.extend(_applied_proves(trace, (rejected, timed_out)))
    return found


_REFUSALS = 100  # more calls than any retry budget makes


def _never_enqueued_proves(trace: Sequence[TraceEvent], did: str, params: CheckParams
                           ) -> list[Broken]:
    """A grain delivery refused on every call never reached the callee's queue: it is
    re-sent to its budget, then its sender is answered once and its leg ends failed
    (INV4 reads a leg's end or an answer as the delivery given up; INV7 owes the answer)."""
    mine = [e for e in trace if e.delivery_id == did or e.answers == did]
    calls = params.delivery_retries + 1
    attempts = [e for e in mine if e.kind is EventKind.ATTEMPT]
    where = (f"{did}, refused on every call (reject_next with count={_REFUSALS} armed at "
             "beta), never reached the callee")
    if len(attempts) != calls:
        return [Broken("grain-calls", None, "ATTEMPT",
                       f"{where}, but it was called {len(attempts)} time(s), not {calls}: a "
                       "refused call is re-sent until its retries (delivery_retries, "
                       f"{params.delivery_retries}) are spent")]
    found: list[Broken] = []
    reached = [e for e in mine if e.kind is EventKind.CALL_RECEIVED
               or (e.kind is EventKind.POSTED and e.hub == "beta")]
    if reached:
        found.append(Broken("grain-calls", reached[0].seq, reached[0].kind.name,
                            f"{where}, but the trace says it reached beta"))
    answers = [e for e in mine if e.kind is EventKind.FAILURE_EMITTED and e.answers == did]
    last_failed = max((e.seq for e in mine if e.kind is EventKind.ATTEMPT_FAILED), default=-1)
    if len(answers) != 1:
        found.append(Broken("legs", answers[1].seq if answers else None, "FAILURE_EMITTED",
                            f"{where}: its sender is owed exactly one FAILURE_EMITTED "
                            f"answering it, and got {len(answers)}"))
    elif answers[0].seq < last_failed:
        found.append(Broken("legs", answers[0].seq, "FAILURE_EMITTED",
                            f"{where}: it was answered before its last call failed (seq "
                            f"{last_failed})"))
    ends = [e for e in mine if e.kind is EventKind.LEG_ENDED and e.delivery_id == did]
    if ends and ends[0].reason != "failed":
        found.append(Broken("legs", ends[0].seq, "LEG_ENDED",
                            f"{where}: its leg ended {ends[0].reason!r}, not 'failed' (it "
                            "could not be delivered: an answer is owed)"))
    return found


def _applied_proves(trace: Sequence[TraceEvent], calls: Sequence[str]) -> list[Broken]:
    """An at-least-once adapter reports where its callee applied each grain call."""
    applied = {e.delivery_id for e in trace if e.kind is EventKind.EFFECT_APPLIED}
    missing = [did for did in calls if did not in applied]
    if not missing:
        return []
    return [Broken("capabilities", None, "EFFECT_APPLIED",
                   f"the adapter declares at least once, but the callee never reported "
                   f"applying {', '.join(missing)}: without EFFECT_APPLIED no re-send can "
                   "be shown applied at most once")]


def _zero_count_steps(run: Exercise) -> None:
    # A fault armed for no call: `count` is how many calls it affects, and 0 is none.
    for kind in [*_fault_order_kinds(run), FaultKind.REJECT_NEXT]:
        run.adapter.inject(Fault(kind, "beta", count=0))
    run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)


def _zero_count_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    (post,) = run.posts
    failed = next((e for e in trace if e.kind is EventKind.ATTEMPT_FAILED
                   and e.delivery_id == post.delivery_id), None)
    if failed is None:
        return []
    return [Broken("grain-calls", failed.seq, "ATTEMPT_FAILED",
                   f"faults armed at beta with count=0 (for no call) failed {post.delivery_id}'s "
                   "call: a fault's count is how many calls it affects")]


def _aggregate_steps(run: Exercise) -> None:
    for timeout_first in (True, False):
        run.adapter.inject(Fault(FaultKind.AGGREGATE_NEXT, "beta", timeout_first=timeout_first))
        run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
        run.adapter.run_until_idle(QUIET_WITHIN_MS)


def _aggregate_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    found: list[Broken] = []
    for post, order in zip(run.posts, ("the timeout first", "the rejection first"), strict=True):
        failed = [e for e in trace
                  if e.kind is EventKind.ATTEMPT_FAILED and e.delivery_id == post.delivery_id]
        if not failed:
            found.append(Broken("capabilities", None, "ATTEMPT_FAILED",
                                f"the adapter declares aggregate faults, but the aggregate "
                                f"({order}) injected at beta failed no attempt of "
                                f"{post.delivery_id}"))
        elif not failed[0].timed_out:
            found.append(Broken("grain-calls", failed[0].seq, "ATTEMPT_FAILED",
                                f"the aggregate ({order}) injected at beta failed "
                                f"{post.delivery_id} with timed_out=false: a timeout anywhere "
                                "in an aggregate is a timeout"))
    return found


# The faults each fault-order call is armed with, beside a REJECT_NEXT armed with it.
_SPENT_AT_CALL_RECEIVED = (FaultKind.TIMEOUT_NEXT, FaultKind.AGGREGATE_NEXT)


def _fault_order_kinds(run: Exercise) -> list[FaultKind]:
    declared = capabilities_of(run.adapter)
    return [kind for kind in _SPENT_AT_CALL_RECEIVED
            if kind is not FaultKind.AGGREGATE_NEXT or Capability.AGGREGATE_FAULTS in declared]


def _fault_order_steps(run: Exercise) -> None:
    # A rejection and a timeout (or an aggregate) armed together, then one grain call: the
    # rejection is spent by the first call (ATTEMPT), the timeout by the first call that
    # reaches the callee (CALL_RECEIVED), the retry.
    for kind in _fault_order_kinds(run):
        run.adapter.inject(Fault(FaultKind.REJECT_NEXT, "beta", count=1))
        run.adapter.inject(Fault(kind, "beta", count=1))
        run.post("client", "beta", MessageSpec("Request"), Route.GRAIN)
        run.adapter.run_until_idle(QUIET_WITHIN_MS)


def _fault_order_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    found: list[Broken] = []
    for post, kind in zip(run.posts, _fault_order_kinds(run), strict=True):
        found.extend(_spent_in_order(trace, post.delivery_id, kind))
    return found


def _spent_in_order(trace: Sequence[TraceEvent], did: str, kind: FaultKind) -> list[Broken]:
    mine = [e for e in trace if e.delivery_id == did]

    def first(event_kind: EventKind, attempt: int) -> TraceEvent | None:
        return next((e for e in mine if e.kind is event_kind and e.attempt == attempt), None)

    armed = f"reject_next and {kind.value} armed together at beta before {did}"
    if first(EventKind.ATTEMPT, 0) is None:
        return [Broken("grain-calls", None, "ATTEMPT", f"{armed}: {did} made no call")]
    received, failed = first(EventKind.CALL_RECEIVED, 0), first(EventKind.ATTEMPT_FAILED, 0)
    if received is not None:
        return [Broken("grain-calls", received.seq, "CALL_RECEIVED",
                       f"{armed}: the rejection is spent by {did}'s first call (its ATTEMPT), "
                       "which must be refused without reaching the callee, but attempt 0 "
                       "was received")]
    if failed is None or failed.timed_out:
        return [Broken("grain-calls", failed.seq if failed else None, "ATTEMPT_FAILED",
                       f"{armed}: {did}'s first call must fail as a rejection "
                       f"(timed_out=false), but it {'timed out' if failed else 'did not fail'}")]
    retry = first(EventKind.ATTEMPT, 1)
    received, failed = first(EventKind.CALL_RECEIVED, 1), first(EventKind.ATTEMPT_FAILED, 1)
    rule = (f"{armed}: the {kind.value} is spent by the first call that reaches the callee "
            f"(its CALL_RECEIVED), {did}'s retry, which must time out")
    if retry is None or received is None:
        return [Broken("grain-calls", retry.seq if retry else None,
                       "CALL_RECEIVED" if retry else "ATTEMPT",
                       f"{rule}, but the retry {'was not received' if retry else 'never came'}")]
    if failed is None or not failed.timed_out:
        what = "did not fail" if failed is None else "failed with timed_out=false"
        return [Broken("grain-calls", failed.seq if failed else received.seq,
                       "ATTEMPT_FAILED" if failed else "CALL_RECEIVED",
                       f"{rule}, but it {what}: a mesh that spends the {kind.value} at ATTEMPT "
                       "gives it to the rejected call, and INV4 then sees a timeout the "
                       "harness did not arm, or an armed one ignored")]
    ran = next((e for e in mine if e.kind is EventKind.POSTED and e.hub == "beta"), None)
    if ran is not None and ran.seq < failed.seq:
        return [Broken("grain-calls", ran.seq, "POSTED",
                       f"{rule}: it must not run at the callee while the caller still waits, "
                       f"but it ran at beta before its failure (seq {failed.seq})")]
    return []


def _give_up_steps(run: Exercise) -> None:
    # A leg kept in flight past the give-up, a graceful stop holding for it, then the host
    # gives up on the stop (its shutdown timeout expired): the hold ends at that instant.
    run.adapter.inject(Fault(FaultKind.SLOW_DESTINATION, "alpha", duration_ms=_GIVE_UP_SLOW_MS))
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.adapter.stop(graceful=True)
    run.adapter.advance(_GIVE_UP_AFTER_MS)
    run.gave_up_at = run.adapter.now_ms()
    run.adapter.stop(graceful=False)


_GIVE_UP_AFTER_MS = 1000
_GIVE_UP_SLOW_MS = 5000


def _give_up_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
                    ) -> list[Broken]:
    active = params.stop_stages.get("Active")
    gave_up = run.gave_up_at
    assert gave_up is not None
    said = (f"a graceful stop held for a leg slowed by {_GIVE_UP_SLOW_MS} ms, then "
            f"stop(graceful=False) at {gave_up} ms (the host gave up)")
    entered = next((e for e in trace if e.kind is EventKind.STOP_STAGE_ENTERED
                    and e.stage == active), None)
    if entered is None:
        return [Broken("stop", None, "STOP_STAGE_ENTERED",
                       f"{said}: no stage Active ({active}) was entered: if the mesh numbers "
                       "its stages otherwise, set stop_stages in [tool.harness.params]")]
    left = next((e for e in trace if e.kind is EventKind.STOP_STAGE_LEFT
                 and e.stage == active), None)
    if left is None:
        return [Broken("stop", entered.seq, "STOP_STAGE_ENTERED",
                       f"{said}: stage Active ({active}) was never left")]
    if entered.time_ms <= gave_up and left.time_ms > gave_up:
        return [Broken("stop", left.seq, "STOP_STAGE_LEFT",
                       f"{said}: Active was held {left.time_ms - gave_up} ms after the give-up; "
                       "a second stop(graceful=False) during a graceful stop ends its hold "
                       "at once (INV5: 'holds ended when the host gave up')")]
    if entered.time_ms > gave_up and left.time_ms > entered.time_ms:
        return [Broken("stop", left.seq, "STOP_STAGE_LEFT",
                       f"{said}: Active, reached after the give-up, was held "
                       f"{left.time_ms - entered.time_ms} ms; after a give-up nothing holds")]
    return []


def _roundtrip_steps(run: Exercise) -> None:
    if isinstance(run.adapter, RoundTrippingAdapter):
        run.adapter.set_envelope_roundtrip(True)
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)


def _roundtrip_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    if not isinstance(run.adapter, RoundTrippingAdapter):
        return [Broken("capabilities", None, "-", "the adapter declares envelope_roundtrip, "
                       "but has no set_envelope_roundtrip(on) method")]
    (post,) = run.posts
    if not any(e.kind is EventKind.POSTED and e.delivery_id == post.delivery_id
               and e.hub == "alpha" for e in trace):
        return [Broken("intake", None, "POSTED", f"with the envelope round trip on, "
                       f"{post.delivery_id} posted through the router never reached alpha")]
    return []


def _raising_steps(run: Exercise) -> None:
    run.post("client", "alpha", MessageSpec("FaultingRequest", handler_raises=True),
             Route.DIRECT)
    run.post("client", "alpha", MessageSpec("Request"), Route.DIRECT)


def _raising_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    raising, behind = (post.delivery_id for post in run.posts)
    if not any(e.kind is EventKind.HANDLER_FAULTED and e.delivery_id == raising
               for e in trace):
        return [Broken("capabilities", None, "HANDLER_FAULTED", "the adapter declares "
                       f"raising_handlers, but the handler of {raising} (handler_raises) "
                       "raised nothing")]
    if not any(e.kind is EventKind.HANDLED and e.delivery_id == behind for e in trace):
        return [Broken("intake", None, "HANDLED", f"{behind}, queued behind {raising} "
                       "whose handler raised, was never handled: the hub stopped")]
    return []


# A hub made with its own breaker threshold, low enough that one instant's posts pass it.
_BREAKER_HUB = "gamma"
_BREAKER_THRESHOLD = 3
_STORM = MessageSpec("UpdateStream", MessageClass.USER, "stream/1")


def _breaker_steps(run: Exercise) -> None:
    """`_BREAKER_THRESHOLD` + 1 posts of one key in one instant to a hub made with that
    threshold: the last one must trip the key."""
    adapter = cast(ConfigurableBreakerAdapter, run.adapter)
    adapter.create_hub(_BREAKER_HUB, breaker_threshold=_BREAKER_THRESHOLD)
    run.made.add(_BREAKER_HUB)
    for _ in range(_BREAKER_THRESHOLD + 1):
        run.post("client", _BREAKER_HUB, _STORM, Route.DIRECT)


def _breaker_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    *admitted, past = (post.delivery_id for post in run.posts)
    outcomes = {e.delivery_id: e.kind for e in trace if e.hub == _BREAKER_HUB
                and e.kind in (EventKind.ENQUEUED, EventKind.DROPPED, EventKind.BREAKER_TRIPPED)}
    made = f"a hub made with breaker_threshold={_BREAKER_THRESHOLD}"
    refused = [did for did in admitted if outcomes.get(did) is not EventKind.ENQUEUED]
    if refused:
        return [Broken("hubs-turns-faults-and-the-breaker", None, "ENQUEUED",
                       f"{made} did not enqueue {refused[0]}, one of the first "
                       f"{_BREAKER_THRESHOLD} posts of one key in one instant")]
    if outcomes.get(past) is EventKind.ENQUEUED:
        return [Broken("hubs-turns-faults-and-the-breaker", None, "BREAKER_TRIPPED",
                       f"{made} enqueued {past}, post {_BREAKER_THRESHOLD + 1} of one key in "
                       "one instant: the mesh ignores the threshold it was given, so the "
                       "storms sized by it never trip a key")]
    return []


def _subscribe_steps(run: Exercise) -> None:
    for target in ("alpha", MISSING):
        run.subscriptions.append(run.adapter.subscribe("client", target, retries=2))


def _subscribe_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    if not any(e.kind is EventKind.SUBSCRIBE_ATTEMPT for e in trace):
        return [Broken("capabilities", None, "SUBSCRIBE_ATTEMPT",
                       "the adapter declares subscribe, but two subscriptions sent nothing")]
    return _default_kept(
        run, "subscribe", "subscribe('client', 'nowhere')",
        f"subscribe('client', 'nowhere', retries={_PROTOCOL_RETRIES})",
        lambda again: again.adapter.subscribe("client", MISSING),
        lambda again: again.adapter.subscribe("client", MISSING, retries=_PROTOCOL_RETRIES))


# The protocol's defaults (`MeshAdapter`): a host that leaves the argument out gets these.
_PROTOCOL_RETRIES = 5
_PROTOCOL_GRACEFUL = True


def _rerun(run: Exercise, steps: Callable[[Exercise], object],
           chooser: AskedChooser | None = None) -> list[TraceEvent]:
    """A fresh mesh of the same factory, `steps`, run to quiescence: its trace."""
    assert run.factory is not None
    again = fresh_exercise(run.factory, chooser or AskedChooser())
    steps(again)
    again.adapter.run_until_idle(QUIET_WITHIN_MS)
    return list(again.adapter.trace())


def _default_kept(run: Exercise, call: str, bare: str, spelled: str,
                  without: Callable[[Exercise], object],
                  explicit: Callable[[Exercise], object]) -> list[Broken]:
    """A call made without an optional argument must do what the protocol's default does:
    the harness always passes it, so a default of another value is seen by no other check,
    and bites the host that leaves it out."""
    left_out, given = _rerun(run, without), _rerun(run, explicit)
    if [canonical_line(e) for e in left_out] == [canonical_line(e) for e in given]:
        return []
    parted = next((i for i, (a, b) in enumerate(zip(left_out, given, strict=False))
                   if canonical_line(a) != canonical_line(b)), min(len(left_out), len(given)))
    return [Broken("defaults", None, f"{call}()",
                   f"on a fresh mesh, {bare} gave another trace than {spelled}, the "
                   f"protocol's default (from seq {parted}: {len(left_out)} events against "
                   f"{len(given)}): a host that leaves the argument out gets another "
                   "behaviour than the documented one")]


def _stop_steps(run: Exercise) -> None:
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)  # in flight at stop
    run.adapter.stop(graceful=True)


def _stop_proves(trace: Sequence[TraceEvent], run: Exercise, params: CheckParams) -> list[Broken]:
    kinds = {e.kind for e in trace}
    missing = [k for k in (EventKind.STOP_REQUESTED, EventKind.STOP_STAGE_ENTERED,
                           EventKind.STOP_COMPLETED) if k not in kinds]
    if missing:
        return [Broken("stop", None, kind.name,
                       f"a graceful stop, run to quiescence, emitted no {kind.name}")
                for kind in missing]
    return _default_kept(run, "stop", "a routed request to alpha, then stop()",
                         f"stop(graceful={_PROTOCOL_GRACEFUL})",
                         lambda again: _stop_after_a_request(again.adapter, None),
                         lambda again: _stop_after_a_request(again.adapter, _PROTOCOL_GRACEFUL))


def _stop_after_a_request(mesh: MeshAdapter, graceful: bool | None) -> None:
    mesh.post("client", "alpha", MessageSpec("Request"), route=Route.MONOLITH)
    if graceful is None:
        mesh.stop()
    else:
        mesh.stop(graceful=graceful)


def _schedule_steps(run: Exercise) -> None:
    # Three deliveries posted in one instant to two hubs: their hops are due together.
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.post("peer", "beta", MessageSpec("Request"), Route.MONOLITH)
    run.post("other", "alpha", MessageSpec("Request"), Route.MONOLITH)


def _order_of(trace: Sequence[TraceEvent]) -> list[tuple[str, str | None, str | None]]:
    """What happened where, in order, without seq and ids' numbering: the schedule."""
    return [(e.kind.name, e.hub, e.sender) for e in trace]


def _two_posts(run: Exercise) -> None:
    # Two deliveries posted in one instant to two hubs: a choice between exactly two.
    run.post("client", "alpha", MessageSpec("Request"), Route.MONOLITH)
    run.post("peer", "beta", MessageSpec("Request"), Route.MONOLITH)


def _schedule_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    pair_chooser = AskedChooser()
    pair = _rerun(run, _two_posts, pair_chooser)
    shapes = (
        ("three deliveries posted in one instant to two hubs", _schedule_steps,
         run.chooser.questions, trace),
        ("two deliveries posted in one instant to two hubs", _two_posts,
         pair_chooser.questions, pair),
    )
    for said, steps, questions, first in shapes:
        if questions == 0:
            return [Broken("chooser", None, "Chooser.choose",
                           f"{said}, and the mesh never asked its Chooser which runs first: "
                           "its schedule cannot be explored, so its same-instant races are "
                           "never tried")]
        last = _rerun(run, steps, AskedChooser(last=True))
        if _order_of(last) == _order_of(first):
            return [Broken("chooser", None, "Chooser.choose",
                           f"{said}: the mesh asked its Chooser {questions} time(s), but "
                           "answering the last option every time gave the same trace as the "
                           "first: the mesh does not follow the answer, so its schedule "
                           "cannot be explored")]
    return []


# How long the network program's faults last: longer than a hop, shorter than a timeout.
_NETWORK_FAULT_MS = 1_000


def _network_steps(run: Exercise) -> None:
    """A post to beta while its node is cut off from the rest, then (healed) one while
    its node is down, then one once it has restarted."""
    mesh = run.adapter
    mesh.inject(Fault(FaultKind.PARTITION_NODE, "beta", duration_ms=_NETWORK_FAULT_MS))
    run.post("client", "beta", MessageSpec("Request"), Route.MONOLITH)
    mesh.run_until_idle(QUIET_WITHIN_MS)
    mesh.inject(Fault(FaultKind.CRASH_NODE, "beta", duration_ms=_NETWORK_FAULT_MS))
    run.post("client", "beta", MessageSpec("Request"), Route.MONOLITH)
    mesh.run_until_idle(QUIET_WITHIN_MS)
    run.post("client", "beta", MessageSpec("Request"), Route.MONOLITH)


def _network_proves(
    trace: Sequence[TraceEvent], run: Exercise, params: CheckParams
) -> list[Broken]:
    """Each post reached an end: handled at beta, or answered with a failure (the post
    during the partition may be either; the one after the restart must be handled: the
    node was rebuilt), and the rebuilt hub said it was made afresh (`HUB_CREATED`)."""
    partitioned, crashed, restarted = (post.delivery_id for post in run.posts)
    handled = {e.delivery_id for e in trace if e.kind is EventKind.HANDLED and e.hub == "beta"}
    answered = {e.answers for e in trace if e.kind is EventKind.FAILURE_EMITTED}
    broken = [Broken("network", None, "HANDLED", f"{did}, posted to beta {when}, was neither "
                     "handled there nor answered with a failure")
              for did, when in ((partitioned, "while its node was cut off"),
                                (crashed, "while its node was down"))
              if did not in handled | answered]
    if restarted not in handled:
        broken.append(Broken("network", None, "HANDLED", f"{restarted}, posted to beta after "
                             "its node restarted, was not handled there: restart_node must "
                             "rebuild the node's hubs"))
    made = [e for e in trace if e.kind is EventKind.HUB_CREATED and e.hub == "beta"]
    if len(made) < 2:
        broken.append(Broken("network", None, "HUB_CREATED", "beta's node was rebuilt after "
                             "a crash without a HUB_CREATED for beta: a rebuilt hub starts "
                             "with an empty queue and a fresh breaker, which the checkers "
                             "count afresh only from its HUB_CREATED (INV3, INV6)"))
    return broken


PROGRAMS: tuple[Program, ...] = (
    Program("intake", _intake_steps, _intake_proves),
    Program("schedule", _schedule_steps, _schedule_proves),
    Program("grain", _grain_steps, _grain_proves),
    Program("fault-order", _fault_order_steps, _fault_order_proves),
    Program("zero-count", _zero_count_steps, _zero_count_proves),
    Program("subscribe", _subscribe_steps, _subscribe_proves),
    Program("stop", _stop_steps, _stop_proves),
    Program("give-up", _give_up_steps, _give_up_proves),
    Program("aggregate", _aggregate_steps, _aggregate_proves),
    Program("roundtrip", _roundtrip_steps, _roundtrip_proves),
    Program("raising", _raising_steps, _raising_proves),
    Program("breaker", _breaker_steps, _breaker_proves),
    Program("network", _network_steps, _network_proves),
)


@dataclass(frozen=True)
class ProgramResult:
    program: str
    broken: tuple[Broken, ...]
    events: int
    trace: tuple[TraceEvent, ...] = field(default=(), compare=False, repr=False)


def fresh_exercise(factory: AdapterFactory, chooser: AskedChooser) -> Exercise:
    """A fresh mesh from `factory`, answering `chooser`, with the programs' hubs made."""
    run = Exercise(factory(chooser), chooser, factory)
    for hub in HUBS:
        run.adapter.create_hub(hub)
    return run


def drive(program: Program, factory: AdapterFactory) -> tuple[Exercise, bool, list[TraceEvent]]:
    """A fresh mesh through `program`'s steps, run to quiescence: what the harness did,
    whether it went quiet, and its trace."""
    run = fresh_exercise(factory, AskedChooser())
    program.steps(run)
    quiet = run.adapter.run_until_idle(QUIET_WITHIN_MS)
    return run, quiet, list(run.adapter.trace())


def exercise(program: Program, factory: AdapterFactory, params: CheckParams) -> ProgramResult:
    with (calling_adapter(factory_name(factory), f"in conformance program {program.name!r}"),
          within_budget(f"conformance program {program.name!r}")):
        run, quiet, trace = drive(program, factory)
        broken = [*broken_conventions(trace, run.posts, run.subscriptions),
                  *program.proves(trace, run, params)]  # some proofs drive the adapter
    if not quiet:
        broken.append(Broken("quiescence", None, "run_until_idle",
                             f"not quiet within {QUIET_WITHIN_MS} ms of virtual time"))
    return ProgramResult(program.name, tuple(broken), len(trace), tuple(trace))


def conformance(factory: AdapterFactory, params: CheckParams | None = None
                ) -> tuple[frozenset[Capability], list[ProgramResult]]:
    """The capabilities the adapter declares and each applicable program's result."""
    params = params or CheckParams()
    with calling_adapter(factory_name(factory), "from its factory"):
        declared = capabilities_of(factory(FirstChooser()))
    results = [exercise(p, factory, params) for p in PROGRAMS
               if p.needs is None or p.needs in declared]
    return declared, results


def result_lines(results: Sequence[ProgramResult], indent: str = "  ") -> list[str]:
    """Each program's line (its events, ok or how many conventions broken), each broken
    convention under it: what `adapter-check` and the pytest item show."""
    lines: list[str] = []
    for result in results:
        state = "ok" if not result.broken else f"{len(result.broken)} broken"
        lines.append(f"{indent}{result.program:<10} {result.events:>4} events  {state}")
        lines += [f"{indent}  {problem.line(result.program)}" for problem in result.broken]
    return lines
