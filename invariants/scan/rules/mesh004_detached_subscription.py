"""MESH004 detached-subscription: a subscription or task whose handle is thrown away.

Nothing can wait for, cancel or count a discarded subscription, so its work outlives the
code that started it (a NACK that runs after a stop). Production code only.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.names import last_part, matches_suffix
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule
from invariants.scan.rules.walk import all_statements

RULE_ID = "MESH004"

SUBSCRIPTION_CALLS = Names(
    "subscription_calls",
    (
        "subscribe", "asyncio.create_task", "loop.create_task", "asyncio.ensure_future",
        "create_task", "ensure_future",
    ),
    "calls that return a subscription or task handle",
)


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test and any(
        last_part(name) in ctx.text for name in SUBSCRIPTION_CALLS.of(ctx.config)
    )


def _target(ctx: FileContext, func: cst.BaseExpression) -> str | None:
    name = ctx.name_of(func)
    if name is None and isinstance(func, cst.Attribute):
        name = "?." + func.attr.value  # e.g. `self.get_loop().create_task`
    return name


def check(ctx: FileContext) -> None:
    patterns = SUBSCRIPTION_CALLS.of(ctx.config)
    for statement, symbol in all_statements(ctx.module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                continue
            name = _target(ctx, small.value.func)
            if name is not None and matches_suffix(name, patterns):
                ctx.report(
                    RULE_ID,
                    small,
                    f"the handle of {last_part(name)}() is discarded: keep it so the work "
                    "can be awaited, cancelled and counted",
                    symbol,
                )


VALID: tuple[str, ...] = (
    """
import asyncio

class Node:
    def start(self, stream):
        self.subscription = stream.subscribe(self.on_item)
        self.task = asyncio.create_task(self.pump())
        return self.subscription
""",
    """
async def run(stream):
    async with stream.subscribe() as items:
        await consume(items)
    await stream.unsubscribe()
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
import asyncio

class Node:
    def start(self, stream, loop):
        stream.subscribe(self.on_item)
        asyncio.create_task(self.pump())
        loop.create_task(self.pump())
        asyncio.ensure_future(self.pump())
""",
        (6, 7, 8, 9),
    ),
    (
        """
from asyncio import create_task as spawn

def nack(router, failure):
    router.nacks().subscribe(print)
    spawn(router.post(failure))
""",
        (5, 6),
    ),
)

RULE = Rule(
    RULE_ID,
    "detached-subscription",
    "A subscription or task handle is discarded.",
    applies,
    check,
    VALID,
    INVALID,
    options=(SUBSCRIPTION_CALLS,),
)
