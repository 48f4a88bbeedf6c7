"""MESH004 detached-subscription: a subscription or task whose handle is thrown away.

Nothing can wait for, cancel or count a discarded subscription, so its work outlives the
code that started it (a NACK that runs after a stop). Production code only.

`subscribe(...)` returns a handle only by the observer convention (Rx and its kin): it is
given something to call back (a lambda, a function or method of the file, a builtin such
as `print`, an `on_*`/`*_handler`/`*_callback` name, an `on_next=`/`observer=`-style
keyword, or an `Observer(...)`/`Subscriber(...)` object), or the scheduler to run on
(`operation.subscribe(self.mesh.scheduler)`, the reference mesh's legs; Rx's
`scheduler=`). A `subscribe` that takes data (`consumer.subscribe(topics)`,
`SubscriptionState.subscribe(topics=...)`) registers interest and returns nothing worth
keeping, so it is not flagged: an argument passed by a keyword that names data
(`topics=topics`) is data whatever its value is called, and the Kafka-style rebalance
`listener=` (kafka-python, aiokafka) is a callback of that convention, which returns
nothing. A task started in an
`async with asyncio.TaskGroup() as tg:` block (`tg.create_task(...)`) is owned by the group,
which awaits it, so it is not detached either.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.names import child_blocks, last_part, matches_suffix
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule
from invariants.scan.rules.walk import all_statements

_CALLBACK_KEYWORDS = frozenset(
    {"on_next", "on_error", "on_completed", "observer", "callback", "handler", "scheduler"}
)
_CALLBACK_SUFFIXES = (
    "_handler", "_callback", "_scheduler", "Observer", "Subscriber", "Scheduler",
)
_CALLBACK_NAMES = frozenset({"handler", "callback", "observer", "subscriber", "scheduler"})

RULE_ID = "MESH004"

# Calls that return a subscription or task handle.
SUBSCRIPTION_CALLS = Names("subscription_calls", (
    "subscribe", "asyncio.create_task", "loop.create_task", "asyncio.ensure_future",
    "create_task", "ensure_future",
))


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test


def prefilter(ctx: FileContext) -> bool:
    return any(last_part(name) in ctx.text for name in SUBSCRIPTION_CALLS.of(ctx.config))


def _target(ctx: FileContext, func: cst.BaseExpression) -> str | None:
    name = ctx.name_of(func)
    if name is None and isinstance(func, cst.Attribute):
        name = "?." + func.attr.value  # e.g. `self.get_loop().create_task`
    return name


def _defined_functions(ctx: FileContext) -> frozenset[str]:
    return frozenset(
        statement.name.value
        for statement, _ in all_statements(ctx.module.body)
        if isinstance(statement, cst.FunctionDef)
    )


def _callback_like(ctx: FileContext, arg: cst.Arg, functions: frozenset[str]) -> bool:
    """Something `subscribe` would call back (see the module docstring)."""
    if arg.keyword is not None and arg.keyword.value in _CALLBACK_KEYWORDS:
        return True
    value = arg.value
    if isinstance(value, cst.Lambda):
        return True
    if isinstance(value, cst.Call):  # `Observer(...)`, `partial(handle, d)`
        called = ctx.name_of(value.func) or ""
        return last_part(called) == "partial" or called.endswith(_CALLBACK_SUFFIXES)
    if arg.keyword is not None:  # `topics=topics`: the keyword says what it is, data
        return False
    name = ctx.name_of(value)
    if name is None:
        return False
    last = last_part(name)
    return (
        last in functions
        or (name == last and last in _BUILTIN_CALLABLES)
        or last.startswith("on_")
        or last in _CALLBACK_NAMES
        or last.endswith(_CALLBACK_SUFFIXES)
    )


# Builtins that are only ever callbacks when passed to subscribe (`subscribe(print)`).
_BUILTIN_CALLABLES = frozenset({"print"})


def _is_subscription(
    ctx: FileContext, call: cst.Call, name: str, functions: frozenset[str]
) -> bool:
    if last_part(name) != "subscribe":
        return True  # a task starter: its handle is always the task
    return any(_callback_like(ctx, arg, functions) for arg in call.args)


def _task_groups(ctx: FileContext, item: cst.WithItem) -> str | None:
    """`tg` for `asyncio.TaskGroup() as tg` (or any `...TaskGroup()`, also through an import
    alias: `TG() as tg` after `from asyncio import TaskGroup as TG`)."""
    context = item.item
    if not isinstance(context, cst.Call) or item.asname is None:
        return None
    called = ctx.name_of(context.func) or ""
    target = item.asname.name
    if last_part(called) == "TaskGroup" and isinstance(target, cst.Name):
        return target.value
    return None


def _in_task_group(ctx: FileContext, small: cst.Expr, groups: dict[int, frozenset[str]]) -> bool:
    func = small.value.func if isinstance(small.value, cst.Call) else None
    if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return False
    return func.value.value in groups.get(id(small), frozenset())


def _group_scopes(
    ctx: FileContext,
    body: Sequence[cst.BaseStatement],
    groups: frozenset[str],
    found: dict[int, frozenset[str]],
) -> None:
    """For every expression statement: the task-group names of the `with` blocks around it."""
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if groups and isinstance(small, cst.Expr):
                    found[id(small)] = groups
            continue
        inner = groups
        if isinstance(statement, cst.With):
            inner = groups | {g for item in statement.items if (g := _task_groups(ctx, item))}
        for block in child_blocks(statement):  # also def, class and with bodies
            _group_scopes(ctx, block, inner, found)


def check(ctx: FileContext) -> None:
    patterns = SUBSCRIPTION_CALLS.of(ctx.config)
    functions = _defined_functions(ctx)
    groups: dict[int, frozenset[str]] = {}
    if "TaskGroup" in ctx.text:
        _group_scopes(ctx, ctx.module.body, frozenset(), groups)
    for statement, symbol in all_statements(ctx.module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                continue
            name = _target(ctx, small.value.func)
            if name is None or not matches_suffix(name, patterns):
                continue
            if _in_task_group(ctx, small, groups):
                continue  # the group awaits it
            if _is_subscription(ctx, small.value, name, functions):
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
    # subscribe() that takes data, not a callback, returns nothing to keep
    """
class Consumer:
    def start(self, consumer, topics, state):
        consumer.subscribe(topics)
        consumer.subscribe(["orders", "nacks"])
        state.subscribe(topics=topics)
        SubscriptionState.subscribe(self, topics=topics, pattern=None)
""",
    # aiokafka's shapes: a keyword that names data, whatever the value is called (the file
    # has a `topics()` method too), and the Kafka-style rebalance listener
    """
class Consumer:
    def topics(self):
        return self._topics

    def subscribe(self, topics, listener=None):
        self._subscription.subscribe(topics=topics)
        self._subscription.subscribe(topics=topics, listener=listener)
""",
    # a task group owns (and awaits) its tasks, whatever name it is imported by
    """
import asyncio
from asyncio import TaskGroup as Group

async def run(router, items):
    async with asyncio.TaskGroup() as tg:
        for item in items:
            tg.create_task(router.post(item))
    async with Group() as group:
        group.create_task(router.post(items))
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
    (  # subscribe() given a callback by any of the observer conventions
        """
from functools import partial

class Node:
    def on_item(self, item):
        return item

    def start(self, stream, d):
        stream.subscribe(lambda item: self.on_item(item))
        stream.subscribe(on_next=self.record, on_error=self.fail)
        stream.subscribe(ItemObserver(self))
        stream.subscribe(partial(self.on_item, d))
        stream.subscribe(self.item_handler)
        operation.subscribe(self.mesh.scheduler)
        stream.subscribe(scheduler=self.loop_scheduler)
""",
        (9, 10, 11, 12, 13, 14, 15),
    ),
    (  # a task outside the group's block, or started on another loop, is detached
        """
import asyncio

async def run(router, loop):
    async with asyncio.TaskGroup() as tg:
        loop.create_task(router.post(1))
    tg.create_task(router.post(2))
""",
        (6, 7),
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
    prefilter=prefilter,
    options=(SUBSCRIPTION_CALLS,),
)
