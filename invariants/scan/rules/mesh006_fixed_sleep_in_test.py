"""MESH006 fixed-sleep-in-test: a test that sleeps a fixed time instead of waiting for the
condition it needs. It is slow when the machine is fast and flaky when it is slow.
Test files only; `sleep(0)` (a yield to the event loop) is fine.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.names import last_part
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH006"

# Calls that sleep a fixed time.
SLEEP_CALLS = Names("sleep_calls", ("time.sleep", "sleep", "asyncio.sleep"))


def applies(ctx: FileContext) -> bool:
    return ctx.is_test


def prefilter(ctx: FileContext) -> bool:
    return any(last_part(name) in ctx.text for name in SLEEP_CALLS.of(ctx.config))


def _positive_literal(expr: cst.BaseExpression) -> bool:
    """An int or float literal above zero (`-1`, `1 + 1` and names are not literals)."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value) > 0
    return False


def check(ctx: FileContext) -> None:
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is None or name not in SLEEP_CALLS.of(ctx.config) or not record.node.args:
            continue
        # the first argument as written, positional or keyword (`asyncio.sleep(delay=0.5)`)
        if _positive_literal(record.node.args[0].value):
            ctx.report(
                RULE_ID,
                record.node,
                f"{name}() with a fixed delay in a test: wait on the condition instead",
                record.symbol,
            )


VALID: tuple[str, ...] = (
    """
import asyncio

async def test_flush(hub, clock):
    await asyncio.sleep(0)
    await asyncio.sleep(delay=0)
    clock.sleep(5)
    await hub.wait_until(lambda: hub.idle)
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
import time
import asyncio
from time import sleep

async def test_flush(hub):
    time.sleep(0.5)
    sleep(2)
    await asyncio.sleep(1)
    await asyncio.sleep(delay=0.5)
""",
        (7, 8, 9, 10),
    ),
)

RULE = Rule(
    RULE_ID,
    "fixed-sleep-in-test",
    "A fixed sleep in test code: wait on the condition instead.",
    applies,
    check,
    VALID,
    INVALID,
    prefilter=prefilter,
    options=(SLEEP_CALLS,),
    examples_are_tests=True,
)
