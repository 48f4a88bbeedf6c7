"""INV6 on hand-built traces: a wide fan-out is never dropped; a genuine storm may be."""

from dyn_traces import C, K, Trace

from invariants.checks import CheckParams
from invariants.checks import inv6_fanout_not_dropped as inv6

# The bound rules alone: the exact windows (`breaker_windows = "first_post"`) are tested
# in test_check_inv6_windows.py.
SMALL = CheckParams(breaker_threshold=20, breaker_windows="any")


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
        t.at(i // 20)  # the 21st a millisecond later: no instant past the threshold
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
        t.at(i // 20)
        _msg(t, K.ENQUEUED, i, "s")
    t.at(10_000)
    _msg(t, K.DROPPED, 21, "s")
    assert len(inv6.check(t.events, SMALL)) == 1


# A storm spread over two windows, and a tripped key's cooldown (threshold 20, window 1 s,
# cooldown 2 s).


def _burst(t: Trace, first: int, count: int, kind: K = K.ENQUEUED) -> None:
    for i in range(first, first + count):
        _msg(t, kind, i, "one-stream")


def _trip(t: Trace, i: int) -> None:
    """Post `i` of the key trips it (and is dropped)."""
    t.add(K.POSTED, hub="cache", delivery_id=f"m{i}", sender="owner", target="cache",
          message_type="SyncStream", message_class=C.USER, diagnostic_key="one-stream")
    t.add(K.BREAKER_TRIPPED, hub="cache", delivery_id=f"m{i}", sender="owner", target="cache",
          message_type="SyncStream", diagnostic_key="one-stream")
    t.add(K.DROPPED, hub="cache", delivery_id=f"m{i}")


def test_a_key_spread_over_two_windows_is_counted_afresh() -> None:
    t = Trace()
    _burst(t, 0, 11)
    _burst(t.at(3_001), 11, 11)  # 22 in all, 11 within any window plus cooldown
    monitor = inv6.FanoutNotDropped(SMALL)
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[inv6.FRESH] == 1  # counted per key, not per post


def test_a_window_that_never_moves_on_is_flagged() -> None:
    t = Trace()
    _burst(t, 0, 11)
    t.at(3_001)
    _burst(t, 11, 9)
    _trip(t, 20)  # the 21st post in all, the 10th in its window
    found = inv6.check(t.events, SMALL)
    assert [v.message for v in found] == [
        "breaker tripped on m20 (owner->cache SyncStream identity one-stream) though its key "
        "had only 10 message(s) in the window (threshold 20); 21 in all since it was first "
        "seen or last tripped, which only a window that never moves on would count as one",
        "breaker dropped m20 (owner->cache SyncStream identity one-stream) though its key had "
        "only 10 message(s) in the window (threshold 20)",
    ]


def test_a_tripped_key_is_dropped_through_its_cooldown_and_admitted_as_it_ends() -> None:
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    _msg(t.at(1_999), K.DROPPED, 21, "one-stream")
    _msg(t.at(2_000), K.ENQUEUED, 22, "one-stream")
    monitor = inv6.FanoutNotDropped(SMALL)
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[inv6.COOLDOWN] == 1


def test_a_key_admitted_before_its_cooldown_has_passed_is_flagged() -> None:
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    _msg(t.at(1_999), K.ENQUEUED, 21, "one-stream")  # too early: a cooldown of 2 ms, say
    [v] = inv6.check(t.events, SMALL)
    assert v.message == ("breaker admitted m21 1999 ms after its key tripped on m20 "
                         "(cooldown 2000 ms): the key was re-opened early")
    assert [e.kind for e in v.events] == [K.BREAKER_TRIPPED, K.ENQUEUED]


def test_a_key_still_dropped_after_its_cooldown_is_flagged() -> None:
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    # Within 3 s of the storm, so the window-plus-cooldown bound alone would allow it.
    _msg(t.at(2_000), K.DROPPED, 21, "one-stream")  # too late: the cooldown read as seconds
    [v] = inv6.check(t.events, SMALL)
    assert v.message == ("breaker still dropped m21 2000 ms after its key tripped on m20 "
                         "(cooldown 2000 ms), with 1 message(s) of the key in the window "
                         "(threshold 20)")
    assert [e.kind for e in v.events] == [K.BREAKER_TRIPPED, K.DROPPED]


def test_a_key_may_trip_again_after_its_cooldown() -> None:
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    t.at(2_000)
    _burst(t, 21, 20)
    _trip(t, 41)
    _msg(t, K.DROPPED, 42, "one-stream")
    assert inv6.check(t.events, SMALL) == []


def test_the_configured_cooldown_is_the_one_held() -> None:
    short = CheckParams(breaker_threshold=20, breaker_cooldown_ms=500)
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    _msg(t.at(500), K.ENQUEUED, 21, "one-stream")
    assert inv6.check(t.events, short) == []
    assert len(inv6.check(t.events, SMALL)) == 1


# Posts of one key in one instant: past the threshold, the breaker must stop them.


def test_a_storm_let_through_in_one_instant_is_flagged() -> None:
    t = Trace()
    _burst(t, 0, 21)  # 21 admitted at 0 ms, threshold 20
    monitor = inv6.FanoutNotDropped(SMALL)
    monitor.feed(t.events)
    [v] = monitor.violations(final=True)
    assert "breaker admitted m20" in v.message and "21 posts of its key admitted" in v.message
    assert monitor.evidence[inv6.STOPPED] == 1


def test_a_storm_stopped_in_its_instant_passes_and_is_counted() -> None:
    t = Trace()
    _burst(t, 0, 20)
    _trip(t, 20)
    monitor = inv6.FanoutNotDropped(SMALL)
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[inv6.STOPPED] == 1


def test_exempt_traffic_and_another_instant_start_the_count_afresh() -> None:
    t = Trace()
    for i in range(30):  # can-be-ignored traffic: no breaker need count it
        t.add(K.POSTED, hub="cache", delivery_id=f"h{i}", sender="owner", target="cache",
              message_type="Heartbeat", message_class=C.IGNORABLE, diagnostic_key="p")
        t.add(K.ENQUEUED, hub="cache", delivery_id=f"h{i}")
    _burst(t, 0, 11)
    _burst(t.at(1), 11, 10)  # 21 within one window, never more than 20 in one instant
    monitor = inv6.FanoutNotDropped(SMALL)
    monitor.feed(t.events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence.get(inv6.STOPPED, 0) == 0


def test_a_hub_is_held_to_its_own_threshold() -> None:
    t = Trace()
    _burst(t, 0, 9)  # 9 admitted at a hub made with a threshold of 8
    params = CheckParams(breaker_threshold=20, breaker_thresholds={"cache": 8},
                         breaker_windows="any")
    [v] = inv6.check(t.events, params)
    assert "9 posts of its key admitted in that instant (threshold 8)" in v.message
    assert inv6.check(t.events, SMALL) == []


def test_a_mesh_with_no_breaker_passes_a_storm_and_is_flagged_for_a_drop() -> None:
    """`breaker_windows = "none"`: a storm let through is the design, not a breaker's
    failure; a drop is flagged all the same, and the storm obligations are without a case."""
    none = CheckParams(breaker_threshold=20, breaker_windows="none")
    storm = Trace()
    for i in range(50):  # one key, one instant, past the threshold: all admitted
        _msg(storm, K.ENQUEUED, i, "one-stream")
    assert inv6.check(storm.events, none, final=True) == []
    assert inv6.check(storm.events, SMALL, final=True)  # the control: a breaker must stop it
    dropped = Trace()
    _msg(dropped, K.DROPPED, 0, "one-stream")
    [found] = inv6.check(dropped.events, none)
    assert "though the mesh declares none" in found.message
    assert set(inv6.FanoutNotDropped.by_policy(none)) == (
        set(inv6.FanoutNotDropped.obligations) - {inv6.KEPT})


def test_a_fan_out_on_a_mesh_with_no_breaker_still_counts_as_kept() -> None:
    t = Trace()
    for i in range(30):
        _msg(t, K.ENQUEUED, i, f"stream-{i}")
    monitor = inv6.FanoutNotDropped(CheckParams(breaker_threshold=20, breaker_windows="none"))
    monitor.feed(t.events)
    assert monitor.evidence[inv6.KEPT] == 10  # posts 21-30 of the one (sender, target, type)


def test_a_hub_rebuilt_after_a_crash_has_a_fresh_breaker() -> None:
    """A node restarted after a crash makes its hubs again (`HUB_CREATED`): their breakers
    count afresh, so a key tripped on the old hub is admitted on the new one, in its
    cooldown. The control: the same admission with no rebuild re-opened the key early."""

    def found(rebuilt: bool) -> list[str]:
        t = Trace()
        _burst(t, 0, 20)
        _trip(t, 20)
        if rebuilt:
            t.at(100).add(K.HUB_CREATED, hub="cache", watermark=100)
        _msg(t.at(1_000), K.ENQUEUED, 21, "one-stream")
        return [v.message for v in inv6.check(t.events, SMALL)]

    assert found(rebuilt=True) == []
    assert found(rebuilt=False) == ["breaker admitted m21 1000 ms after its key tripped on "
                                    "m20 (cooldown 2000 ms): the key was re-opened early"]
