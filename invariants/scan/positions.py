"""Source positions for just the nodes a rule reports.

libcst's PositionProvider records a range for every node of the module (and
MetadataWrapper deep-copies the tree first); that costs several times the parse. Here a
code generation pass records token offsets only for the wanted nodes, and line/column
are derived in one sweep over the tokens. Files that report nothing pay nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState


@dataclass(frozen=True, slots=True)
class Span:
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int


class _MarkingState(CodegenState):
    """Code generation that notes the token index where wanted nodes start and end."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.wanted = wanted
        # Nodes whose range a wanted node borrows (libcst's start_node/end_node hoisting).
        self.borrowed: set[int] = set()
        self.marks: dict[int, tuple[int, int]] = {}
        self.open = len(wanted)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> AbstractContextManager[None]:
        key = id(node)
        if key not in self.wanted and key not in self.borrowed:
            return _NOTHING  # most nodes: no generator object, no bookkeeping
        for hoisted in (start_node, end_node):
            if hoisted is not None:
                self.borrowed.add(id(hoisted))
        return _Mark(self, key, start_node, end_node)

    def close_mark(
        self, key: int, start: int, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        end = len(self.tokens)
        if start_node is not None and id(start_node) in self.marks:
            start = self.marks[id(start_node)][0]
        if end_node is not None and id(end_node) in self.marks:
            end = self.marks[id(end_node)][1]
        first = key not in self.marks
        self.marks[key] = (start, end)
        if first and key in self.wanted:
            self.open -= 1
            if self.open == 0:
                raise _AllMarked  # the rest of the file cannot move these positions


_NOTHING = nullcontext()
_LINE_BREAK = re.compile(r"\r\n?|\n")


class _Mark:
    """The context a wanted node's code is generated in: token index in, token index out."""

    __slots__ = ("end_node", "key", "start", "start_node", "state")

    def __init__(
        self,
        state: _MarkingState,
        key: int,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.key = state, key
        self.start_node, self.end_node = start_node, end_node
        self.start = len(state.tokens)

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is None:
            self.state.close_mark(self.key, self.start, self.start_node, self.end_node)


class _AllMarked(Exception):
    pass


def locate(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Spans keyed by `id(node)`; a node the generator never marks is left out."""
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    state = _MarkingState(module, wanted)
    with suppress(_AllMarked):
        module._codegen(state)
    # One sweep: token index -> (line, column) for every boundary we need.
    boundaries = sorted({index for pair in state.marks.values() for index in pair})
    where: dict[int, tuple[int, int]] = {}
    line, column, cursor = 1, 1, 0
    tokens = state.tokens
    for boundary in boundaries:
        while cursor < boundary:
            token = tokens[cursor]
            newlines = token.count("\n")
            last = token.rfind("\n")
            if "\r" in token:  # a lone CR ends a line too, as CPython counts lines
                newlines = len(_LINE_BREAK.findall(token))
                last = max(last, token.rfind("\r"))
            if newlines:
                line += newlines
                column = len(token) - last
            else:
                column += len(token)
            cursor += 1
        where[boundary] = (line, column)
    spans: dict[int, Span] = {}
    for key, (start, end) in state.marks.items():
        if key not in wanted:
            continue
        (line, column), (end_line, end_column) = where[start], where[end]
        spans[key] = Span(line, column, end_line, end_column)
    return spans
