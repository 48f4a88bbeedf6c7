"""The per-key storm breaker and the per-hub aggregate watermark.

Per key = (sender, target, message type, payload identity): a wide legitimate fan-out
(one sender, one target, one type, many identities) is many keys, never one loop. Without
an identity the key is the stricter 3-tuple. The aggregate watermark is the safety net the
per-key breaker cannot be: it sheds sheddable traffic once a hub's queue is too deep.
"""

from __future__ import annotations

from collections import OrderedDict

from invariants.trace import MessageClass
from reference_impl.constants import (
    BREAKER_COOLDOWN_MS,
    BREAKER_MAX_KEYS,
    BREAKER_THRESHOLD,
    BREAKER_WINDOW_MS,
    DEFAULT_AGGREGATE_WATERMARK,
)
from reference_impl.envelope import Delivery

BreakerKey = tuple[str, ...]

# Shutdown, dispose, initialize, DeliveryFailure, heartbeat and other can-be-ignored
# traffic is never counted: dropping it would be the wedge, not the cure.
UNCOUNTED_CLASSES = frozenset(
    {MessageClass.LIFECYCLE, MessageClass.FAILURE, MessageClass.IGNORABLE}
)


def breaker_key(delivery: Delivery) -> BreakerKey:
    """The key a delivery is counted under."""
    identity = delivery.diagnostic_key
    if identity is None:
        return (delivery.sender, delivery.target, delivery.message_type)
    return (delivery.sender, delivery.target, delivery.message_type, identity)


# A key's window: (start_ms, count, tripped_until_ms). A tuple of ints, replaced on every
# update, so ten thousand tracked keys cost the cyclic garbage collector nothing.
Window = tuple[int, int, int]


class StormBreaker:
    """Tumbling 1 s windows per key; the 2001st message in a window trips the key, which
    then drops for the 2 s cooldown. At most 10,000 keys, the longest idle evicted first."""

    def __init__(
        self,
        *,
        threshold: int = BREAKER_THRESHOLD,
        window_ms: int = BREAKER_WINDOW_MS,
        cooldown_ms: int = BREAKER_COOLDOWN_MS,
        max_keys: int = BREAKER_MAX_KEYS,
    ) -> None:
        self.threshold = threshold
        self.window_ms = window_ms
        self.cooldown_ms = cooldown_ms
        self.max_keys = max_keys
        self.trip_count = 0
        # Insertion order is recency order: a key seen again is popped and put back last.
        # A plain dict keeps that order with half the hashing and comparing of an
        # OrderedDict. Once the breaker is full, every new key evicts the oldest, which a
        # dict finds only by stepping over the holes its removals leave at its front (slower
        # with every eviction) and an OrderedDict removes at once: the table then becomes
        # one (`_ordered`, the same object), order kept.
        self._windows: dict[BreakerKey, Window] = {}
        self._ordered: OrderedDict[BreakerKey, Window] | None = None

    @property
    def tracked_keys(self) -> int:
        return len(self._windows)

    def admit(self, delivery: Delivery, now_ms: int) -> tuple[bool, bool]:
        """(admitted, tripped_now) for one intake."""
        if delivery.message_class in UNCOUNTED_CLASSES:
            return True, False
        key = breaker_key(delivery)
        windows = self._windows
        # Popped and put back, so the key becomes the most recently seen (eviction order):
        # cheaper than a lookup, a move to the end and a store.
        window = windows.pop(key, None)
        if window is None:
            if len(windows) >= self.max_keys:
                ordered = self._ordered
                if ordered is None:
                    ordered = self._ordered = OrderedDict(windows)
                    self._windows = windows = ordered
                ordered.popitem(last=False)  # the key idle the longest
            start, count, tripped_until = now_ms, 0, -1
        else:
            start, count, tripped_until = window
            if now_ms < tripped_until:
                windows[key] = window
                return False, False
        if now_ms - start >= self.window_ms:
            start, count = now_ms, 0
        count += 1
        if count > self.threshold:
            self.trip_count += 1
            tripped_until = now_ms + self.cooldown_ms
            windows[key] = (tripped_until, 0, tripped_until)
            return False, True
        windows[key] = (start, count, tripped_until)
        return True, False


class AggregateWatermark:
    """Per-hub shed policy: at or above the watermark, sheddable traffic is shed."""

    def __init__(self, watermark: int = DEFAULT_AGGREGATE_WATERMARK) -> None:
        if watermark < 1:
            raise ValueError(f"aggregate watermark must be >= 1, got {watermark}")
        self.watermark = watermark
        self.shed_count = 0

    def should_shed(self, message_class: MessageClass, depth: int) -> bool:
        return depth >= self.watermark and message_class.sheddable
