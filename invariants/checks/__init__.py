"""Trace checkers INV1–INV7: pure folds over `invariants.trace` events.

A new checker is its module, ending with its record (`check = check_function(Cls)`, a
`Check`: the monitor class and the checker as a plain function), plus its line in
`CHECK_MODULES` (loaded by `invariants.records`, as every registry is). `CHECKS`
maps each check id to its monitor class; `check(check_id, trace)` runs one; `check_ids` is
the one normaliser of invariant ids every entry point uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from invariants import records
from invariants.adapter import Capability
from invariants.checks.harness_facts import (
    HarnessFact,
    HubsMade,
    Injected,
    NetworkHeld,
    Posted,
    RoundTripSet,
    StopAsked,
    Subscribed,
)
from invariants.checks.monitor import Check, Monitor
from invariants.checks.params import DEFAULT_PARAMS, CheckParams, changed_figures, with_figures
from invariants.checks.violation import Violation, describe
from invariants.trace import MessageClass, TraceEvent
from invariants.user_errors import UserError

# One line per checker module, in id order; each module defines `check`, its record.
CHECK_MODULES: tuple[str, ...] = (
    "invariants.checks.inv1_rejection_terminal",
    "invariants.checks.inv2_bounded_subscribe",
    "invariants.checks.inv3_aggregate_watermark",
    "invariants.checks.inv4_no_resend_after_timeout",
    "invariants.checks.inv5_stop_holds",
    "invariants.checks.inv6_fanout_not_dropped",
    "invariants.checks.inv7_answer_once",
)
CHECK_RECORDS: tuple[Check, ...] = records.load(CHECK_MODULES, "check", Check)
CHECKS: dict[str, type[Monitor]] = {record.id: record.monitor for record in CHECK_RECORDS}
CHECK_IDS: tuple[str, ...] = tuple(CHECKS)


class UnknownCheck(UserError, ValueError):
    """An invariant id no checker has; the message is one line naming where it came from."""


def check_ids(values: Sequence[str], origin: str) -> tuple[str, ...]:
    """Invariant ids, upper-cased, in the given order without repeats; `none` alone selects
    no invariant. An unknown id raises `UnknownCheck` naming `origin`."""
    ids = tuple(value.strip().upper() for value in values if value.strip())
    if ids == ("NONE",):
        return ()
    unknown = [check for check in ids if check not in CHECKS]
    if unknown:
        raise UnknownCheck(
            f"{origin}: unknown invariant {unknown[0]!r} (known: {', '.join(CHECKS)}, none)"
        )
    return tuple(dict.fromkeys(ids))


def monitor_for(
    check_id: str,
    params: CheckParams = DEFAULT_PARAMS,
    capabilities: frozenset[Capability] | None = None,
) -> Monitor:
    """A fresh monitor of `check_id`, told what the adapter declares (by default the
    protocol's first surface)."""
    return _record(check_id).fresh(params, capabilities)


def _record(check_id: str) -> Check:
    try:
        return Check(CHECKS[check_id])  # CHECKS, not the records: a registered checker too
    except KeyError:
        known = ", ".join(CHECK_IDS)
        raise ValueError(f"unknown check {check_id!r} (known: {known})") from None


def check(
    check_id: str,
    trace: Sequence[TraceEvent],
    params: CheckParams = DEFAULT_PARAMS,
    *,
    now_ms: int | None = None,
    final: bool = False,
    declared: Mapping[str, MessageClass] | None = None,
    facts: Sequence[HarnessFact] = (),
    capabilities: frozenset[Capability] | None = None,
) -> list[Violation]:
    """`check_id`'s checker (its record) run over a whole trace."""
    return _record(check_id)(trace, params, now_ms=now_ms, final=final, declared=declared,
                             facts=facts, capabilities=capabilities)


__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "CHECK_MODULES",
    "CHECK_RECORDS",
    "DEFAULT_PARAMS",
    "Check",
    "CheckParams",
    "HarnessFact",
    "HubsMade",
    "Injected",
    "Monitor",
    "NetworkHeld",
    "Posted",
    "RoundTripSet",
    "StopAsked",
    "Subscribed",
    "UnknownCheck",
    "Violation",
    "changed_figures",
    "check",
    "check_ids",
    "describe",
    "monitor_for",
    "with_figures",
]
