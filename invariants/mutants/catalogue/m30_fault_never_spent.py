"""M30 fault-never-spent: an armed call fault is never used up.

Pre-fix shape (the decrement lost): `counters[target] = left` in place of
`counters[target] = left - 1` in the fault book's `_take`, so one rejection (or timeout)
armed at a target fails every later call to it: the mesh refuses calls nobody asked it
to. Obligation (INV4): a call fails only as the harness made it (the other side of
"reject_next faults honoured").
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M30",
    slug="fault-never-spent",
    shape="an armed call fault fails every later call to its target",
    path="faults.py",
    site="_take",
    before="counters[target] = left - 1",
    after="counters[target] = left",
    kills=("INV4",),
    seeds=("one-rejection",),
)
