"""INV6 on hand-built traces: a wide fan-out is never dropped; a genuine storm may be."""

from dyn_traces import C, K, Trace

from invariants.checks import CheckParams
from invariants.checks import inv6_fanout_not_dropped as inv6

SMALL = CheckParams(breaker_threshold=20)


def _msg(t: Trace, kind: K, i: int, identity: str | None) -> None:
    t.add(kind, hub="cache", delivery_id=f"m{i}", sender="owner", target="cache",
          message_type="SyncStream", message_class=C.USER, diagnostic_key=identity)


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
    assert "only 1 message(s) in the window" in found[0].message


def test_storm_on_one_key_may_be_dropped() -> None:
    t = Trace()
    for i in range(21):
        _msg(t, K.ENQUEUED, i, "one-stream")
    t.add(K.BREAKER_TRIPPED, hub="cache", sender="owner", target="cache",
          message_type="SyncStream", diagnostic_key="one-stream")
    _msg(t, K.DROPPED, 21, "one-stream")
    assert inv6.check(t.events, SMALL) == []


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
    assert v.seqs == (22,)


def test_messages_in_another_window_do_not_justify_a_drop() -> None:
    t = Trace()
    for i in range(21):
        _msg(t, K.ENQUEUED, i, "s")
    t.at(10_000)
    _msg(t, K.DROPPED, 21, "s")
    assert len(inv6.check(t.events, SMALL)) == 1
