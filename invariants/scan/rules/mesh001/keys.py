"""MESH001's `[tool.harness]` keys."""

from __future__ import annotations

from invariants.scan.options import Count, Names, Option

# Calls that build a failure answer (matched on the last dotted component).
EMIT_CONSTRUCTORS = Names("emit_constructors", ("DeliveryFailure",))
# Checks that a delivery may be answered.
GUARD_FUNCTIONS = Names("guard_functions", ("may_answer",))
# The number of emit sites the tree must have (a canary for the emit matcher).
EXPECTED_EMIT_SITES = Count("expected_emit_sites", None)
OPTIONS: tuple[Option, ...] = (EMIT_CONSTRUCTORS, GUARD_FUNCTIONS, EXPECTED_EMIT_SITES)
