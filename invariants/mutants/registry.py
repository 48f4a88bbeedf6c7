"""Every pre-fix mutant, in order, and lookup by id or slug."""

from __future__ import annotations

from collections.abc import Sequence

from invariants.mutants import (
    m1_payload_type_guard,
    m2_resend_timeouts,
    m3_unbounded_resubscribe,
    m4_per_key_only_breaker,
    m5_key_without_identity,
    m6_no_stop_hold,
    m7_detached_nack,
    m8_failure_answers_failure,
    m9_answers_rejections,
    m10_sheds_user_messages,
    m11_no_delivery_retry,
    m12_holds_non_graceful,
    m13_suppress_packaged,
    m14_timeout_flag_denied,
    m15_uncapped_retry_delay,
    m16_retry_budget_off_by_one,
    m17_budget_in_seconds,
    m18_identity_traced_as_key,
    m19_refusal_unanswered,
    m20_subscribe_retries_off_by_one,
    m21_watermark_off_by_one,
    m22_properties_off_the_wire,
    m23_aggregate_first_member,
    m24_flat_subscribe_backoff,
    m25_breaker_window_never_slides,
    m26_cooldown_in_seconds,
    m27_pump_stops_early,
    m28_first_release_wins,
    m29_answer_ignored,
    m30_fault_never_spent,
    m31_answer_to_target,
    m32_answer_without_identity,
    m33_handled_at_ancestor,
)
from invariants.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    m1_payload_type_guard.MUTANT,
    m2_resend_timeouts.MUTANT,
    m3_unbounded_resubscribe.MUTANT,
    m4_per_key_only_breaker.MUTANT,
    m5_key_without_identity.MUTANT,
    m6_no_stop_hold.MUTANT,
    m7_detached_nack.MUTANT,
    m8_failure_answers_failure.MUTANT,
    m9_answers_rejections.MUTANT,
    m10_sheds_user_messages.MUTANT,
    m11_no_delivery_retry.MUTANT,
    m12_holds_non_graceful.MUTANT,
    m13_suppress_packaged.MUTANT,
    m14_timeout_flag_denied.MUTANT,
    m15_uncapped_retry_delay.MUTANT,
    m16_retry_budget_off_by_one.MUTANT,
    m17_budget_in_seconds.MUTANT,
    m18_identity_traced_as_key.MUTANT,
    m19_refusal_unanswered.MUTANT,
    m20_subscribe_retries_off_by_one.MUTANT,
    m21_watermark_off_by_one.MUTANT,
    m22_properties_off_the_wire.MUTANT,
    m23_aggregate_first_member.MUTANT,
    m24_flat_subscribe_backoff.MUTANT,
    m25_breaker_window_never_slides.MUTANT,
    m26_cooldown_in_seconds.MUTANT,
    m27_pump_stops_early.MUTANT,
    m28_first_release_wins.MUTANT,
    m29_answer_ignored.MUTANT,
    m30_fault_never_spent.MUTANT,
    m31_answer_to_target.MUTANT,
    m32_answer_without_identity.MUTANT,
    m33_handled_at_ancestor.MUTANT,
)


def find_mutant(name: str) -> Mutant:
    """By id ("M2", "m2"), slug ("resend-timeouts") or both ("M2 resend-timeouts")."""
    wanted = name.strip().lower()
    for mutant in MUTANTS:
        if wanted in (mutant.id.lower(), mutant.slug, mutant.name.lower()):
            return mutant
    known = ", ".join(mutant.name for mutant in MUTANTS)
    raise ValueError(f"unknown mutant {name!r} (known: {known})")


def select_mutants(names: Sequence[str] | None) -> tuple[Mutant, ...]:
    if not names:
        return MUTANTS
    chosen = {find_mutant(name).id for name in names}
    return tuple(mutant for mutant in MUTANTS if mutant.id in chosen)


def id_range() -> str:
    """The registered ids as a range for help texts ("M1..M33")."""
    return f"{MUTANTS[0].id}..{MUTANTS[-1].id}"
