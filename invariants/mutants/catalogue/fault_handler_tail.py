"""The codemod M41 and M42 share: one statement added at the end of the `except` in
`Hub._turn` that logs a raising handler, once (a second application finds it there)."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod


class FaultHandlerTail(MutationCodemod):
    TAIL: ClassVar[cst.BaseStatement]  # what the handler does last

    @m.call_if_inside(m.FunctionDef(name=m.Name("_turn")))
    @m.leave(m.ExceptHandler(type=m.Name("Exception")))
    def append(
        self, original_node: cst.ExceptHandler, updated_node: cst.ExceptHandler
    ) -> cst.ExceptHandler:
        body = updated_node.body
        assert isinstance(body, cst.IndentedBlock)  # the handler spans lines
        if body.body[-1].deep_equals(self.TAIL):
            return updated_node  # applied already
        self.hit()
        return updated_node.with_changes(body=body.with_changes(body=[*body.body, self.TAIL]))
