"""M13 suppress-packaged: the routers' answer guard also suppresses packaged deliveries.

Pre-fix shape (an over-correction of #1485, where packaged heartbeats were answered):
`if not delivery.may_answer() or delivery.packaged:` in `Router.answer_failure`. Routers
only ever see packaged deliveries, so no routing failure is answered at all, not even an
ordinary delivery's.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M13",
    slug="suppress-packaged",
    shape="router guards suppress every packaged delivery",
    path="routing.py",
    site="Router.answer_failure",
    before="if not delivery.may_answer():",
    after="if not delivery.may_answer() or delivery.packaged:",
    kills=("INV7",),
    seeds=("departed-owner",),
)
