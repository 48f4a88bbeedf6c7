"""M50 call-to-missing-received: a grain call to a missing target is received anyway.

Pre-fix shape (an activation made for any name the directory is asked about): `and` in
place of `or` in `GrainDeliveryOperation.deliver`'s test for a missing target, so a call
to a hub that does not exist is received (`CALL_RECEIVED` at it) and held, spending the
faults armed there, and fails NotFound only when the callee finds no hub to run it at: the
same answer, a hop later than a refusal would take. Obligation (INV7): "deliveries handled
where posted" (a delivery arrives only at a hub that exists), caught by the
`departed-owner` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M50",
    slug="call-to-missing-received",
    shape="a grain call to a missing target is received and held: it arrives at a hub "
    "that does not exist",
    path="grain.py",
    site="GrainDeliveryOperation.deliver",
    before="if target not in mesh.hubs or mesh.activations.deactivated:",
    after="if target not in mesh.hubs and mesh.activations.deactivated:",
    kills=("INV7",),
    seeds=("departed-owner",),
)
