"""INV3 on hand-built traces: past the watermark only sheddable traffic is shed, and it is."""

from dyn_traces import C, K, Trace

from invariants.adapter import FaultKind
from invariants.checks import CheckParams, Injected
from invariants.checks import inv3_aggregate_watermark as inv3
from invariants.checks.monitor import run_monitor

LOW = CheckParams(watermarks={"h": 3})


def _intake(t: Trace, kind: K, did: str, cls: C) -> None:
    """POSTED states the class; the outcome event need not repeat it."""
    t.add(K.POSTED, hub="h", delivery_id=did, message_class=cls)
    t.add(kind, hub="h", delivery_id=did)


def _flood(t: Trace, n: int, *, shed_from: int) -> None:
    """n ignorable posts to a blocked hub; those at depth >= shed_from are shed."""
    for i in range(n):
        _intake(t, K.SHED if i >= shed_from else K.ENQUEUED, f"i{i}", C.IGNORABLE)


def test_flood_shed_at_the_watermark_with_probe_handled_passes() -> None:
    t = Trace()
    t.add(K.TURN_BLOCKED, hub="h")
    _flood(t, 10, shed_from=3)
    _intake(t, K.ENQUEUED, "probe", C.USER)
    t.at(5_000).add(K.TURN_RELEASED, hub="h")
    for did in ("i0", "i1", "i2", "probe"):
        t.add(K.HANDLED, hub="h", delivery_id=did)
    assert inv3.check(t.events, LOW, final=True) == []


def test_sheddable_admitted_past_the_watermark_is_flagged() -> None:
    t = Trace()
    _flood(t, 10, shed_from=100)  # no watermark: everything admitted
    found = inv3.check(t.events, LOW)
    assert [v.seqs for v in found] == [(7,), (9,), (11,), (13,), (15,), (17,), (19,)]
    assert "must be shed" in found[0].message


def test_depth_is_counted_from_the_trace_not_taken_from_the_mesh() -> None:
    t = Trace()
    for i in range(4):  # the mesh under-reports its depth: the count says 3 at the fourth
        t.add(K.ENQUEUED, hub="h", delivery_id=f"i{i}", message_class=C.IGNORABLE, depth=0)
    [v] = inv3.check(t.events, LOW)
    assert "at depth 3" in v.message


def test_handled_messages_leave_the_queue_and_removal_empties_it() -> None:
    t = Trace()
    for i in range(3):
        _intake(t, K.ENQUEUED, f"i{i}", C.IGNORABLE)
    t.add(K.HANDLED, hub="h", delivery_id="i0")
    _intake(t, K.ENQUEUED, "i3", C.IGNORABLE)  # depth 2: admitted
    _intake(t, K.ENQUEUED, "u", C.USER)
    t.add(K.FAULT_INJECTED, reason="remove_target", target="h")
    for i in range(4, 7):
        _intake(t, K.ENQUEUED, f"i{i}", C.IGNORABLE)
    assert inv3.check(t.events, LOW, final=True) == []


def test_user_message_shed_is_flagged() -> None:
    t = Trace()
    _flood(t, 3, shed_from=3)
    _intake(t, K.SHED, "u", C.USER)
    [v] = inv3.check(t.events, LOW)
    assert "user message u shed" in v.message


def test_lifecycle_message_shed_is_flagged() -> None:
    t = Trace()
    _flood(t, 3, shed_from=3)
    _intake(t, K.SHED, "x", C.LIFECYCLE)
    assert len(inv3.check(t.events, LOW)) == 1


def test_shed_below_the_watermark_is_flagged() -> None:
    t = Trace()
    _flood(t, 1, shed_from=3)
    _intake(t, K.SHED, "i", C.IGNORABLE)
    [v] = inv3.check(t.events, LOW)
    assert "at depth 1 below watermark 3" in v.message


def test_breaker_tripping_on_ignorable_flood_is_flagged() -> None:
    t = Trace()
    _intake(t, K.DROPPED, "i", C.IGNORABLE)
    [v] = inv3.check(t.events, LOW)
    assert "trip count must stay 0" in v.message


def test_probe_not_handled_within_deadline_after_release_is_overdue() -> None:
    t = Trace()
    t.add(K.TURN_BLOCKED, hub="h")
    _intake(t, K.ENQUEUED, "probe", C.USER)
    t.at(1_000).add(K.TURN_RELEASED, hub="h")
    assert inv3.check(t.events, LOW, now_ms=11_000) == []
    [v] = inv3.check(t.events, LOW, now_ms=11_001)
    assert "not handled within 10000 ms" in v.message
    assert v.seqs == (2, 3)


def test_queued_user_message_never_handled_is_unfinished() -> None:
    t = Trace()
    _intake(t, K.ENQUEUED, "probe", C.USER)
    assert inv3.check(t.events, LOW) == []
    [v] = inv3.check(t.events, LOW, final=True)
    assert "never handled" in v.message


def test_what_a_hub_still_queues_when_the_silo_stops_is_the_stop_s_business() -> None:
    """A completed stop ends what INV3 owes a queue (INV5 judges what a stop must hold):
    neither the probe's deadline after a release nor "never handled" outlives it."""

    def found(stopped: bool) -> list[str]:
        t = Trace()
        t.add(K.TURN_BLOCKED, hub="h")
        _intake(t, K.ENQUEUED, "probe", C.USER)
        if stopped:
            t.add(K.STOP_COMPLETED)
        t.at(100).add(K.TURN_RELEASED, hub="h")
        return [v.message for v in inv3.check(t.events, LOW, now_ms=20_000, final=True)]

    assert found(stopped=True) == []
    assert found(stopped=False) == [  # the control: with no stop, both are owed
        "user-facing message probe at h not handled within 10000 ms of the turn's release",
        "user-facing message probe queued at h never handled",
    ]


def test_watermark_stated_by_the_mesh_applies_unless_the_driver_configured_one() -> None:
    t = Trace()
    t.add(K.HUB_CREATED, hub="h", watermark=2)
    _flood(t, 3, shed_from=100)
    [v] = inv3.check(t.events)  # the default 10,000 would admit all three
    assert "at depth 2 >= watermark 2" in v.message
    assert inv3.check(t.events, CheckParams(watermarks={"h": 3})) == []


def test_nothing_is_handled_while_an_injected_hold_lasts() -> None:
    def run(handled_at: int) -> tuple[list[str], int]:
        t = Trace()
        _intake(t, K.ENQUEUED, "u1", C.USER)
        holds = [Injected(FaultKind.BLOCK_HUB, "h", 1, 1_000, 0, len(t.events)),
                 Injected(FaultKind.BLOCK_HUB, "h", 1, 5_000, 0, len(t.events))]  # the later
        t.at(handled_at).add(K.HANDLED, hub="h", delivery_id="u1")
        monitor = inv3.AggregateWatermark()
        found = run_monitor(monitor, t.events, facts=holds)
        return [v.message for v in found], monitor.evidence[inv3.HELD]

    assert run(1_000) == (["h handled u1 at 1000 ms, while the turn the harness blocked at "
                           "0 ms for 5,000 ms was held (until 5000 ms)"], 0)
    assert run(5_000) == ([], 1)


def test_a_block_on_a_hub_the_harness_removed_is_not_a_hold() -> None:
    """A removed hub has no turn to hold: what it still handles of its old queue is not a
    turn taken during a hold (a mesh may finish a departed hub's queue)."""
    def run(removed_first: bool) -> list[str]:
        t = Trace()
        _intake(t, K.ENQUEUED, "u1", C.USER)
        remove = Injected(FaultKind.REMOVE_TARGET, "h", 1, 0, 0, len(t.events))
        block = Injected(FaultKind.BLOCK_HUB, "h", 1, 1_000, 0, len(t.events))
        t.at(10).add(K.HANDLED, hub="h", delivery_id="u1")
        facts = [remove, block] if removed_first else [block]
        return [v.message for v in run_monitor(inv3.AggregateWatermark(), t.events, facts=facts)]

    assert run(removed_first=True) == []
    assert run(removed_first=False) == ["h handled u1 at 10 ms, while the turn the harness "
                                        "blocked at 0 ms for 1,000 ms was held (until 1000 ms)"]


def test_a_held_turn_may_hold_one_message_its_queue_no_longer_counts() -> None:
    """While the harness holds a hub's turn, a mesh whose turn took a message off the queue
    before the hold (its own depth, after each enqueue, one short of the trace's count)
    is judged by its queue: the message in the held turn is not in it. The controls: a
    mesh whose depth agrees with the trace, and the same depths with no hold."""

    def found(blocked: bool, in_hand: bool) -> list[str]:
        t = Trace()
        if blocked:
            t.add(K.TURN_BLOCKED, hub="h")
        for i in range(4):  # watermark 3: the fourth comes at a count of 3
            t.add(K.POSTED, hub="h", delivery_id=f"i{i}", message_class=C.IGNORABLE)
            t.add(K.ENQUEUED, hub="h", delivery_id=f"i{i}", depth=i if in_hand else i + 1)
        facts = [Injected(FaultKind.BLOCK_HUB, "h", 1, 5_000, 0, 0)] if blocked else []
        return [v.message for v in run_monitor(inv3.AggregateWatermark(LOW), t.events,
                                               facts=facts)]

    assert found(blocked=True, in_hand=True) == []
    flagged = ["sheddable message i3 admitted to h at depth 3 >= watermark 3 (must be shed)"]
    assert found(blocked=True, in_hand=False) == flagged
    assert found(blocked=False, in_hand=True) == flagged


def test_a_failure_answer_may_be_shed_past_the_watermark_never_below_it() -> None:
    """Seed 004 sheds failure-class messages beside can-be-ignored ones; the reference keeps
    them. Past the watermark either is correct; below it a shed is wrong; a user-facing
    message is never shed (the controls)."""

    def found(depth: int, cls: C) -> list[str]:
        t = Trace()
        t.add(K.TURN_BLOCKED, hub="h")
        for i in range(depth):
            _intake(t, K.ENQUEUED, f"u{i}", C.USER)
        _intake(t, K.SHED, "answer", cls)
        return [v.message for v in inv3.check(t.events, LOW)]

    assert found(3, C.FAILURE) == []
    assert found(2, C.FAILURE) == ["message answer shed at h at depth 2 below watermark 3"]
    assert found(3, C.USER) == ["user message answer shed at h"]


def test_what_a_node_queued_when_the_harness_crashed_it_is_owed_no_turn() -> None:
    """A crash loses what the node queued, and the harness does not know which hubs
    shared the node: a message queued at the crash is not "never handled". The control:
    the same queue with no crash, and a message queued after the crash, still owed."""

    def found(crashed: bool, queued_after: int | None = None) -> list[str]:
        t = Trace()
        _intake(t, K.ENQUEUED, "u1", C.USER)
        facts = [Injected(FaultKind.CRASH_NODE, "other", 1, 100, 0, len(t.events))] \
            if crashed else []
        if queued_after is not None:
            _intake(t.at(queued_after), K.ENQUEUED, "u2", C.USER)
        return [v.message for v in run_monitor(inv3.AggregateWatermark(LOW), t.events,
                                               final=True, facts=facts)]

    assert found(crashed=True) == []
    assert found(crashed=False) == ["user-facing message u1 queued at h never handled"]
    assert found(crashed=True, queued_after=200) == [
        "user-facing message u2 queued at h never handled"]
    # Queued while the node is down (before its restart at 100 ms): on a node the crash may
    # have taken, as INV7 reads a post made then.
    assert found(crashed=True, queued_after=99) == []


def test_a_hub_rebuilt_after_a_crash_starts_with_an_empty_queue() -> None:
    """A node restarted after a crash rebuilds its hubs (`HUB_CREATED` again), their queues
    empty: what the old hub queued no longer counts toward the new one's watermark. The
    control: the same queue with no rebuild keeps its depth."""

    def found(rebuilt: bool) -> list[str]:
        t = Trace()
        t.add(K.TURN_BLOCKED, hub="h")
        for i in range(2):
            _intake(t, K.ENQUEUED, f"u{i}", C.IGNORABLE)
        facts = [Injected(FaultKind.CRASH_NODE, "h", 1, 100, 0, len(t.events))]
        if rebuilt:
            t.at(100).add(K.HUB_CREATED, hub="h", watermark=3)
        for i in range(2):
            _intake(t.at(200), K.ENQUEUED, f"i{i}", C.IGNORABLE)
        return [v.message for v in run_monitor(inv3.AggregateWatermark(LOW), t.events,
                                               facts=facts)]

    assert found(rebuilt=True) == []
    assert found(rebuilt=False) == [
        "sheddable message i1 admitted to h at depth 3 >= watermark 3 (must be shed)"]
