"""MESH900 print-call: a throwaway rule for the registry tests, written the way a real rule
is (one file, one record with its options and examples). Never registered outside tests."""

from __future__ import annotations

from invariants.scan.context import FileContext
from invariants.scan.names import last_part
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH900"
# Calls production code must not make.
FORBIDDEN_CALLS = Names("forbidden_calls", ("print",))


def applies(ctx: FileContext) -> bool:
    return any(last_part(name) in ctx.text for name in FORBIDDEN_CALLS.of(ctx.config))


def check(ctx: FileContext) -> None:
    forbidden = FORBIDDEN_CALLS.of(ctx.config)
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is not None and name in forbidden:
            ctx.report(RULE_ID, record.node, f"{name}() in production code", record.symbol)


VALID: tuple[str, ...] = ("log.info('x')\n", "printer.print_page()\n")
INVALID: tuple[InvalidExample, ...] = (("x = 1\nprint(x)\n", (2,)),)

RULE = Rule(
    RULE_ID,
    "print-call",
    "A forbidden call (print) in production code.",
    applies,
    check,
    VALID,
    INVALID,
    options=(FORBIDDEN_CALLS,),
)
