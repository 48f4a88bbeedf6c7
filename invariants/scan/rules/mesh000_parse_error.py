"""MESH000 parse-error: a file that cannot be read or parsed. It is reported, with the
parser's reason and position, and the scan goes on. The checks live in `source` and
`engine`; this module carries the rule's examples."""

from __future__ import annotations

from invariants.scan.context import FileContext
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH000"


def applies(ctx: FileContext) -> bool:
    return False  # a parsed file has nothing left to report here


def check(ctx: FileContext) -> None:
    return None


VALID: tuple[str, ...] = ("x = 1\n", "async def f():\n    await g()\n")

INVALID: tuple[InvalidExample, ...] = (
    ("\nprint 'hello'\n", (2,)),
    ("def f(:\n    pass\n", (1,)),
    ("x = " + "(" * 300 + ")" * 300 + "\n", (1,)),
)

RULE = Rule(
    RULE_ID,
    "parse-error",
    "A file that cannot be read or parsed.",
    applies,
    check,
    VALID,
    INVALID,
)
