"""M49 late-answer-taken: a subscription takes an answer to any request it ever sent.

Pre-fix shape (the answer matched to its subscription, not to its request): the request-id
test dropped from `BoundedSubscription.on_answer`, so an answer that lands after its
attempt timed out, while the subscription waits out its backoff, is taken: the
subscription reports itself answered by a request it had given up on. Nothing raises and
nothing is sent again. Obligation (INV2): "answers after an attempt timed out not taken",
caught by the `answer-in-backoff` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M49",
    slug="late-answer-taken",
    shape="a subscription takes an answer to any request it sent: one landing after its "
    "attempt timed out is taken in the backoff",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    before="if self.state is not SubscriptionState.ACTIVE or request_id != self.pending_request:",
    after="if self.state is not SubscriptionState.ACTIVE:",
    kills=("INV2",),
    seeds=("answer-in-backoff",),
    drawn_blind="INV2's search holds only the hubs h0-h2 (`block`), never a subscriber's: "
    "an answer lands after its attempt timed out only behind a hold of its subscriber's "
    "turn longer than the 30 s timeout",
)
