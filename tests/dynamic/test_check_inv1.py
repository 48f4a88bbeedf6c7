"""INV1 on hand-built traces: a rejected post is logged once, dropped, never answered."""

from dyn_traces import C, K, Trace

from invariants.checks import inv1_rejection_terminal as inv1


def _rejected_post(t: Trace, did: str = "d1") -> None:
    t.add(K.POSTED, hub="a", delivery_id=did, sender="s", target="a", message_class=C.USER)
    t.add(K.REJECTED, hub="a", delivery_id=did, message_class=C.USER)


def test_rejection_logged_once_and_dropped_passes() -> None:
    t = Trace()
    for i in range(100):  # the seed's repeated rejected post: follow-ups stay 0
        _rejected_post(t, f"d{i}")
    t.add(K.LEG_ENDED, leg_id="l1", delivery_id="d0")
    assert inv1.check(t.events, final=True) == []


def test_failure_answering_a_rejected_post_is_flagged() -> None:
    t = Trace()
    _rejected_post(t)
    t.at(5).add(K.FAILURE_EMITTED, hub="a", delivery_id="f1", answers="d1", error="Failed")
    [v] = inv1.check(t.events)
    assert v.check_id == "INV1"
    assert "answers rejected post d1" in v.message
    assert v.seqs == (1, 2)


def test_rejected_post_that_is_still_enqueued_is_flagged() -> None:
    t = Trace()
    _rejected_post(t)
    t.add(K.ENQUEUED, hub="a", delivery_id="d1", message_class=C.USER)
    [v] = inv1.check(t.events)
    assert "was not dropped" in v.message


def test_rejection_logged_twice_is_flagged() -> None:
    t = Trace()
    _rejected_post(t)
    t.add(K.REJECTED, hub="a", delivery_id="d1")
    [v] = inv1.check(t.events)
    assert "more than once" in v.message


def test_failure_answering_a_failure_is_an_amplification_chain() -> None:
    t = Trace()
    t.add(K.POSTED, hub="a", delivery_id="d1", message_class=C.USER)
    t.add(K.FAILURE_EMITTED, hub="a", delivery_id="f1", answers="d1", error="NotFound")
    t.add(K.FAILURE_EMITTED, hub="b", delivery_id="f2", answers="f1", error="NotFound")
    [v] = inv1.check(t.events)
    assert "amplification chain" in v.message
    assert v.seqs == (2,)


def test_posted_failure_class_answered_is_flagged_without_an_emit_record() -> None:
    t = Trace()
    t.add(K.POSTED, hub="a", delivery_id="x", message_class=C.FAILURE, message_type="DF")
    t.add(K.FAILURE_EMITTED, hub="a", delivery_id="f9", answers="x", error="NotFound")
    assert [v.message for v in inv1.check(t.events)] == [
        "DeliveryFailure answers DeliveryFailure x (amplification chain)"
    ]


def test_an_ordinary_failure_answering_an_ordinary_post_passes() -> None:
    t = Trace()
    t.add(K.POSTED, hub="a", delivery_id="d1", message_class=C.USER)
    t.add(K.FAILURE_EMITTED, hub="a", delivery_id="f1", answers="d1", error="NotFound")
    assert inv1.check(t.events) == []


def test_a_failure_known_only_to_the_driver_still_counts() -> None:
    # A routed DeliveryFailure to a missing target never reaches a hub: only the driver
    # that posted it knows its class.
    t = Trace()
    t.add(K.LEG_STARTED, leg_id="L1", leg_kind="route", delivery_id="x")
    t.add(K.FAILURE_EMITTED, hub="router", delivery_id="f1", answers="x", error="NotFound")
    assert inv1.check(t.events) == []
    [v] = inv1.check(t.events, declared={"x": C.FAILURE})
    assert "amplification chain" in v.message
