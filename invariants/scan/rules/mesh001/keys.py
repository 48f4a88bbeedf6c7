"""MESH001's `[tool.harness]` keys."""

from __future__ import annotations

from invariants.scan.options import Count, Names, Option

EMIT_CONSTRUCTORS = Names(
    "emit_constructors", ("DeliveryFailure",),
    "calls that build a failure answer (matched on the last dotted component)",
)
GUARD_FUNCTIONS = Names(
    "guard_functions", ("may_answer",), "checks that a delivery may be answered",
)
EXPECTED_EMIT_SITES = Count(
    "expected_emit_sites", None,
    "the number of emit sites the tree must have (a canary for the emit matcher)",
)
OPTIONS: tuple[Option, ...] = (EMIT_CONSTRUCTORS, GUARD_FUNCTIONS, EXPECTED_EMIT_SITES)
