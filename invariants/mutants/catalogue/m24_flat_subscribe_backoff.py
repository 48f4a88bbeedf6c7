"""M24 flat-subscribe-backoff: every resubscribe waits the first backoff, never doubled.

Pre-fix shape (a backoff that forgets to grow): `delay = self.first_delay_ms` in place of
`delay = self.first_delay_ms * (1 << self.attempt)` in
`BoundedSubscription._retry_or_terminate`, so retries come 250 ms after each failure
instead of 250, 500, 1000, 2000 and 4000 ms: a subscription to a missing target still
terminates after N+1 attempts, within its bound, it only hammers the target faster.
Obligation (INV2): "resubscribe delays timed".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M24",
    slug="flat-subscribe-backoff",
    shape="every resubscribe waits the first backoff, not 250 ms doubling",
    path="subscribe.py",
    site="BoundedSubscription._retry_or_terminate",
    before="delay = self.first_delay_ms * (1 << self.attempt)",
    after="delay = self.first_delay_ms",
    kills=("INV2",),
    seeds=("missing-target",),
)
