"""M8 failure-answers-failure: `report_failure` answers whatever it is handed.

Pre-fix shape (the DeliveryFailure/ShutdownRequest ping-pong): the `if not
delivery.may_answer(): ... return` gate is gone from `report_failure` (the reporting
tail), so a DeliveryFailure that cannot be delivered is answered by another one.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M8",
    slug="failure-answers-failure",
    shape="report_failure answers a DeliveryFailure",
    path="hub.py",
    site="report_failure",
    before="if not delivery.may_answer():",
    after="",
    kills=("MESH001", "INV1"),
    seeds=("failure-ping-pong",),
)
