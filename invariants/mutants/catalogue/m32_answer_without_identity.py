"""M32 answer-without-identity: a NACK carries no identity, and its sender's guard drops it.

Pre-fix shape (the answer's access context left out): `identity=None` for
`identity=NACK_IDENTITY` in `AnswerLedger.send`, so the DeliveryFailure reaches the
sender's hub and the identity guard rejects it there like any anonymous post; the sender
never learns its delivery failed. Obligation (INV7): "answers accepted by their sender".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M32",
    slug="answer-without-identity",
    shape="a NACK carries no identity: the sender's guard rejects it",
    path="answers.py",
    site="AnswerLedger.send",
    before="identity=NACK_IDENTITY",
    after="identity=None",
    kills=("INV7",),
    seeds=("answer-lands",),
)
