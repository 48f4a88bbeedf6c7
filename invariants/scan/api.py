"""The public API for a repository's own static rules (docs/team-rules.md).

A team rule is written as the built-in MESH rules are: a module defines a `Rule` record
(its id, slug, summary, options, check and VALID/INVALID examples) and the repository
registers it in `[tool.harness] rules = ["module:ATTRIBUTE"]`. Its module imports this
module and nothing else of the harness; the names below are what a rule needs, and they
keep their meaning across versions of the harness.

Records and results:

* `Rule`: the record (see `invariants.scan.rules.spec` for every field).
* `InvalidExample`: `(source, lines)`, an invalid example and the lines it must be reported on.
* `Names`, `Count`: the `[tool.harness]` options a rule declares (`Names(key, default)`),
  read with `option.of(ctx.config)`.
* `FileContext`: what a check gets for one file: `path`, `text`, `lines`, `is_test`,
  `config`, the libcst tree `module`, every call `calls` (each a `CallRecord`), `name_of`
  (a dotted name with the file's import aliases expanded), `memo`, and `report(rule, node,
  message, symbol)` / `report_at(rule, (line, column, end_line), message, symbol)`.
* `CallRecord`: a call (`node`) with its `ancestors` (module first), its enclosing
  `symbol` (qualified name), `function` and innermost `statement`.
* `Finding`: what a report becomes (rule, path, line, column, end_line, message, symbol).
* `TreeResult`, `FileReport`, `ScanConfig`, `Problem`: what a whole-tree pass
  (`Rule.tree_pass`) reads and returns.

Helpers, the analyses the built-in rules use:

* `statements(ctx)`: every statement of the file with its enclosing qualified name.
* `last_part(name)`: the last component of a dotted name.
* `checked_before(ctx, record, checks)`: control flow: what a check came out true on, on
  every path to a call (MESH001's guard analysis, with your check names).
* `dominates(ctx, function, first, second)`: control flow: does `first` run on every path
  to `second`?
* `call_graph(reports)`, `CallGraph`, `function_id(path, qualname)`: who calls whom in
  the scanned tree (MESH001's call-graph resolution), for a whole-tree pass.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

import libcst as cst

from invariants.scan.context import CallRecord, FileContext
from invariants.scan.model import CallSite, FileReport, Finding, ScanConfig
from invariants.scan.names import last_part
from invariants.scan.options import Count, Names
from invariants.scan.problems import Problem
from invariants.scan.rules.mesh001.cfg import ENTRY, FunctionCfg
from invariants.scan.rules.mesh001.emits import cfg_of, guards_at
from invariants.scan.rules.mesh001.targets import function_id as _function_id
from invariants.scan.rules.spec import InvalidExample, Rule, TreeResult
from invariants.scan.rules.walk import all_statements

__all__ = [
    "CallGraph",
    "CallRecord",
    "Count",
    "FileContext",
    "FileReport",
    "Finding",
    "InvalidExample",
    "Names",
    "Problem",
    "Rule",
    "ScanConfig",
    "TreeResult",
    "call_graph",
    "checked_before",
    "dominates",
    "function_id",
    "last_part",
    "statements",
]


def statements(ctx: FileContext) -> Iterator[tuple[cst.BaseStatement, str]]:
    """Every statement of the file (inside functions and classes too), in source order,
    with the qualified name of the functions and classes around it (`""` at module level):
    `("Hub._pump", ...)` for a statement of `Hub._pump`'s body."""
    return all_statements(ctx.module.body)


def checked_before(
    ctx: FileContext, record: CallRecord, checks: Sequence[str]
) -> dict[str, cst.Call]:
    """What a call to one of `checks` (last names: `["may_answer"]`) came out true on, on
    every path to `record`'s call: `{"d": <the d.may_answer() call>}`. A check is on its
    first positional argument, its `delivery=` keyword, else its receiver (`d.may_answer()`
    and `may_answer(d)` both check `d`).

    The control flow is MESH001's (docs/static-rules.md#mesh001-unguarded-failure-emit):
    if/elif/else, `and`/`or`/`not`, loops with break/continue, try/except/finally, with,
    match, assert, early return and raise, a variable bound once to a check, and the
    operands of one expression; a nested function is covered by what covers its `def`.
    Outside a function only the enclosing expression counts."""
    return guards_at(ctx, record, tuple(checks))


def _nodes(cfg: FunctionCfg, statement: cst.CSTNode) -> list[int]:
    if isinstance(statement, cst.SimpleStatementLine):
        statement = statement.body[0]
    own = [cfg.node_of[id(statement)]] if id(statement) in cfg.node_of else []
    return own + cfg.copies.get(id(statement), [])


def dominates(
    ctx: FileContext, function: cst.FunctionDef, first: cst.CSTNode, second: cst.CSTNode
) -> bool:
    """Whether `first` runs on every path from the start of `function` to `second` (it
    dominates it in the function's control-flow graph; a statement dominates itself, and a
    statement no path reaches is dominated by every other). Both are statements of
    `function`'s own body, at any depth but not inside a nested def: a small statement
    (`x = 1`, a call's `cst.Expr`), its line, or a compound one (`if`, `for`, `try`, ...);
    `CallRecord.statement` is one. Raises ValueError for anything else."""
    cfg = cfg_of(ctx, function, ())
    firsts, seconds = set(_nodes(cfg, first)), _nodes(cfg, second)
    if not firsts or not seconds:
        raise ValueError(f"{ctx.path}: not a statement of {function.name.value}()")
    idom = cfg.idom()
    for node in seconds:
        if node not in idom:
            continue  # unreachable
        current = node
        while current not in firsts:
            if current == ENTRY:
                return False
            current = idom[current]
    return True


def function_id(path: str, qualname: str) -> str:
    """A function's name in the call graph: its module path (from the file's path relative
    to the scan root) and qualified name, `pkg.router:Router.nack` for `Router.nack` in
    `pkg/router.py`; `pkg.router:` is the module's own top-level code."""
    return _function_id(path, qualname)


class CallGraph:
    """Who calls whom among the functions of the scanned tree's production files, each
    call resolved from the source as MESH001's call graph does: `self.f()` reaches `f` of
    the class, its bases and subclasses; `obj.f()` on an unknown receiver every method
    named `f`; an import reaches what it names (docs/static-rules.md, "Call graph").
    Functions are named by `function_id`."""

    def __init__(self, reports: Sequence[FileReport]) -> None:
        from invariants.scan.rules.mesh001.resolve import DefinitionIndex

        self._index = DefinitionIndex(reports)
        self._from: dict[str, list[CallSite]] = defaultdict(list)
        self._named: dict[str, list[CallSite]] = defaultdict(list)
        for report in reports:
            for call in report.calls:
                self._from[_function_id(call.path, call.caller)].append(call)
                self._named[call.callee].append(call)

    @property
    def functions(self) -> frozenset[str]:
        """Every function (and method) defined in the scanned production files."""
        return frozenset(self._index.functions)

    def callees(self, function: str) -> frozenset[str]:
        """The functions `function` calls."""
        return frozenset(
            target for call in self._from.get(function, ())
            for target in self._index.targets(call.target)
        )

    def callers(self, function: str) -> frozenset[str]:
        """The functions (or `module:` top-level code) that call `function`."""
        name = last_part(function.partition(":")[2])
        return frozenset(
            _function_id(call.path, call.caller) for call in self._named.get(name, ())
            if function in self._index.targets(call.target)
        )

    def reachable(self, functions: Iterable[str]) -> frozenset[str]:
        """Every function called from `functions`, directly or through other calls."""
        seen: set[str] = set()
        todo = list(functions)
        while todo:
            for callee in self.callees(todo.pop()):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        return frozenset(seen)


def call_graph(reports: Sequence[FileReport]) -> CallGraph:
    """The call graph of the files a whole-tree pass (`Rule.tree_pass`) is given. It reads
    the calls MESH001 collects while it is enabled (every call of every production file;
    test files call helpers on purpose and are left out): with MESH001 not selected, or
    ignored, the graph has no calls."""
    return CallGraph(reports)
