"""M52 pump-takes-newest: a hub's pump takes the newest queued message first.

Pre-fix shape (a stack where a queue was meant): `queue.pop()` in place of
`queue.popleft()` in `Hub._turn`, so a sender's direct posts to one hub, queued in the
order posted, are handled newest first: everything still runs and is answered, only out
of order. Obligation (INV7): "posts handled in their sender's order", caught by the
`backlog` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M52",
    slug="pump-takes-newest",
    shape="a hub's pump takes the newest queued message first: one sender's direct posts "
    "are handled out of the order posted",
    path="hub.py",
    site="Hub._turn",
    before="delivery = queue.popleft()",
    after="delivery = queue.pop()",
    kills=("INV7",),
    seeds=("backlog",),
)
