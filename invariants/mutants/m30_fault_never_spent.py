"""M30 fault-never-spent: an armed call fault is never used up.

Pre-fix shape (the decrement lost): `counters[target] = left` in place of
`counters[target] = left - 1` in the fault book's `_take`, so one rejection (or timeout)
armed at a target fails every later call to it: the mesh refuses calls nobody asked it
to. Obligation (INV4): a call fails only as the harness made it (the other side of
"reject_next faults honoured").
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_SPENT = m.BinaryOperation(left=m.Name("left"), operator=m.Subtract(), right=m.Integer("1"))


class FaultNeverSpent(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("_take")))
    @m.leave(_SPENT)
    def keep_it(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        self.hit()
        return updated_node.left


MUTANT = Mutant(
    id="M30",
    slug="fault-never-spent",
    shape="an armed call fault fails every later call to its target",
    path="faults.py",
    site="_take",
    target="counters[target] = left - 1",
    kills=("INV4",),
    writes="counters[target] = left",
    removes="counters[target] = left - 1",
    seeds=("one-rejection",),
    codemod=FaultNeverSpent,
)
