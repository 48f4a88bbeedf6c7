"""M28 first-release-wins: a hub's overlapping holds end when the first of them does.

Pre-fix shape (a release timer that does not ask whether a later hold extended the
block): `if not self.blocked:` in place of `if not self.blocked or
self.mesh.scheduler.now < self._blocked_until:` in `Hub._release_if_due`, so the turn
is released at the end of the first hold while a longer one is still in force.
Obligation (INV3): "blocked turns held" (nothing is handled until the latest hold ends).
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M28",
    slug="first-release-wins",
    shape="overlapping holds end when the first one does",
    path="hub.py",
    site="Hub._release_if_due",
    before="if not self.blocked or self.mesh.scheduler.now < self._blocked_until:",
    after="if not self.blocked:",
    kills=("INV3",),
    seeds=("overlapping-holds",),
)
