"""M18 identity-traced-as-key: an enqueued delivery's POSTED reports the sender's identity
as its payload identity.

Pre-fix shape (a self-report lie, seed 004 / #1200): the ENQUEUED record of `Hub.offer`
carries `delivery.identity` (who posted it) in place of `delivery.diagnostic_key` (what it
is about). The breaker still counts the true key, so nothing is dropped; the trace says a
fan-out of many identities is one key. Obligation (INV6): the payload identity of a post is
the one the harness gave it, and a POSTED that reports another is a violation naming both.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M18",
    slug="identity-traced-as-key",
    shape="an enqueued post is traced with its sender identity as payload identity",
    path="hub.py",
    site="Hub.offer",
    before="delivery.diagnostic_key",
    after="delivery.identity",
    kills=("INV6",),
    seeds=("fanout",),
)
