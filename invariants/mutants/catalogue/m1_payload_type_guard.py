"""M1 payload-type-guard: the router's failure guard tests the payload's type.

Pre-fix shape (#1485): `if isinstance(delivery.message, DeliveryFailure):` in place of
`if not delivery.may_answer():`. Routers only ever see packaged deliveries, whose payload
is RawJson, so the type test never matches and heartbeats and failures are answered.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M1",
    slug="payload-type-guard",
    shape="router guards test the payload type instead of may_answer()",
    path="routing.py",
    site="Router.answer_failure",
    before="if not delivery.may_answer():",
    after="if isinstance(delivery.message, DeliveryFailure):",
    kills=("MESH001", "MESH002", "INV7"),
    seeds=("answer-once", "departed-owner"),
)
