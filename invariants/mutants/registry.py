"""Every pre-fix mutant, in order, and lookup by id or slug.

A new mutant is its module (`catalogue/mN_slug.py`, defining its `MUTANT` record: a `Patch`
when it replaces one line or expression of its site, else a `Rewrite` with a codemod class
of its own) plus its line in `MUTANT_MODULES`: the tests' tables (what it writes, what it
removes, the seed scenarios that catch it) are read from the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from invariants import records
from invariants.mutants.base import Mutant
from invariants.user_errors import UserError

# One line per mutant module, in id order; each module defines `MUTANT`, its record.
MUTANT_MODULES: tuple[str, ...] = (
    "invariants.mutants.catalogue.m1_payload_type_guard",
    "invariants.mutants.catalogue.m2_resend_timeouts",
    "invariants.mutants.catalogue.m3_unbounded_resubscribe",
    "invariants.mutants.catalogue.m4_per_key_only_breaker",
    "invariants.mutants.catalogue.m5_key_without_identity",
    "invariants.mutants.catalogue.m6_no_stop_hold",
    "invariants.mutants.catalogue.m7_detached_nack",
    "invariants.mutants.catalogue.m8_failure_answers_failure",
    "invariants.mutants.catalogue.m9_answers_rejections",
    "invariants.mutants.catalogue.m10_sheds_user_messages",
    "invariants.mutants.catalogue.m11_no_delivery_retry",
    "invariants.mutants.catalogue.m12_holds_non_graceful",
    "invariants.mutants.catalogue.m13_suppress_packaged",
    "invariants.mutants.catalogue.m14_timeout_flag_denied",
    "invariants.mutants.catalogue.m15_uncapped_retry_delay",
    "invariants.mutants.catalogue.m16_retry_budget_off_by_one",
    "invariants.mutants.catalogue.m17_budget_in_seconds",
    "invariants.mutants.catalogue.m18_identity_traced_as_key",
    "invariants.mutants.catalogue.m19_refusal_unanswered",
    "invariants.mutants.catalogue.m20_subscribe_retries_off_by_one",
    "invariants.mutants.catalogue.m21_watermark_off_by_one",
    "invariants.mutants.catalogue.m22_properties_off_the_wire",
    "invariants.mutants.catalogue.m23_aggregate_first_member",
    "invariants.mutants.catalogue.m24_flat_subscribe_backoff",
    "invariants.mutants.catalogue.m25_breaker_window_never_slides",
    "invariants.mutants.catalogue.m26_cooldown_in_seconds",
    "invariants.mutants.catalogue.m27_pump_stops_early",
    "invariants.mutants.catalogue.m28_first_release_wins",
    "invariants.mutants.catalogue.m29_answer_ignored",
    "invariants.mutants.catalogue.m30_fault_never_spent",
    "invariants.mutants.catalogue.m31_answer_to_target",
    "invariants.mutants.catalogue.m32_answer_without_identity",
    "invariants.mutants.catalogue.m33_handled_at_ancestor",
    "invariants.mutants.catalogue.m34_gate_left_open",
    "invariants.mutants.catalogue.m35_early_give_up_ignored",
    "invariants.mutants.catalogue.m36_nack_lost_on_landing",
    "invariants.mutants.catalogue.m37_backoff_outlives_stop",
    "invariants.mutants.catalogue.m38_refusal_not_found",
    "invariants.mutants.catalogue.m39_key_without_sender",
    "invariants.mutants.catalogue.m40_fresh_key_counted_once",
    "invariants.mutants.catalogue.m41_pump_stops_on_fault",
    "invariants.mutants.catalogue.m42_fault_drops_next",
    "invariants.mutants.catalogue.m43_full_breaker_refuses_fresh_keys",
    "invariants.mutants.catalogue.m44_window_opened_after_counting",
    "invariants.mutants.catalogue.m45_answer_ids_ordered",
    "invariants.mutants.catalogue.m46_refusal_named_shutting_down",
    "invariants.mutants.catalogue.m47_timeout_read_at_the_root",
    "invariants.mutants.catalogue.m48_window_closes_late",
    "invariants.mutants.catalogue.m49_late_answer_taken",
    "invariants.mutants.catalogue.m50_call_to_missing_received",
    "invariants.mutants.catalogue.m51_sender_hub_not_made",
    "invariants.mutants.catalogue.m52_pump_takes_newest",
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
