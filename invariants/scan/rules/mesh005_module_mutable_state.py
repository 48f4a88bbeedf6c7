"""MESH005 module-mutable-state: a mutable collection bound at module or class level.

Such state is shared by every instance, test and worker in the process, and survives
between test cases. Allow-list a deliberate one with a tag and a reason on its line:
`# harness: allow[MESH005] MEMO: reason` (tags CONST, MEMO, PROC, TESTPERF).
Production code only.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Sequence

from invariants.scan.context import FileContext
from invariants.scan.names import canonical, last_part
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH005"
# The tags a MESH005 suppression must carry, one per reason shared state may be fine.
MUTABLE_STATE_TAGS = ("CONST", "MEMO", "PROC", "TESTPERF")
MUTABLE_CALLS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})
EXEMPT_NAMES = frozenset({"__all__", "__slots__", "__match_args__"})


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test


def check(ctx: FileContext) -> None:
    """Read from CPython's own tree (`ast`, about a tenth of libcst's parse), so a file no
    other rule needs is never parsed by libcst. Positions are the statements' own: line,
    column (characters, 1-based) and end line, as libcst would place them."""
    tree = _python_tree(ctx.text)
    aliases = _import_aliases(tree.body)
    for small, symbol in _shared_assignments(tree.body, ()):
        kind = _mutable_kind(small.value, aliases)
        names = _bound_names(small)
        if kind is None or all(name in EXEMPT_NAMES for name in names):
            continue
        where = f"class {symbol}" if symbol else "module"
        ctx.report_at(
            RULE_ID,
            (small.lineno, _column(ctx, small.lineno, small.col_offset), small.end_lineno or 0),
            f"{', '.join(names)} is a {where}-level mutable {kind}, shared by every caller: "
            "use a tuple/frozenset or instance state, or allow-list it with a tag and reason",
            symbol,
        )


def _python_tree(text: str) -> ast.Module:
    """The file's `ast` tree; it compiled, so only a pathological nesting depth can fail."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape warns; it is no concern here
        return ast.parse(text)


def _column(ctx: FileContext, line: int, byte_offset: int) -> int:
    """`ast` counts UTF-8 bytes into the line; a finding's column counts characters (and,
    as libcst places a module-level statement, not the form feeds that may precede it)."""
    prefix = ctx.lines[line - 1].encode("utf-8", "surrogatepass")[:byte_offset]
    text = prefix.decode("utf-8", "replace")
    return 1 if not text.strip("\f") else len(text) + 1


_Assignment = ast.Assign | ast.AnnAssign


def _shared_assignments(
    body: Sequence[ast.stmt], scope: tuple[str, ...]
) -> Iterator[tuple[_Assignment, str]]:
    """Assignments of module and class bodies and their if/for/while/try/with/match blocks,
    in source order, with the enclosing class names (what `walk.shared_statements` visits)."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(statement, ast.ClassDef):
            yield from _shared_assignments(statement.body, (*scope, statement.name))
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            yield statement, ".".join(scope)
        for block in _blocks(statement):
            yield from _shared_assignments(block, scope)


def _blocks(statement: ast.stmt) -> Iterator[Sequence[ast.stmt]]:
    """The statement lists directly inside a compound statement other than a def or class."""
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        yield statement.body
        yield statement.orelse
    elif isinstance(statement, (ast.Try, ast.TryStar)):
        yield statement.body
        for handler in statement.handlers:
            yield handler.body
        yield statement.orelse
        yield statement.finalbody
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        yield statement.body
    elif isinstance(statement, ast.Match):
        for case in statement.cases:
            yield case.body


def _top_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, those in if/try/with/... blocks included (not defs or classes)."""
    for statement in body:
        yield statement
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in _blocks(statement):
                yield from _top_level(block)


def _import_aliases(body: Sequence[ast.stmt]) -> dict[str, str]:
    """Local name -> full dotted name, as `names.import_aliases` reads libcst's tree."""
    aliases: dict[str, str] = {}
    for statement in _top_level(body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname is not None:
                    aliases[alias.asname] = alias.name
        elif isinstance(statement, ast.ImportFrom) and statement.names[0].name != "*":
            base = statement.module or ""
            for alias in statement.names:
                local = alias.asname if alias.asname is not None else alias.name
                aliases[local] = f"{base}.{alias.name}" if base else alias.name
    return aliases


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _mutable_kind(value: ast.expr | None, aliases: dict[str, str]) -> str | None:
    if isinstance(value, _DISPLAYS):
        return type(value).__name__.lower().replace("comp", " comprehension")
    if isinstance(value, ast.Call):
        dotted = _dotted(value.func)
        name = canonical(dotted, aliases) if dotted is not None else None
        if name is not None and last_part(name) in MUTABLE_CALLS:
            return f"{last_part(name)}()"
    return None


def _bound_names(small: _Assignment) -> list[str]:
    targets = small.targets if isinstance(small, ast.Assign) else [small.target]
    return [t.id if isinstance(t, ast.Name) else "<target>" for t in targets]


VALID: tuple[str, ...] = (
    """
import threading

__all__ = ["Router"]
ROUTES = ("a", "b")
KINDS = frozenset({"x"})
LOCK = threading.Lock()

class Router:
    __slots__ = ["table"]
    LIMIT = 64

    def __init__(self):
        self.table = {}
        seen = []
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
import collections

CACHE = {}
SEEN: set[str] = set()
QUEUE = collections.deque()
SQUARES = [n * n for n in range(4)]

class Router:
    routes = []
    by_key = collections.defaultdict(list)
""",
        (4, 5, 6, 7, 10, 11),
    ),
    (
        """
import sys

if sys.platform == "win32":
    HANDLERS = dict()
""",
        (5,),
    ),
)

RULE = Rule(
    RULE_ID,
    "module-mutable-state",
    "Module- or class-level mutable state in production code.",
    applies,
    check,
    VALID,
    INVALID,
    reads_tree=False,
    suppression_tags=MUTABLE_STATE_TAGS,
)
