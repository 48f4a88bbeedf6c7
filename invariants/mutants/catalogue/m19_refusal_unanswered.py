"""M19 refusal-unanswered: a dispatch refused during the stop is dropped without an answer.

Pre-fix shape (the stop's refusal written as a plain drop): the
`if not mesh.silo.stopped: self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, ...)`
statement is gone from `Router.dispatch`, so an ordinary post the router refuses once the
stop has begun is logged DISPATCH_REFUSED and never answered ShuttingDown; its sender
waits for an answer that never comes. Obligation (INV7): "ordinary failed deliveries
answered once".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M19",
    slug="refusal-unanswered",
    shape="a dispatch refused during the stop is never answered",
    path="routing.py",
    site="Router.dispatch",
    before="if not mesh.silo.stopped:",
    after="",
    kills=("INV7",),
    seeds=("answer-once",),
)
