"""M33 handled-at-ancestor: a delivery to a missing hub is handed to its nearest live parent.

Pre-fix shape (hierarchical routing that falls back instead of failing):
`hub = mesh.hubs.get(delivery.target) or mesh.hubs.get(mesh.nearest_live_ancestor(...))`
in `MonolithRouteOperation._arrive`, so a post to `h0/gone` is handled at `h0`, which
never was its target, and its sender is never told NotFound. Obligation (INV7):
"deliveries handled where posted".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M33",
    slug="handled-at-ancestor",
    shape="a delivery to a missing hub is handled by its nearest live parent",
    path="routing.py",
    site="MonolithRouteOperation._arrive",
    before="hub = mesh.hubs.get(delivery.target)",
    after="hub = mesh.hubs.get(delivery.target) or "
    "mesh.hubs.get(mesh.nearest_live_ancestor(delivery.target))",
    kills=("INV7",),
    seeds=("answer-lands",),
)
