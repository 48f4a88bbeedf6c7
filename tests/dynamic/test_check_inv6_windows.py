"""INV6's exact windows on hand-built traces: a key's window opens at its first post."""

from dyn_traces import C, K, Trace

from invariants.checks import CheckParams
from invariants.checks import inv6_fanout_not_dropped as inv6
from invariants.checks.inv6_windows import WINDOWS
from invariants.checks.violation import Violation

# A threshold of 3 in a window of 100 ms.
EXACT = CheckParams(breaker_threshold=3, breaker_window_ms=100, breaker_cooldown_ms=200)


def _post(t: Trace, at: int, i: int, outcome: K, *, hub: str = "cache",
          identity: str = "stream/1") -> None:
    t.at(at).add(K.POSTED, hub=hub, delivery_id=f"m{i}", sender="owner", target=hub,
                 message_type="SyncStream", message_class=C.USER, diagnostic_key=identity)
    if outcome is K.BREAKER_TRIPPED:
        t.add(K.BREAKER_TRIPPED, hub=hub, delivery_id=f"m{i}", sender="owner", target=hub,
              message_type="SyncStream", diagnostic_key=identity)
        outcome = K.DROPPED
    t.add(outcome, hub=hub, delivery_id=f"m{i}")


def _edges(window_end: int, trip_at: int, *, late: bool = False, early: bool = False) -> Trace:
    """A full first window at 0, a post at `window_end` (the next window's first), that
    window filled, and one at `trip_at`: admitted or tripped as a breaker with the wrong
    window would."""
    t = Trace()
    for i in range(3):
        _post(t, 0, i, K.ENQUEUED)
    _post(t, window_end, 3, K.BREAKER_TRIPPED if late else K.ENQUEUED)
    if late:
        return t
    for i in (4, 5):
        _post(t, window_end, i, K.ENQUEUED)
    _post(t, trip_at, 6, K.ENQUEUED if early else K.BREAKER_TRIPPED)
    return t


def test_a_key_whose_windows_open_at_its_first_post_passes_and_is_counted() -> None:
    monitor = inv6.FanoutNotDropped(EXACT)
    monitor.feed(_edges(100, 199).events)
    assert monitor.violations(final=True) == []
    assert monitor.evidence[WINDOWS] == 1


def test_a_window_open_at_its_closing_millisecond_is_flagged() -> None:
    [v] = inv6.check(_edges(100, 199, late=True).events, EXACT)
    assert v.message.startswith("breaker tripped on m3 (owner->cache SyncStream identity "
                                "stream/1), only post 1 of its key in its window (threshold 3)")
    assert "its window opened at 100 ms" in v.message
    assert "closes at 200 ms" in v.message


def test_a_window_closed_a_millisecond_early_is_flagged() -> None:
    [v] = inv6.check(_edges(100, 199, early=True).events, EXACT)
    assert v.message.startswith("breaker admitted m6 (owner->cache SyncStream identity "
                                "stream/1), post 4 of its key in its window, over the "
                                "threshold 3")


def test_with_windows_declared_any_only_the_bound_is_held() -> None:
    bounded = CheckParams(breaker_threshold=3, breaker_window_ms=100, breaker_cooldown_ms=200,
                          breaker_windows="any")
    assert inv6.check(_edges(100, 199, late=True).events, bounded) == []
    assert inv6.check(_edges(100, 199, early=True).events, bounded) == []


def test_a_key_is_judged_only_until_its_first_trip() -> None:
    t = _edges(100, 199)
    # After the cooldown the mesh opens the next window where it likes: a post at 500
    # admitted, and 3 more in its instant (the fourth dropped) are not judged exactly.
    for i in range(7, 11):
        _post(t, 500, i, K.ENQUEUED if i < 10 else K.DROPPED)
    assert inv6.check(t.events, EXACT) == []


def test_a_key_with_a_gated_post_or_at_a_hub_past_max_keys_is_not_judged() -> None:
    gated = Trace()
    _post(gated, 0, 0, K.GATED)
    for i in range(1, 4):
        _post(gated, 0, i, K.ENQUEUED)
    _post(gated, 0, 4, K.BREAKER_TRIPPED)  # the mesh counted the gated post: no verdict
    assert inv6.check(gated.events, EXACT) == []
    full = Trace()
    _post(full, 0, 0, K.ENQUEUED, identity="other")
    _post(full, 50, 1, K.BREAKER_TRIPPED)  # would be post 1 of its key's window
    few_keys = CheckParams(breaker_threshold=3, breaker_window_ms=100,
                           breaker_cooldown_ms=200, breaker_max_keys=1)
    assert _exact(inv6.check(full.events, few_keys)) == []  # the bound still flags it
    [v] = _exact(inv6.check(full.events, EXACT))
    assert "m1" in v.message


def _exact(found: list[Violation]) -> list[Violation]:
    return [v for v in found if "breaker_windows first_post" in v.message]


def test_an_unknown_window_rule_is_refused() -> None:
    try:
        CheckParams(breaker_windows="sliding")
    except ValueError as exc:
        assert "breaker_windows must be one of any, first_post, none, got 'sliding'" in str(exc)
    else:
        raise AssertionError("breaker_windows='sliding' was accepted")


def test_windows_declared_any_leave_the_exact_windows_not_applicable() -> None:
    reasons = inv6.FanoutNotDropped.inapplicable(frozenset(), CheckParams(breaker_windows="any"))
    assert reasons[WINDOWS].startswith("breaker_windows = 'any'")
    # Negative control: the reference's policy keeps them applicable.
    assert WINDOWS not in inv6.FanoutNotDropped.inapplicable(frozenset(), CheckParams())
