"""M29 answer-ignored: a subscription drops every answer while it is active.

Pre-fix shape (the state test inverted, `is` for `is not`): `if self.state is
SubscriptionState.ACTIVE or request_id != self.pending_request:` in
`BoundedSubscription.on_answer`, so the answer a live target sends is thrown away and the
subscription times out and resubscribes until its retries are spent, as if the target
did not exist. Obligation (INV2): "subscriptions to a live target answered".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M29",
    slug="answer-ignored",
    shape="a subscription throws away the answer of a live target",
    path="subscribe.py",
    site="BoundedSubscription.on_answer",
    before="self.state is not SubscriptionState.ACTIVE",
    after="self.state is SubscriptionState.ACTIVE",
    kills=("INV2",),
    seeds=("live-target",),
)
