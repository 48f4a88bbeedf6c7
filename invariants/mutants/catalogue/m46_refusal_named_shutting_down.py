"""M46 refusal-named-shutting-down: a refused call is answered as if its host were stopping.

Pre-fix shape (the stop's refusal tested by its base class): `graph_contains(exc,
(RejectionError,))` in place of `(ShuttingDownError,)` in `classify`, so every call refused
until its retries are spent (an invalid activation, say) is answered ShuttingDown: its
sender is told to keep recovering from a host that is not stopping, though no stop was
asked. Obligation (INV7): "ShuttingDown only once a stop was asked", caught by the
`refused-call-answered` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M46",
    slug="refusal-named-shutting-down",
    shape="a call refused until its retries are spent is answered ShuttingDown, though no "
    "stop was asked",
    path="ladder.py",
    site="classify",
    before="if graph_contains(exc, (ShuttingDownError,)):",
    after="if graph_contains(exc, (RejectionError,)):",
    kills=("INV7",),
    seeds=("refused-call-answered",),
    drawn_blind="a refused call is answered only once all 7 of its calls are refused: the "
    "drawn rules must arm 7 or 8 refusals of one hub and send it a grain call with no stop "
    "for the 9.75 s its retries take, which INV7's ci search (60 examples) does not reach",
)
