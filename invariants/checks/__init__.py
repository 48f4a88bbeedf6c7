"""Trace checkers INV1–INV7: pure folds over `invariants.trace` events.

`CHECKS` maps each check id to its monitor class; `check(check_id, trace)` runs one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from invariants.checks.inv1_rejection_terminal import RejectionTerminal
from invariants.checks.inv2_bounded_subscribe import BoundedSubscribe
from invariants.checks.inv3_aggregate_watermark import AggregateWatermark
from invariants.checks.inv4_no_resend_after_timeout import NoResendAfterTimeout
from invariants.checks.inv5_stop_holds import StopHolds
from invariants.checks.inv6_fanout_not_dropped import FanoutNotDropped
from invariants.checks.inv7_answer_once import AnswerOnce
from invariants.checks.monitor import Monitor, run_monitor
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation, describe
from invariants.trace import MessageClass, TraceEvent

CHECKS: dict[str, type[Monitor]] = {
    cls.check_id: cls
    for cls in (
        RejectionTerminal,
        BoundedSubscribe,
        AggregateWatermark,
        NoResendAfterTimeout,
        StopHolds,
        FanoutNotDropped,
        AnswerOnce,
    )
}
CHECK_IDS: tuple[str, ...] = tuple(CHECKS)


def monitor_for(check_id: str, params: CheckParams = DEFAULT_PARAMS) -> Monitor:
    try:
        cls = CHECKS[check_id]
    except KeyError:
        known = ", ".join(CHECK_IDS)
        raise ValueError(f"unknown check {check_id!r} (known: {known})") from None
    return cls(params)


def check(
    check_id: str,
    trace: Sequence[TraceEvent],
    params: CheckParams = DEFAULT_PARAMS,
    *,
    now_ms: int | None = None,
    final: bool = False,
    declared: Mapping[str, MessageClass] | None = None,
) -> list[Violation]:
    monitor = monitor_for(check_id, params)
    return run_monitor(monitor, trace, now_ms=now_ms, final=final, declared=declared)


__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "DEFAULT_PARAMS",
    "CheckParams",
    "Monitor",
    "Violation",
    "check",
    "describe",
    "monitor_for",
]
