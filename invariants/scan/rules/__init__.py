"""Every rule, in id order. Each module carries its VALID and INVALID examples."""

from __future__ import annotations

from invariants.scan.rules import (
    mesh000_parse_error,
    mesh001_unguarded_emit,
    mesh002_payload_type_exemption,
    mesh003_resend_after_timeout,
    mesh004_detached_subscription,
    mesh005_module_mutable_state,
    mesh006_fixed_sleep_in_test,
)
from invariants.scan.rules.spec import Rule

ALL_RULES: tuple[Rule, ...] = (
    mesh000_parse_error.RULE,
    mesh001_unguarded_emit.RULE,
    mesh002_payload_type_exemption.RULE,
    mesh003_resend_after_timeout.RULE,
    mesh004_detached_subscription.RULE,
    mesh005_module_mutable_state.RULE,
    mesh006_fixed_sleep_in_test.RULE,
)
