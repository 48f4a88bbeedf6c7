"""INV6: a wide legitimate fan-out is never dropped by the per-key breaker (seed 004, #1200).

The breaker key is (sender, target, message type, payload identity), the 3-tuple without an
identity: a message may be dropped only if its own key carried more than the threshold in
the window plus cooldown before it, and a tripped key is dropped for exactly the cooldown.

Obligations (docs/dynamic-invariants.md, INV6): "fan-out posts past the threshold kept",
"senders on one key counted apart", "fresh keys admitted up to the threshold", "drops
checked against their key", "keys counted afresh in a new window", "tripped keys admitted
again after the cooldown", "storms past the threshold in one instant stopped", "windows
opened by a key's first post" (judged in `inv6_windows`).
"""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

from invariants.checks.harness_facts import Posted
from invariants.checks.inv6_windows import WINDOWS, KeyWindows
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.trace import EventKind, MessageClass, TraceEvent

BreakerKey = tuple[str | None, str | None, str | None, str | None]

KEPT = "fan-out posts past the threshold kept"
SENDERS = "senders on one key counted apart"
FIRST_WINDOW = "fresh keys admitted up to the threshold"
DROPS = "drops checked against their key"
FRESH = "keys counted afresh in a new window"
COOLDOWN = "tripped keys admitted again after the cooldown"
STOPPED = "storms past the threshold in one instant stopped"

Key = tuple[str | None, BreakerKey]  # the hub and the breaker key

# Read for every event: module constants, not slow attribute lookups on the enum class.
_POSTED, _ENQUEUED, _DROPPED, _TRIPPED, _HUB_CREATED = (
    EventKind.POSTED, EventKind.ENQUEUED, EventKind.DROPPED, EventKind.BREAKER_TRIPPED,
    EventKind.HUB_CREATED,
)
_REFUSED = frozenset({EventKind.GATED, EventKind.REJECTED})
_USER = MessageClass.USER


def breaker_key(event: TraceEvent) -> tuple[str | None, BreakerKey]:
    """The hub and the 4-part key (identity None: the 3-tuple fallback)."""
    return event.hub, (event.sender, event.target, event.message_type, event.diagnostic_key)


def _in_window(arrivals: deque[int], start: int) -> int:
    """Posts of the key after `start` (`arrivals` is in time order)."""
    count = 0
    for at in reversed(arrivals):
        if at <= start:
            break
        count += 1
    return count


class FanoutNotDropped(Monitor):
    check_id = "INV6"
    title = "a wide fan-out is never dropped"
    reads_custom_events = False
    obligations = MappingProxyType({
        KEPT: "no post went past the breaker threshold on its (sender, target, type) with "
        "distinct payload identities: no fan-out wider than breaker_threshold was posted "
        "within one window (is the `fanout` family on?)",
        SENDERS: "no post went past the breaker threshold on its (target, type, identity) "
        "with other senders' posts while its own key did not (is the `storm` family on?)",
        FIRST_WINDOW: "no key carried breaker_threshold posts in its first window (is the "
        "`storm` family on, and is breaker_threshold the mesh's?)",
        DROPS: "the breaker never dropped nor tripped: no storm on one key went past "
        "breaker_threshold (is the `storm` family on, and is breaker_threshold the mesh's?)",
        FRESH: "no key carried more than breaker_threshold in all but not within one window "
        "plus cooldown: no storm was spread over two windows (is the `storm` family on?)",
        COOLDOWN: "no tripped key posted again after its cooldown (is the `storm` family on, "
        "and are breaker_threshold and breaker_cooldown_ms the mesh's?)",
        STOPPED: "no key of user traffic carried more than breaker_threshold posts in one "
        "instant (is the `storm` family on?)",
        WINDOWS: "no key tripped in a window it opened itself (is the `storm` family on?)",
    })

    @classmethod
    def by_policy(cls, params: CheckParams) -> dict[str, str]:
        if params.breaker_windows == "none":
            why = "breaker_windows = 'none': the mesh has no per-key breaker to stop a storm"
            return {name: why for name in cls.obligations if name != KEPT}
        if params.breaker_windows != "first_post":
            return {WINDOWS: f"breaker_windows = {params.breaker_windows!r}: the mesh's "
                             "windows open where it chooses, so none is judged exactly"}
        return {}

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._arrivals: dict[Key, deque[int]] = {}
        self._tuples: dict[Key, deque[int]] = {}  # identity left out
        self._shared: dict[Key, deque[int]] = {}  # sender left out
        self._totals: dict[Key, int] = {}  # posts since the key was first seen or last tripped
        self._fresh: set[Key] = set()  # keys already counted in a fresh window
        self._trips: dict[Key, tuple[TraceEvent, bool]] = {}  # last trip, re-admission judged
        self._intake: dict[str | None, tuple[str | None, Key]] = {}  # hub -> its latest POSTED
        # Per key of user traffic: the instant of its latest post, its posts and admissions
        # in that instant. Posts in one instant share a window whatever the breaker's
        # windows are, so more than the threshold admitted there is a storm let through.
        self._bursts: dict[Key, tuple[int, int, int]] = {}
        # The window plus the cooldown: an upper bound on what any tumbling-window breaker
        # could have counted.
        self._span = params.breaker_window_ms + params.breaker_cooldown_ms
        self._windows = KeyWindows(params)  # exact windows, where the mesh declares them
        self._breaker = params.breaker_windows != "none"  # the mesh has one

    def _arrived(
        self, table: dict[Key, deque[int]], key: Key, now: int,
    ) -> deque[int]:
        """The key's arrivals within the span before `now`."""
        arrivals = table.get(key)
        if arrivals is None:  # a fresh key (most of a fan-out's): nothing to let go
            arrivals = table[key] = deque()
            return arrivals
        horizon = now - self._span
        while arrivals and arrivals[0] <= horizon:
            arrivals.popleft()
        return arrivals

    def _key(self, event: TraceEvent, posted: Posted | None) -> Key:
        """The key of the post as the harness made it (`posted`), where the harness made it."""
        if posted is None or posted.target != event.hub:
            return breaker_key(event)
        if event.kind is _POSTED and event.diagnostic_key != posted.diagnostic_key:
            self._lost_identity(event, posted)
        return event.hub, (posted.sender, posted.target, posted.message_type,
                           posted.diagnostic_key)

    def _lost_identity(self, event: TraceEvent, posted: Posted) -> None:
        self.flag(
            f"the mesh reports {event.delivery_id} at {event.hub} with payload identity "
            f"{event.diagnostic_key}, but the harness posted it with {posted.diagnostic_key}: "
            "a breaker keyed on what the mesh reports counts the wrong key",
            event,
        )

    def observe(self, event: TraceEvent) -> None:
        if not self._breaker:
            self._without_breaker(event)
            return
        kind = event.kind
        if kind is _HUB_CREATED:
            self._forget_hub(event.hub)
            return
        if kind is _ENQUEUED:
            self.judged(WINDOWS, self._windows.outcome(event), event)
            intake = self._intake.get(event.hub)
            if intake is None or intake[0] != event.delivery_id:
                return
            self._burst_admitted(event, intake[1])
            if self._trips:
                self._admitted(event, intake[1])
            return
        if kind is _POSTED:
            posted = self.harness.posted(event.delivery_id)
            key = self._key(event, posted)
            self._posted(event, key, self._arrived(self._arrivals, key, event.time_ms))
            # User traffic as the harness posted it: what every breaker counts (it may leave
            # can-be-ignored, lifecycle and failure traffic out).
            user = (posted.message_class if posted is not None else event.message_class) is _USER
            self._windows.posted(event, key, counted=user)
            if user:
                self._burst_posted(key, event.time_ms)
            return
        if kind in _REFUSED:
            self.judged(WINDOWS, self._windows.outcome(event), event)
            return
        if kind is not _DROPPED and kind is not _TRIPPED:
            return
        self.judged(WINDOWS, self._windows.outcome(event), event)
        if kind is _DROPPED:
            event = self.facts.complete(event)
        key = self._key(event, self.harness.posted(event.delivery_id))
        arrivals = self._arrived(self._arrivals, key, event.time_ms)
        self.exercised(DROPS)
        if kind is _TRIPPED:
            self._tripped(event, key, arrivals)
        elif not self._after_cooldown(event, key, arrivals):
            self._held_to_count(event, key, arrivals)

    def _forget_hub(self, hub: str | None) -> None:
        """A hub made afresh (a node rebuilt after a crash makes its hubs again) has a
        fresh breaker: what the old one counted of its keys counts no more."""
        for table in (self._arrivals, self._tuples, self._shared, self._totals, self._trips,
                      self._bursts):
            for key in [k for k in table if k[0] == hub]:
                del table[key]
        self._fresh = {key for key in self._fresh if key[0] != hub}
        self._intake.pop(hub, None)
        self._windows.forget_hub(hub)

    def _without_breaker(self, event: TraceEvent) -> None:
        """A mesh with no breaker: its fan-outs are counted as kept, and a drop is wrong."""
        kind = event.kind
        if kind is _POSTED:
            key = self._key(event, self.harness.posted(event.delivery_id))
            self._posted(event, key, self._arrived(self._arrivals, key, event.time_ms))
        elif kind is _DROPPED or kind is _TRIPPED:
            self.flag(f"breaker {kind.value} {event.delivery_id} at {event.hub}, though the "
                      "mesh declares none (breaker_windows = 'none')", event)

    def _tripped(self, event: TraceEvent, key: Key, arrivals: deque[int]) -> None:
        self._held_to_count(event, key, arrivals)
        self._trips[key] = (event, False)
        self._windows.retire_key(key)  # a trip ends exact windows, its post traced or not
        self._totals[key] = 0  # a trip starts the key's count afresh
        self._fresh.discard(key)

    def _held_to_count(self, event: TraceEvent, key: Key, arrivals: deque[int]) -> None:
        """A drop or trip: legitimate only past the threshold in the window plus cooldown."""
        threshold = self.params.threshold_at(key[0])
        if len(arrivals) > threshold:
            return
        sender, target, message_type, identity = key[1]
        what = "dropped" if event.kind is _DROPPED else "tripped on"
        self.flag(
            f"breaker {what} {event.delivery_id} ({sender}->{target} {message_type} "
            f"identity {identity}) though its key had only {len(arrivals)} message(s) "
            f"in the window (threshold {threshold}){self._why(key)}",
            event,
        )

    def _why(self, key: Key) -> str:
        """What a wrong breaker counted that the key's own posts do not explain."""
        threshold = self.params.threshold_at(key[0])
        total = self._totals.get(key, 0)
        if total > threshold:
            return (f"; {total} in all since it was first seen or last tripped, which only a "
                    "window that never moves on would count as one")
        hub, (_sender, target, message_type, identity) = key
        shared = len(self._shared.get((hub, (None, target, message_type, identity)), ()))
        if shared > threshold:
            return (f"; {shared} with other senders' posts on the same target, type and "
                    "identity, which only a key without its sender would count as one")
        return ""

    def _posted(self, event: TraceEvent, key: Key, arrivals: deque[int]) -> None:
        now = event.time_ms
        arrivals.append(now)
        self._intake[event.hub] = (event.delivery_id, key)
        hub, (sender, target, message_type, identity) = key
        wide = self._arrived(self._tuples, (hub, (sender, target, message_type, None)), now)
        wide.append(now)
        shared = self._arrived(self._shared, (hub, (None, target, message_type, identity)), now)
        shared.append(now)
        threshold = self.params.threshold_at(hub)
        counted = len(arrivals)
        if len(wide) > threshold >= counted:
            self.exercised(KEPT)
        if len(shared) > threshold >= counted:
            self.exercised(SENDERS)
        total = self._totals[key] = self._totals.get(key, 0) + 1
        if total == threshold == counted and key not in self._trips:
            self.exercised(FIRST_WINDOW)
        if total > threshold >= counted and key not in self._fresh:
            self._fresh.add(key)
            self.exercised(FRESH)

    def _burst_posted(self, key: Key, now: int) -> None:
        """A post of user traffic, counted in its key's instant."""
        burst = self._bursts.get(key)
        posts, admitted = (burst[1], burst[2]) if burst is not None and burst[0] == now else (0, 0)
        posts += 1
        if posts == self.params.threshold_at(key[0]) + 1:
            self.exercised(STOPPED)
        self._bursts[key] = (now, posts, admitted)

    def _burst_admitted(self, event: TraceEvent, key: Key) -> None:
        """An ENQUEUED of user traffic: at most the threshold of one key in one instant."""
        burst = self._bursts.get(key)
        if burst is None or burst[0] != event.time_ms:
            return
        now, posts, admitted = burst
        admitted += 1
        self._bursts[key] = (now, posts, admitted)
        threshold = self.params.threshold_at(key[0])
        if admitted == threshold + 1:
            sender, target, message_type, identity = key[1]
            self.flag(
                f"breaker admitted {event.delivery_id} ({sender}->{target} {message_type} "
                f"identity {identity}) at {now} ms: {threshold + 1} posts of its key admitted "
                f"in that instant (threshold {threshold}); posts in one instant share any "
                "window, so the breaker let a storm through",
                event,
            )

    def _since_trip(self, key: Key, event: TraceEvent) -> tuple[TraceEvent, int] | None:
        """The key's last trip and the ms since it, once per trip judged after its cooldown."""
        trip = self._trips.get(key)
        if trip is None:
            return None
        tripped, judged = trip
        elapsed = event.time_ms - tripped.time_ms
        if elapsed >= self.params.breaker_cooldown_ms and not judged:
            self._trips[key] = (tripped, True)
            self.exercised(COOLDOWN)
        return tripped, elapsed

    def _admitted(self, event: TraceEvent, key: Key) -> None:
        """An ENQUEUED of a tripped key: not before its cooldown has passed."""
        since = self._since_trip(key, event)
        if since is None:
            return
        tripped, elapsed = since
        cooldown = self.params.breaker_cooldown_ms
        if elapsed < cooldown:
            self.flag(
                f"breaker admitted {event.delivery_id} {elapsed} ms after its key tripped on "
                f"{tripped.delivery_id} (cooldown {cooldown} ms): the key was re-opened early",
                tripped,
                event,
            )

    def _after_cooldown(self, event: TraceEvent, key: Key, arrivals: deque[int]) -> bool:
        """A DROPPED of a tripped key once its cooldown has passed: flagged (True) unless the
        window before it carried more than the threshold again."""
        since = self._since_trip(key, event)
        if since is None:
            return False
        tripped, elapsed = since
        cooldown = self.params.breaker_cooldown_ms
        if elapsed < cooldown:
            return False
        in_window = _in_window(arrivals, event.time_ms - self.params.breaker_window_ms)
        threshold = self.params.threshold_at(key[0])
        if in_window > threshold:
            return False
        self.flag(
            f"breaker still dropped {event.delivery_id} {elapsed} ms after its key tripped on "
            f"{tripped.delivery_id} (cooldown {cooldown} ms), with {in_window} message(s) of "
            f"the key in the window (threshold {threshold})",
            tripped,
            event,
        )
        return True


check = check_function(FanoutNotDropped)
