"""M23 aggregate-first-member: the exception walk follows only an aggregate's first member.

Pre-fix shape (the "InnerException line" walk seed 000 replaced with a graph walk):
`queue.extend(exc.exceptions[:1])` in place of `queue.extend(exc.exceptions)` in
`walk_exception_graph`. A timeout first in an aggregate is still seen; a timeout behind a
rejection is not, so that delivery, which the callee still holds, is re-sent. Obligation
(INV4): "aggregates (rejection first) sent once"; only the harness's AGGREGATE_NEXT fault
with the rejection first can show it.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_MEMBERS = m.Attribute(value=m.Name("exc"), attr=m.Name("exceptions"))


class AggregateFirstMember(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("walk_exception_graph")))
    @m.leave(m.Arg(value=_MEMBERS))
    def first_only(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        self.hit()
        return updated_node.with_changes(value=cst.parse_expression("exc.exceptions[:1]"))


MUTANT = Mutant(
    id="M23",
    slug="aggregate-first-member",
    shape="the exception walk reads only an aggregate's first member",
    path="errors.py",
    site="walk_exception_graph",
    target="queue.extend(exc.exceptions)",
    kills=("INV4",),
    writes="queue.extend(exc.exceptions[:1])",
    removes="queue.extend(exc.exceptions)",
    seeds=("aggregate",),
    codemod=AggregateFirstMember,
)
