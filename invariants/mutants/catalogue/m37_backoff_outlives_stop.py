"""M37 backoff-outlives-stop: the stop ends only a subscription with a request in flight.

Pre-fix shape (the stop reads "open" as "waiting for an answer"): `if self.state is not
SubscriptionState.ACTIVE or self.pending_request is None: return` in
`BoundedSubscription.terminate`, so a subscription waiting out a resubscribe backoff when
the silo stops (its latest attempt failed, no request pending) is skipped by the stop: its
retry timer fires after the stop completed and it resubscribes on a stopped silo, spending
its retries on refused dispatches. Obligation (INV2): "subscriptions in backoff ended with
the silo".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M37",
    slug="backoff-outlives-stop",
    shape="a subscription waiting out its backoff survives the stop and resubscribes",
    path="subscribe.py",
    site="BoundedSubscription.terminate",
    before="if self.state is not SubscriptionState.ACTIVE:",
    after="if self.state is not SubscriptionState.ACTIVE or self.pending_request is None:",
    kills=("INV2",),
    seeds=("stop-in-backoff",),
)
