"""What the rules share while analysing one file: the tree, lazily built indexes, and the
findings they report (positions are computed once, at the end, for reported nodes only)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar, cast

import libcst as cst

from invariants.scan.deep import run_deep
from invariants.scan.model import CallSite, Definition, EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.names import canonical, dotted_name, import_aliases, source_lines
from invariants.scan.positions import Span, locate

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Located:
    ancestors: tuple[cst.CSTNode, ...]  # module first, direct parent last

    @property
    def symbol(self) -> str:
        return symbol_of(self.ancestors)

    @property
    def function(self) -> cst.FunctionDef | None:
        for node in reversed(self.ancestors):
            if isinstance(node, cst.FunctionDef):
                return node
        return None

    @property
    def statement(self) -> cst.CSTNode | None:
        """The innermost statement (small or compound) holding the call."""
        for node in reversed(self.ancestors):
            if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return node
        return None


@dataclass(frozen=True, slots=True)
class CallRecord(_Located):
    """A call expression and the nodes enclosing it."""

    node: cst.Call


@dataclass(frozen=True, slots=True)
class ClassReadRecord(_Located):
    """An `x.__class__` read and the nodes enclosing it."""

    node: cst.Attribute


def symbol_of(ancestors: tuple[cst.CSTNode, ...]) -> str:
    """Qualified name of the enclosing defs and classes, e.g. `Router.route`."""
    return ".".join(
        node.name.value for node in ancestors if isinstance(node, (cst.FunctionDef, cst.ClassDef))
    )


# Fields that hold only punctuation and whitespace: nothing a rule looks for lives there.
_SKIPPED_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "leading_lines",
        "lines_after_decorator",
        "header",
        "footer",
        "colon",
        "equal",
        "dot",
        "operator",
        "newline",
        "star",
        "asynchronous",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "indent",
    }
)
_NODE_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def _node_fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    names = _NODE_FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and "whitespace" not in f.name
        )
        _NODE_FIELDS[kind] = names
    return names


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children` without the punctuation and whitespace, and without libcst's visitor
    machinery (which `children` runs): the fields `_collect` walks, in source order."""
    children: list[cst.CSTNode] = []
    for name in _node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            children.append(value)
        elif isinstance(value, (list, tuple)):
            children.extend(item for item in value if isinstance(item, cst.CSTNode))
    return children


@dataclass(slots=True)
class _Collected:
    calls: list[CallRecord] = field(default_factory=list)
    class_reads: list[ClassReadRecord] = field(default_factory=list)


def _collect(module: cst.Module) -> _Collected:
    """Calls and `__class__` reads with their ancestors, in source order.

    An explicit-stack walk over the node fields: no recursion limit to hit, and far
    cheaper than libcst's visitor machinery, which rebuilds every node it passes.
    """
    found = _Collected()
    path: list[cst.CSTNode] = []
    stack: list[tuple[cst.CSTNode, int]] = [(module, 0)]
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        if isinstance(node, cst.Call):
            found.calls.append(CallRecord(tuple(path), node))
        elif isinstance(node, cst.Attribute) and node.attr.value == "__class__":
            found.class_reads.append(ClassReadRecord(tuple(path), node))
        path.append(node)
        depth += 1
        stack.extend((child, depth) for child in reversed(child_nodes(node)))
    return found


@dataclass(slots=True)
class _Pending:
    rule: str
    node: cst.CSTNode
    message: str
    symbol: str


@dataclass(slots=True)
class _PendingEmit:
    node: cst.CSTNode
    symbol: str
    guard: cst.CSTNode | None


@dataclass(slots=True)
class _PendingCall:
    node: cst.CSTNode
    caller: str
    callee: str
    guarded: bool
    target: str


class TreeNotBuilt(RuntimeError):
    """A rule read the tree of a file it had declared it would not need."""


@dataclass
class FileContext:
    """One file under analysis. The tree is attached only when a rule needs it (`attach`);
    until then the rules' prefilters and text-only collectors see the text alone."""

    path: str
    text: str
    config: ScanConfig
    is_test: bool
    _tree: cst.Module | None = None
    _findings: list[_Pending] = field(default_factory=list)
    _placed: list[tuple[str, Span, str, str]] = field(default_factory=list)
    _emits: list[_PendingEmit] = field(default_factory=list)
    _calls: list[_PendingCall] = field(default_factory=list)
    _line_calls: list[CallSite] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    _memo: dict[Hashable, object] = field(default_factory=dict)

    @property
    def module(self) -> cst.Module:
        if self._tree is None:
            raise TreeNotBuilt(f"{self.path}: the tree was not built for this file")
        return self._tree

    def attach(self, module: cst.Module) -> None:
        self._tree = module

    @cached_property
    def aliases(self) -> dict[str, str]:
        return import_aliases(self.module)

    @cached_property
    def _collected(self) -> _Collected:
        return _collect(self.module)

    @property
    def calls(self) -> list[CallRecord]:
        """Every call in the file, from one visit (paid only by files whose text needs it)."""
        return self._collected.calls

    @property
    def class_reads(self) -> list[ClassReadRecord]:
        return self._collected.class_reads

    @cached_property
    def lines(self) -> list[str]:
        return source_lines(self.text)

    def name_of(self, expr: cst.BaseExpression) -> str | None:
        """The dotted name of `expr` with import aliases expanded."""
        dotted = dotted_name(expr)
        return None if dotted is None else canonical(dotted, self.aliases)

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """What `build` returns, built once per file: a rule's per-file index (MESH001 keeps
        its control-flow graphs here). Keys start with the rule id, so rules never collide."""
        if key not in self._memo:
            self._memo[key] = build()
        return cast(T, self._memo[key])

    # -- recording -------------------------------------------------------------------
    def report(self, rule: str, node: cst.CSTNode, message: str, symbol: str) -> None:
        self._findings.append(_Pending(rule, node, message, symbol))

    def report_at(
        self, rule: str, where: tuple[int, int, int], message: str, symbol: str
    ) -> None:
        """A finding placed by the rule itself: (line, column, end line), 1-based."""
        line, column, end_line = where
        self._placed.append((rule, Span(line, column, end_line, 0), message, symbol))

    def reported(self, rule: str, node: cst.CSTNode) -> bool:
        """Has `rule` already reported `node` (two of its shapes may meet one call)?"""
        return any(p.rule == rule and p.node is node for p in self._findings)

    def emit_site(self, node: cst.CSTNode, symbol: str, guard: cst.CSTNode | None) -> None:
        self._emits.append(_PendingEmit(node, symbol, guard))

    def call_site(
        self, node: cst.CSTNode, caller: str, callee: str, guarded: bool, target: str
    ) -> None:
        self._calls.append(_PendingCall(node, caller, callee, guarded, target))

    def call_site_at_line(self, line: int, caller: str, callee: str, target: str) -> None:
        self._line_calls.append(CallSite(self.path, line, caller, callee, False, target))

    def snippet(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def finish(self, report: FileReport) -> None:
        nodes: list[cst.CSTNode] = [p.node for p in self._findings]
        nodes += [e.node for e in self._emits] + [e.guard for e in self._emits if e.guard]
        nodes += [c.node for c in self._calls]
        spans = run_deep(lambda: locate(self.module, nodes)) if nodes else {}
        unknown = Span(1, 1, 1, 1)
        for pending in self._findings:
            span = spans.get(id(pending.node), unknown)
            report.findings.append(
                Finding(
                    pending.rule,
                    self.path,
                    span.line,
                    span.column,
                    span.end_line,
                    pending.message,
                    pending.symbol,
                    self.snippet(span.line),
                )
            )
        for rule, span, message, symbol in self._placed:
            report.findings.append(
                Finding(
                    rule, self.path, span.line, span.column, span.end_line, message, symbol,
                    self.snippet(span.line),
                )
            )
        for emit in self._emits:
            span = spans.get(id(emit.node), unknown)
            guard_line = spans.get(id(emit.guard), unknown).line if emit.guard else None
            report.emit_sites.append(
                EmitSite(
                    self.path,
                    span.line,
                    span.column,
                    emit.symbol,
                    emit.guard is not None,
                    guard_line,
                    self.snippet(span.line),
                )
            )
        for call in self._calls:
            span = spans.get(id(call.node), unknown)
            report.calls.append(
                CallSite(
                    self.path, span.line, call.caller, call.callee, call.guarded, call.target
                )
            )
        report.calls.extend(self._line_calls)
        report.definitions.extend(self.definitions)
