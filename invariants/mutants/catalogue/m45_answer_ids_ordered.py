"""M45 answer-ids-ordered: a subscription matches an answer to its request by ordering ids.

Pre-fix shape (request ids taken to rise with time): `request_id < self.pending_request`
in place of `!=` in `BoundedSubscription.on_answer`. An answer that lands in the backoff,
when no request is pending, compares a string with None and raises TypeError in the
subscriber's handler, which the pump logs and passes over; an earlier request's late answer
is taken for the pending one's whenever its id sorts after it. Obligation (INV7): "handlers
raised only where the harness asked", caught by the `answer-in-backoff` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M45",
    slug="answer-ids-ordered",
    shape="a subscription matches an answer to its pending request by ordering their ids: "
    "an answer landing in the backoff raises in the subscriber's handler",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    before="request_id != self.pending_request",
    after="request_id < self.pending_request",
    kills=("INV7",),
    seeds=("answer-in-backoff",),
    drawn_blind="INV7's search draws no subscription and no hold (its seed programs take "
    "them): an answer lands in the backoff only behind a hold of its subscriber that ends "
    "inside it, some 30 s after the subscription starts",
)
