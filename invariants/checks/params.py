"""The figures the checkers hold a mesh to.

Defaults are the production numbers from the seeds; every one is a parameter so another
mesh (or a test with a low watermark) can state its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

# The routes a post can take (`invariants.adapter.Route`'s values), for `ordered_routes`.
ROUTES = frozenset({"direct", "monolith", "grain"})
# Where a breaker's window opens (`breaker_windows`), or that the mesh has no breaker.
BREAKER_WINDOWS = frozenset({"first_post", "any", "none"})
# What a subscription does with an answer to an attempt that timed out
# (`late_subscribe_answers`).
LATE_SUBSCRIBE_ANSWERS = frozenset({"refused", "taken"})
# How a failure answer made during a stop travels (`stop_failure_answers`).
STOP_FAILURE_ANSWERS = frozenset({"legs", "direct"})
# How long a routing leg may live (`leg_lifetime`).
LEG_LIFETIMES = frozenset({"until_landed", "response_timeout"})


@dataclass(frozen=True, slots=True)
class CheckParams:
    # INV3: aggregate watermark per hub (default, and per-hub overrides).
    watermark: int = 10_000
    watermarks: Mapping[str, int] = field(default_factory=dict)
    # INV3: a user-facing message queued behind a blocked turn is handled this soon after release.
    probe_deadline_ms: int = 10_000
    # INV2: bounded subscribe.
    subscribe_retries: int = 5
    subscribe_timeout_ms: int = 30_000
    subscribe_backoff_ms: int = 250  # before the first resubscribe
    subscribe_backoff_factor: int = 2  # each later backoff is the one before times this
    # INV4: non-idempotent delivery retries.
    delivery_retries: int = 6
    retry_base_ms: int = 250
    retry_cap_ms: int = 3_000
    response_timeout_ms: int = 30_000
    # INV4: attempt errors that mean "the callee refused and holds nothing" (re-sendable).
    resendable_errors: frozenset[str] = frozenset({
        "rejected",
        "directory_unstable",
        "RejectionError",
        "ShuttingDownError",
        "DirectoryUnstableError",
    })
    # INV5: graceful stop hold budget.
    stop_budget_ms: int = 30_000
    # INV5: the stop stages the invariant names, by their number in the mesh's lifecycle.
    stop_stages: Mapping[str, int] = field(
        default_factory=lambda: {"Active": 20_000, "GrainDeactivation": 19_998}
    )
    # INV5: LEG_ENDED reasons that say a leg was cut off, not landed.
    unlanded_reasons: frozenset[str] = frozenset({
        "drained", "refused", "gated", "cancelled", "abandoned", "shutting_down",
    })
    # INV6: per-key storm breaker (the threshold: default, and per-hub overrides).
    breaker_threshold: int = 2_000
    breaker_thresholds: Mapping[str, int] = field(default_factory=dict)
    breaker_window_ms: int = 1_000
    breaker_cooldown_ms: int = 2_000
    # INV6: where a key's window opens: "first_post" (at the key's first post, and at its
    # first post after the window closed: judged exactly), or "any" (only bounded); or
    # "none": the mesh has no per-key breaker (a design too: it drops nothing of a key, so
    # no storm is stopped and no fan-out dropped, and any drop is flagged).
    breaker_windows: str = "first_post"
    # INV6: keys a hub's breaker tracks; past them it may evict any key (then not judged).
    breaker_max_keys: int = 10_000
    # INV7: routes on which posts of one sender to one target are handled in post order
    # (a policy: none at all is a design too, and leaves the order obligation without case).
    ordered_routes: frozenset[str] = frozenset({"direct"})
    # INV7: whether that order holds across message classes (the reference: one queue for
    # every class), or only among posts of one class (an inbox where control messages
    # overtake bulk ones, by design).
    order_across_classes: bool = True
    # INV1: follow-up events a rejected post may cause beyond its one rejection record.
    rejection_followups: int = 0
    # INV2: an answer to an attempt that already timed out: "refused" (the reference's:
    # the subscription gave up on that request and retries or ends) or "taken" (a late
    # success ends it, a late failure starts its backoff then: never more sends).
    late_subscribe_answers: str = "refused"
    # INV5: a failure answer made during a graceful stop: "legs" (the reference's: it
    # travels as a NACK leg of the routing pool, which the hold waits for) or "direct" (the
    # mesh hands it to the sender's intake itself, outside any leg).
    stop_failure_answers: str = "legs"
    # INV5: how long a routing leg may live: "until_landed" (the reference's: a leg lives
    # until its delivery lands, however long the callee takes) or "response_timeout" (the
    # caller's response timeout ends every leg it has not seen land).
    leg_lifetime: str = "until_landed"

    def __post_init__(self) -> None:
        if self.leg_lifetime not in LEG_LIFETIMES:
            raise ValueError(
                f"leg_lifetime must be one of {', '.join(sorted(LEG_LIFETIMES))}, got "
                f"{self.leg_lifetime!r}"
            )
        if self.stop_failure_answers not in STOP_FAILURE_ANSWERS:
            raise ValueError(
                "stop_failure_answers must be one of "
                f"{', '.join(sorted(STOP_FAILURE_ANSWERS))}, got {self.stop_failure_answers!r}"
            )
        if self.late_subscribe_answers not in LATE_SUBSCRIBE_ANSWERS:
            raise ValueError(
                "late_subscribe_answers must be one of "
                f"{', '.join(sorted(LATE_SUBSCRIBE_ANSWERS))}, got "
                f"{self.late_subscribe_answers!r}"
            )
        if self.breaker_windows not in BREAKER_WINDOWS:
            raise ValueError(
                f"breaker_windows must be one of {', '.join(sorted(BREAKER_WINDOWS))}, got "
                f"{self.breaker_windows!r}"
            )
        unknown = sorted(self.ordered_routes - ROUTES)
        if unknown:
            raise ValueError(f"ordered_routes: {', '.join(unknown)} is not a route (one of "
                             f"{', '.join(sorted(ROUTES))})")
        if not isinstance(self.order_across_classes, bool):
            raise ValueError(f"order_across_classes must be true or false, got "
                             f"{self.order_across_classes!r}")
        if self.subscribe_backoff_factor < 1:
            raise ValueError(
                f"subscribe_backoff_factor must be at least 1 (1: a flat backoff), got "
                f"{self.subscribe_backoff_factor}"
            )

    def threshold_at(self, hub: str | None) -> int:
        """The breaker threshold at `hub`: its own where it has one, else the default."""
        if hub is None:
            return self.breaker_threshold
        return self.breaker_thresholds.get(hub, self.breaker_threshold)

    def retry_delay_ms(self, retry: int) -> int:
        """Delay before retry number `retry` (1-based): min(base * 2^(retry-1), cap); a
        retry numbered below 1 (a trace that lost its first attempt) waits the first's."""
        return min(self.retry_base_ms << max(retry - 1, 0), self.retry_cap_ms)

    def subscribe_delay_ms(self, retry: int) -> int:
        """Backoff before resubscribe number `retry` (1-based): base * factor^(retry-1)."""
        growth: int = self.subscribe_backoff_factor ** max(retry - 1, 0)
        return self.subscribe_backoff_ms * growth

    @property
    def subscribe_bound_ms(self) -> int:
        """Virtual time within which a subscription must have answered or terminated."""
        attempts = self.subscribe_retries + 1
        backoff = sum(self.subscribe_delay_ms(n) for n in range(1, self.subscribe_retries + 1))
        return attempts * self.subscribe_timeout_ms + backoff


DEFAULT_PARAMS = CheckParams()


def changed_figures(params: CheckParams) -> dict[str, object]:
    """The figures where `params` differs from the seeds', as JSON values (a set as a sorted
    array, a table with its keys sorted): what names a set of figures in an example-database
    key and in a fuzzing worker's environment. Empty for the seeds' own figures."""
    changes: dict[str, object] = {}
    for each in fields(CheckParams):
        value = getattr(params, each.name)
        if value == getattr(DEFAULT_PARAMS, each.name):
            continue
        if isinstance(value, frozenset):
            changes[each.name] = sorted(value)
        elif isinstance(value, Mapping):
            changes[each.name] = dict(sorted(value.items()))
        else:
            changes[each.name] = value
    return changes


def with_figures(changes: Mapping[str, object]) -> CheckParams:
    """The seeds' figures with `changes` (what `changed_figures` returns) applied; a
    `TypeError` or `ValueError` on a name or value `CheckParams` does not take."""
    names = {each.name for each in fields(CheckParams)}
    values: dict[str, object] = {}
    for name, value in changes.items():
        if name not in names:
            raise TypeError(f"unknown parameter {name!r}")
        default = getattr(DEFAULT_PARAMS, name)
        values[name] = frozenset(value) if isinstance(default, frozenset) else value  # type: ignore[call-overload]
    return replace(DEFAULT_PARAMS, **values)  # type: ignore[arg-type]
