"""The per-key storm breaker and the aggregate watermark (seed 001, Invariant 3 and #1200)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ref_mutants import mutant_module

from invariants.trace import MessageClass
from reference_impl.breaker import AggregateWatermark, StormBreaker, breaker_key
from reference_impl.envelope import Delivery
from reference_impl.messages import DeliveryFailure, ErrorType, Message


def _d(key: str | None = "stream/1", cls: MessageClass = MessageClass.USER,
       type_name: str = "Update") -> Delivery:
    return Delivery("d", "owner", "cache", Message(type_name, cls, key))


def _feed(breaker: StormBreaker, delivery: Delivery, n: int, now: int = 0) -> int:
    """How many of `n` intakes at `now` were dropped."""
    return sum(1 for _ in range(n) if not breaker.admit(delivery, now)[0])


def test_key_includes_the_payload_identity_and_falls_back_to_the_tuple() -> None:
    assert breaker_key(_d("stream/1")) == ("owner", "cache", "Update", "stream/1")
    assert breaker_key(_d(None)) == ("owner", "cache", "Update")
    assert breaker_key(_d("node/9").package()) == ("owner", "cache", "Update", "node/9")


def test_the_2001st_message_in_a_window_trips_and_is_dropped() -> None:
    breaker = StormBreaker()
    assert _feed(breaker, _d(), 2_000) == 0
    admitted, tripped = breaker.admit(_d(), 999)
    assert (admitted, tripped) == (False, True)
    assert breaker.trip_count == 1


def test_cooldown_drops_for_two_seconds_then_counts_afresh() -> None:
    breaker = StormBreaker()
    _feed(breaker, _d(), 2_001, now=0)
    assert _feed(breaker, _d(), 5, now=1_999) == 5
    assert breaker.trip_count == 1  # one trip, not one per drop
    assert _feed(breaker, _d(), 2_000, now=2_000) == 0


def test_the_window_tumbles_after_one_second() -> None:
    breaker = StormBreaker()
    assert _feed(breaker, _d(), 2_000, now=0) == 0
    assert _feed(breaker, _d(), 2_000, now=1_000) == 0
    assert breaker.trip_count == 0


def test_wide_fanout_over_identities_is_never_dropped() -> None:
    breaker = StormBreaker()
    dropped = sum(1 for i in range(5_000) if not breaker.admit(_d(f"node/{i}"), 0)[0])
    assert dropped == 0


def test_negative_control_a_key_without_identity_drops_the_fanout() -> None:
    """Mutant M5, the pre-fix 3-tuple key: 5,000 identities are one key, and it trips (the
    breaker reads only the delivery's fields, so a reference delivery feeds it)."""
    breaker = mutant_module("M5", "breaker").StormBreaker()
    dropped = sum(1 for i in range(5_000) if not breaker.admit(_d(f"node/{i}"), 0)[0])
    assert dropped > 0


@pytest.mark.parametrize(
    "cls", [MessageClass.LIFECYCLE, MessageClass.FAILURE, MessageClass.IGNORABLE]
)
def test_lifecycle_failure_and_ignorable_traffic_is_never_counted(cls: MessageClass) -> None:
    breaker = StormBreaker()
    assert _feed(breaker, _d(cls=cls), 5_000) == 0
    assert breaker.tracked_keys == 0


def test_delivery_failures_are_never_counted() -> None:
    breaker = StormBreaker()
    payload = DeliveryFailure.as_payload("x", ErrorType.NOT_FOUND)
    failure = Delivery("d", "a", "b", payload).package()
    assert _feed(breaker, failure, 3_000) == 0


def test_at_most_ten_thousand_keys_the_longest_idle_evicted() -> None:
    breaker = StormBreaker()
    for i in range(10_000):
        breaker.admit(_d(f"k{i}"), 0)
    breaker.admit(_d("k0"), 1)  # k0 is fresh again; k1 is now the longest idle
    breaker.admit(_d("new"), 2)
    assert breaker.tracked_keys == 10_000
    assert ("owner", "cache", "Update", "k0") in breaker._windows
    assert ("owner", "cache", "Update", "k1") not in breaker._windows



def _least_recently_seen(sequence: list[int], max_keys: int, *, refresh: bool = True
                         ) -> list[int]:
    """The keys a least-recently-seen table of `max_keys` holds after `sequence`, oldest
    first (`refresh=False`: first in, first out, the wrong model)."""
    held: list[int] = []
    for key in sequence:
        if key in held:
            if refresh:
                held.remove(key)
                held.append(key)
            continue
        if len(held) >= max_keys:
            held.pop(0)
        held.append(key)
    return held


def _tracked(sequence: list[int], max_keys: int) -> list[int]:
    breaker = StormBreaker(max_keys=max_keys)
    for i, key in enumerate(sequence):
        breaker.admit(_d(f"k{key}"), i)
    return [int(str(k[-1])[1:]) for k in breaker._windows]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 7), max_size=60), st.integers(1, 6))
def test_the_table_holds_the_least_recently_seen_keys_in_order(
    sequence: list[int], max_keys: int
) -> None:
    """Before the table is first full and after (when it changes representation), the
    keys held and their order are those of a least-recently-seen table."""
    assert _tracked(sequence, max_keys) == _least_recently_seen(sequence, max_keys)


def test_the_table_is_not_first_in_first_out() -> None:
    """Negative control for the property above: the two models differ, and the breaker
    follows the right one."""
    sequence = [0, 1, 0, 2]
    assert _least_recently_seen(sequence, 2) == [0, 2]
    assert _least_recently_seen(sequence, 2, refresh=False) == [1, 2]
    assert _tracked(sequence, 2) == [0, 2]


def test_a_drop_in_cooldown_keeps_the_key_fresh_and_its_cooldown() -> None:
    """A key seen while it drops is recently seen too: eviction takes the longest idle
    other key, and the cooldown still holds."""
    breaker = StormBreaker()
    _feed(breaker, _d("k0"), 2_001, now=0)  # tripped: drops until 2_000
    for i in range(1, 10_000):
        breaker.admit(_d(f"k{i}"), 1)
    assert _feed(breaker, _d("k0"), 1, now=2) == 1  # k0 seen again (dropped)
    breaker.admit(_d("new"), 3)
    assert ("owner", "cache", "Update", "k0") in breaker._windows
    assert ("owner", "cache", "Update", "k1") not in breaker._windows
    assert _feed(breaker, _d("k0"), 1, now=1_999) == 1
    assert breaker.trip_count == 1


@pytest.mark.parametrize(
    ("cls", "depth", "shed"),
    [
        (MessageClass.IGNORABLE, 24, False),
        (MessageClass.IGNORABLE, 25, True),
        (MessageClass.USER, 10_000, False),
        (MessageClass.LIFECYCLE, 10_000, False),
        (MessageClass.FAILURE, 10_000, False),
        (MessageClass.SYSTEM, 10_000, False),
    ],
)
def test_watermark_sheds_only_sheddable_at_or_above_it(
    cls: MessageClass, depth: int, shed: bool
) -> None:
    assert AggregateWatermark(25).should_shed(cls, depth) is shed


def test_watermark_defaults_to_ten_thousand_and_rejects_nonsense() -> None:
    assert AggregateWatermark().watermark == 10_000
    with pytest.raises(ValueError, match="watermark"):
        AggregateWatermark(0)
