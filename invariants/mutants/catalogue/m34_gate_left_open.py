"""M34 gate-left-open: the RuntimeServices stage leaves every hub's teardown gate open.

Pre-fix shape (seed 001's stage table without `messageCenter.BlockApplicationMessages()`):
`_block_application_messages` calls `done()` without closing the hubs' gates, so once the
stop has run, an application message posted straight to a hub's intake is still queued
and handled. The negative control of INV5's "application messages offered at a closed
teardown gate refused".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M34",
    slug="gate-left-open",
    shape="the stop never closes the hubs' teardown gates",
    path="lifecycle.py",
    site="Silo._block_application_messages",
    before="for address in sorted(self.mesh.hubs):",
    after="",
    kills=("INV5",),
    seeds=("gate-closed",),
)
