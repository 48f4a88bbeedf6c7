"""MESH005 module-mutable-state: a mutable collection bound at module or class level.

Such state is shared by every instance, test and worker in the process, and survives
between test cases. Allow-list a deliberate one with a tag and a reason on its line:
`# harness: allow[MESH005] MEMO: reason` (tags CONST, MEMO, PROC, TESTPERF).
Production code only.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.names import last_part
from invariants.scan.rules.spec import InvalidExample, Rule
from invariants.scan.rules.walk import shared_statements

RULE_ID = "MESH005"
# The tags a MESH005 suppression must carry, one per reason shared state may be fine.
MUTABLE_STATE_TAGS = ("CONST", "MEMO", "PROC", "TESTPERF")
MUTABLE_CALLS = frozenset({"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"})
EXEMPT_NAMES = frozenset({"__all__", "__slots__", "__match_args__"})
_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test


def _mutable_kind(ctx: FileContext, value: cst.BaseExpression | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, _DISPLAYS):
        return type(value).__name__.lower().replace("comp", " comprehension")
    if isinstance(value, cst.Call):
        name = ctx.name_of(value.func)
        if name is not None and last_part(name) in MUTABLE_CALLS:
            return f"{last_part(name)}()"
    return None


def _bound_names(small: cst.Assign | cst.AnnAssign) -> list[str]:
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    return [t.value if isinstance(t, cst.Name) else "<target>" for t in targets]


def check(ctx: FileContext) -> None:
    for statement, symbol in shared_statements(ctx.module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, (cst.Assign, cst.AnnAssign)):
                continue
            kind = _mutable_kind(ctx, small.value)
            names = _bound_names(small)
            if kind is None or all(name in EXEMPT_NAMES for name in names):
                continue
            where = f"class {symbol}" if symbol else "module"
            ctx.report(
                RULE_ID,
                small,
                f"{', '.join(names)} is a {where}-level mutable {kind}, shared by every caller: "
                "use a tuple/frozenset or instance state, or allow-list it with a tag and reason",
                symbol,
            )


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
    suppression_tags=MUTABLE_STATE_TAGS,
)
