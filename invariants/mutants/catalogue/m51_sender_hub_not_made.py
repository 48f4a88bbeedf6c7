"""M51 sender-hub-not-made: a post does not make its sender's hub.

Pre-fix shape (the sender taken for an address that already exists): `sender in
mesh.hubs` in place of `sender not in mesh.hubs` where `ReferenceAdapter.post` makes a
poster's own hub on first use, so a sender the harness never made has no hub: the answer
to its post is emitted and dropped where it should land, and no event says so.
Obligation (INV7): "answers landed at their sender" (its sender is live once it posted),
caught by the `departed-owner` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M51",
    slug="sender-hub-not-made",
    shape="a post does not make its sender's hub: the answer to a sender the harness never "
    "made is dropped where it should land",
    path="adapter.py",
    site="ReferenceAdapter.post",
    before="if sender not in mesh.hubs:",
    after="if sender in mesh.hubs:",
    kills=("INV7",),
    seeds=("departed-owner",),
)
