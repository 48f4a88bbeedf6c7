"""M27 pump-stops-early: a hub's turn re-arms its pump only while two messages wait.

Pre-fix shape (an off-by-one in the action block's loop): `if len(queue) > 1:` in place
of `if queue:` at the end of `Hub._turn`, so the last message of a backlog stays queued
until the next intake wakes the pump, and is never handled when none comes: a delivery
lost without a trace of why. Obligation (INV7): "posted deliveries accounted for".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M27",
    slug="pump-stops-early",
    shape="a hub's pump stops with one message still queued",
    path="hub.py",
    site="Hub._turn",
    before="if queue:",
    after="if len(queue) > 1:",
    kills=("INV7",),
    seeds=("backlog",),
)
