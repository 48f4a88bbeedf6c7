"""M5 key-without-identity: the breaker key drops the payload identity.

Pre-fix shape (#1200): `breaker_key` returns (sender, target, message type) even when the
payload has an identity, so a wide legitimate fan-out counts as one key and is dropped.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M5",
    slug="key-without-identity",
    shape="breaker key drops the payload identity",
    path="breaker.py",
    site="breaker_key",
    before="return (delivery.sender, delivery.target, delivery.message_type, identity)",
    after="return (delivery.sender, delivery.target, delivery.message_type)",
    kills=("INV6",),
    seeds=("fanout",),
)
