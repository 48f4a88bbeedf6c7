"""M36 nack-lost-on-landing: a NACK's leg ends without delivering its answer.

Pre-fix shape (seed 001, tier 2: a leg past its subscribe "completes silently — no NACK"):
`NackOperation._land` ends the leg without offering the DeliveryFailure at its sender's hub
(nor reporting it where the sender has gone), so the gauge falls and a graceful stop's hold
is released as if the answer had landed. The negative control of INV5's "NACK legs ended
during the hold landed".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M36",
    slug="nack-lost-on-landing",
    shape="a NACK's leg ends without delivering its answer",
    path="answers.py",
    site="NackOperation._land",
    before="if hub is not None:",
    after="",
    kills=("INV5",),
    seeds=("stop-nack-in-flight",),
)
