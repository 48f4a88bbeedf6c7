"""Every pre-fix mutant, in order, and lookup by id or slug.

A new mutant is its module (`mN_slug.py`, defining its `MUTANT` record) plus its line in
`MUTANT_MODULES`: the tests' tables (what it writes, what it removes, the seed scenarios
that catch it) are read from the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from invariants import records
from invariants.mutants.base import Mutant
from invariants.user_errors import UserError

# One line per mutant module, in id order; each module defines `MUTANT`, its record.
MUTANT_MODULES: tuple[str, ...] = (
    "invariants.mutants.m1_payload_type_guard",
    "invariants.mutants.m2_resend_timeouts",
    "invariants.mutants.m3_unbounded_resubscribe",
    "invariants.mutants.m4_per_key_only_breaker",
    "invariants.mutants.m5_key_without_identity",
    "invariants.mutants.m6_no_stop_hold",
    "invariants.mutants.m7_detached_nack",
    "invariants.mutants.m8_failure_answers_failure",
    "invariants.mutants.m9_answers_rejections",
    "invariants.mutants.m10_sheds_user_messages",
    "invariants.mutants.m11_no_delivery_retry",
    "invariants.mutants.m12_holds_non_graceful",
    "invariants.mutants.m13_suppress_packaged",
    "invariants.mutants.m14_timeout_flag_denied",
    "invariants.mutants.m15_uncapped_retry_delay",
    "invariants.mutants.m16_retry_budget_off_by_one",
    "invariants.mutants.m17_budget_in_seconds",
    "invariants.mutants.m18_identity_traced_as_key",
    "invariants.mutants.m19_refusal_unanswered",
    "invariants.mutants.m20_subscribe_retries_off_by_one",
    "invariants.mutants.m21_watermark_off_by_one",
    "invariants.mutants.m22_properties_off_the_wire",
    "invariants.mutants.m23_aggregate_first_member",
    "invariants.mutants.m24_flat_subscribe_backoff",
    "invariants.mutants.m25_breaker_window_never_slides",
    "invariants.mutants.m26_cooldown_in_seconds",
    "invariants.mutants.m27_pump_stops_early",
    "invariants.mutants.m28_first_release_wins",
    "invariants.mutants.m29_answer_ignored",
    "invariants.mutants.m30_fault_never_spent",
    "invariants.mutants.m31_answer_to_target",
    "invariants.mutants.m32_answer_without_identity",
    "invariants.mutants.m33_handled_at_ancestor",
    "invariants.mutants.m34_gate_left_open",
    "invariants.mutants.m35_early_give_up_ignored",
    "invariants.mutants.m36_nack_lost_on_landing",
    "invariants.mutants.m37_backoff_outlives_stop",
    "invariants.mutants.m38_refusal_not_found",
    "invariants.mutants.m39_key_without_sender",
    "invariants.mutants.m40_fresh_key_counted_once",
    "invariants.mutants.m41_pump_stops_on_fault",
    "invariants.mutants.m42_fault_drops_next",
    "invariants.mutants.m43_full_breaker_refuses_fresh_keys",
    "invariants.mutants.m44_window_opened_after_counting",
    "invariants.mutants.m45_answer_ids_ordered",
    "invariants.mutants.m46_refusal_named_shutting_down",
    "invariants.mutants.m47_timeout_read_at_the_root",
    "invariants.mutants.m48_window_closes_late",
    "invariants.mutants.m49_late_answer_taken",
    "invariants.mutants.m50_call_to_missing_received",
    "invariants.mutants.m51_sender_hub_not_made",
    "invariants.mutants.m52_pump_takes_newest",
)

MUTANTS: tuple[Mutant, ...] = records.load(MUTANT_MODULES, "MUTANT", Mutant)



class UnknownMutant(UserError, ValueError):
    """A mutant name the registry does not hold (one line, exit 2 in every entry point)."""

def find_mutant(name: str) -> Mutant:
    """By id ("M2", "m2"), slug ("resend-timeouts") or both ("M2 resend-timeouts")."""
    wanted = name.strip().lower()
    for mutant in MUTANTS:
        if wanted in (mutant.id.lower(), mutant.slug, mutant.name.lower()):
            return mutant
    known = ", ".join(mutant.name for mutant in MUTANTS)
    raise UnknownMutant(f"unknown mutant {name!r} (known: {known})")


def select_mutants(names: Sequence[str] | None) -> tuple[Mutant, ...]:
    if not names:
        return MUTANTS
    chosen = {find_mutant(name).id for name in names}
    return tuple(mutant for mutant in MUTANTS if mutant.id in chosen)


def id_range() -> str:
    """The registered ids as a range for help texts ("M1..M33")."""
    return f"{MUTANTS[0].id}..{MUTANTS[-1].id}"
