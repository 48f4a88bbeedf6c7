"""M47 timeout-read-at-the-root: an answer's error is classified by the root exception only.

Pre-fix shape (seed 000's: the fault read off the first link, not the whole graph):
`isinstance(exc, TimeoutError)` in place of `is_timeout(exc)` in `classify`, so a call that
failed with an aggregate of a response timeout and a refusal (two transports) is answered
Unavailable, a transient error, though it timed out and is never sent again: its sender is
armed to try again against a target that may be wedged. The retry ladder still walks the
graph, so nothing is re-sent. Obligation (INV4): "timed-out deliveries answered as
terminal", caught by the `aggregate` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod


class TimeoutReadAtTheRoot(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("classify")))
    @m.leave(m.Call(func=m.Name("is_timeout"), args=[m.Arg(m.Name("exc"))]))
    def root_only(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        self.hit()
        return updated_node.with_changes(
            func=cst.Name("isinstance"),
            args=[updated_node.args[0].with_changes(comma=cst.Comma(
                whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(cst.Name("TimeoutError"))],
        )


MUTANT = Mutant(
    id="M47",
    slug="timeout-read-at-the-root",
    shape="an answer's error is classified by the root exception only: an aggregate that "
    "timed out is answered Unavailable, a transient error",
    path="ladder.py",
    site="classify",
    target="if is_timeout(exc):",
    kills=("INV4",),
    writes="if isinstance(exc, TimeoutError):",
    removes="if is_timeout(exc):",
    seeds=("aggregate",),
    codemod=TimeoutReadAtTheRoot,
)
