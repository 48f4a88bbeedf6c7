"""A `Patch`: the mutant that replaces one line or expression of its site with another.

The record says what the reference has (`before`) and what the pre-fix shape has
(`after`), as written; no codemod class of its own. Applying it walks the site (the named
function) with libcst and replaces the one node whose code is `before`:

- an expression (`attempt < self.router.retries`), by the expression `after`;
- a keyword argument (`timed_out=is_timeout(exc)`), by the argument `after`;
- a simple statement (`delivery = queue.popleft()`), by the statement `after`, its
  comment kept;
- the line that opens an `if`, `elif`, `while` or `for` (`if queue:`), by a line that
  opens the same statement, its block kept.

An empty `after` removes the statement (an `if`, `while` or `for` with its block and its
`else`). The outermost node whose code is `before` is the one replaced. `before` found
anything but once in the site (a stale `before`) is `MutantNotApplicable`, one line naming
the mutant, as for every mutant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, TypeAlias, TypeVar, cast

import libcst as cst
from libcst.codemod import CodemodContext

from invariants.mutants.base import Mutant, MutantNotApplicable, MutationCodemod

_Node = TypeVar("_Node", bound=cst.CSTNode)
_Opener: TypeAlias = cst.If | cst.While | cst.For
_RENDER = cst.Module(body=[])
_SUITE = cst.SimpleStatementSuite(body=[cst.Pass()])
_SUITE_CODE = " pass\n"  # what `_SUITE` renders as, after the opening line


@dataclass(frozen=True, kw_only=True)
class Patch(Mutant):
    """One line or expression of the site replaced: `before` by `after` ("" removes a
    statement). The target, what it writes and what it removes follow from the two."""

    before: str
    after: str
    target: str = field(init=False, default="")
    writes: str = field(init=False, default="")
    removes: str = field(init=False, default="")
    expected_hits: int = field(init=False, default=1)

    MEND: ClassVar[str] = "its `before`"

    def __post_init__(self) -> None:
        for key, text in (("before", self.before), ("after", self.after)):
            if "\n" in text or text != text.strip() or (key == "before" and not text):
                raise ValueError(f"mutant {self.name}: {key} must be one line of code "
                                 f"without surrounding space, got {text!r}")
        # An insertion (`after` holds `before`) removes nothing a test could look for.
        removes = self.before if self.before not in self.after else ""
        for key, value in (("target", self.before), ("writes", self.after),
                           ("removes", removes)):
            object.__setattr__(self, key, value)

    def codemod_for(self, filename: str) -> MutationCodemod:
        return PatchCodemod(CodemodContext(filename=filename), self)


class PatchCodemod(MutationCodemod):
    """Replaces the nodes whose code is the patch's `before`, counting them."""

    def __init__(self, context: CodemodContext, patch: Patch) -> None:
        super().__init__(context)
        self.patch = patch
        self._found: set[int] = set()  # id() of each original node whose code is `before`
        self._elifs: set[int] = set()  # id() of each `if` that is an `elif`

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not super().on_visit(node):
            return False
        if not self.in_site():
            return True
        if isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        if _line(node, id(node) in self._elifs) != self.patch.before:
            return True
        self.hit()
        self._found.add(id(node))
        # The block below an opening line is not part of it: it may hold `before` again.
        return isinstance(node, _Opener)

    def on_leave(
        self, original_node: _Node, updated_node: _Node
    ) -> _Node | cst.RemovalSentinel:
        left = super().on_leave(original_node, updated_node)
        if id(original_node) not in self._found or not isinstance(left, cst.CSTNode):
            return left
        replaced = self._replaced(left, id(original_node) in self._elifs)
        if isinstance(replaced, cst.RemovalSentinel):
            return replaced
        # libcst takes any node its parent's slot takes, not only one of the same class.
        return cast(_Node, replaced)

    def _replaced(self, node: cst.CSTNode, elif_: bool) -> cst.CSTNode | cst.RemovalSentinel:
        after = self.patch.after
        if not after:
            if isinstance(node, cst.BaseStatement | cst.BaseSmallStatement):
                return cst.RemoveFromParent()
            raise self._misfit("an empty `after` removes a statement only")
        try:
            if isinstance(node, cst.BaseExpression):
                return cst.parse_expression(after)
            if isinstance(node, cst.Arg):
                call = cst.ensure_type(cst.parse_expression(f"f({after})"), cst.Call)
                return call.args[0].with_changes(
                    comma=node.comma, whitespace_after_arg=node.whitespace_after_arg)
            if isinstance(node, cst.SimpleStatementLine):
                return node.with_changes(body=[self._small(after)])
            if isinstance(node, cst.BaseSmallStatement):
                return self._small(after).with_changes(semicolon=node.semicolon)
            assert isinstance(node, _Opener)  # the kinds `_line` names
            return self._opener(node, after, elif_)
        except cst.ParserSyntaxError:
            raise self._misfit("it does not parse") from None

    def _small(self, after: str) -> cst.BaseSmallStatement:
        line = cst.parse_statement(after)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            raise self._misfit("it is not one simple statement")
        return line.body[0]

    def _opener(self, node: _Opener, after: str, elif_: bool) -> cst.CSTNode:
        if elif_ != after.startswith("elif "):
            raise self._misfit("an `elif` line is patched by an `elif` line only")
        opened = cst.parse_statement(after.removeprefix("el") + _SUITE_CODE)
        if type(opened) is not type(node):
            raise self._misfit(f"it does not open the `{_line(node, elif_)}` statement")
        return opened.with_changes(body=node.body, orelse=node.orelse,
                                   leading_lines=node.leading_lines)

    def _misfit(self, why: str) -> MutantNotApplicable:
        patch = self.patch
        return MutantNotApplicable(
            f"mutant {patch.name}: `{patch.after}` cannot replace `{patch.before}` in "
            f"{patch.site}: {why}")


def _line(node: cst.CSTNode, elif_: bool) -> str | None:
    """The code of `node` as a patch names it, for the node kinds a patch replaces."""
    if isinstance(node, cst.BaseExpression):
        return _RENDER.code_for_node(node)
    if isinstance(node, cst.Arg):
        bare = node.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                 whitespace_after_arg=cst.SimpleWhitespace(""))
        return _RENDER.code_for_node(bare)
    if isinstance(node, cst.SimpleStatementLine):
        # A line of one statement is that statement; its comment is not part of it.
        return _line(node.body[0], elif_) if len(node.body) == 1 else None
    if isinstance(node, cst.BaseSmallStatement):
        return _RENDER.code_for_node(node.with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
    if isinstance(node, _Opener):
        opened = node.with_changes(body=_SUITE, orelse=None, leading_lines=())
        text = _RENDER.code_for_node(opened).removesuffix(_SUITE_CODE)
        return f"el{text}" if elif_ else text
    return None
