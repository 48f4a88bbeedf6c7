"""INV6 on hand-built traces: a wide fan-out is never dropped; a genuine storm may be."""

from dyn_traces import C, K, Trace

from invariants.checks import CheckParams
from invariants.checks import inv6_fanout_not_dropped as inv6

SMALL = CheckParams(breaker_threshold=20)


def _msg(t: Trace, kind: K, i: int, identity: str | None) -> None:
    """One intake: POSTED states the key, the outcome event need not repeat it."""
    t.add(K.POSTED, hub="cache", delivery_id=f"m{i}", sender="owner", target="cache",
          message_type="SyncStream", message_class=C.USER, diagnostic_key=identity)
    t.add(kind, hub="cache", delivery_id=f"m{i}")


def test_fanout_of_5000_identities_with_no_drop_passes() -> None:
    t = Trace()
    for i in range(5_000):
        _msg(t, K.ENQUEUED, i, f"stream-{i}")
    assert inv6.check(t.events, final=True) == []


def test_fanout_dropped_on_the_routing_tuple_is_flagged() -> None:
    t = Trace()
    for i in range(30):
        _msg(t, K.DROPPED if i > 20 else K.ENQUEUED, i, f"stream-{i}")
    found = inv6.check(t.events, SMALL)
    assert len(found) == 9
    assert "identity stream-21) though its key had only 1 message(s)" in found[0].message


def test_storm_on_one_key_may_be_dropped() -> None:
    t = Trace()
    for i in range(20):
        _msg(t, K.ENQUEUED, i, "one-stream")
    t.add(K.POSTED, hub="cache", delivery_id="m20", sender="owner", target="cache",
          message_type="SyncStream", message_class=C.USER, diagnostic_key="one-stream")
    t.add(K.BREAKER_TRIPPED, hub="cache", delivery_id="m20", sender="owner", target="cache",
          message_type="SyncStream", diagnostic_key="one-stream")
    t.add(K.DROPPED, hub="cache", delivery_id="m20")
    _msg(t, K.DROPPED, 21, "one-stream")
    assert inv6.check(t.events, SMALL) == []


def test_trip_on_the_threshold_th_message_is_flagged() -> None:
    t = Trace()
    for i in range(19):
        _msg(t, K.ENQUEUED, i, "one-stream")
    t.add(K.POSTED, hub="cache", delivery_id="m19", sender="owner", target="cache",
          message_type="SyncStream", message_class=C.USER, diagnostic_key="one-stream")
    t.add(K.BREAKER_TRIPPED, hub="cache", delivery_id="m19", sender="owner", target="cache",
          message_type="SyncStream", diagnostic_key="one-stream")
    [v] = inv6.check(t.events, SMALL)
    assert "tripped on m19" in v.message and "only 20 message(s)" in v.message


def test_drop_during_cooldown_is_allowed_but_not_after_it() -> None:
    t = Trace()
    for i in range(21):
        _msg(t, K.ENQUEUED, i, None)  # no identity: the 3-tuple key
    t.at(2_900)
    _msg(t, K.DROPPED, 21, None)
    assert inv6.check(t.events, SMALL) == []
    t.at(3_001)
    _msg(t, K.DROPPED, 22, None)
    [v] = inv6.check(t.events, SMALL)
    assert v.seqs == (45,)


def test_messages_in_another_window_do_not_justify_a_drop() -> None:
    t = Trace()
    for i in range(21):
        _msg(t, K.ENQUEUED, i, "s")
    t.at(10_000)
    _msg(t, K.DROPPED, 21, "s")
    assert len(inv6.check(t.events, SMALL)) == 1
