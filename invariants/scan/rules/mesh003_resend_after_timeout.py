"""MESH003 resend-after-timeout: a non-idempotent call retried on a timeout.

A timeout means the callee accepted the request and has not answered: re-sending it runs
the handler twice. Retries of non-idempotent calls must be gated on a predicate that
excludes timeouts (`is_resendable`). Five shapes are recognised: a loop around a `try`
whose handler catches a timeout or consults a timeout-admitting predicate; a tenacity
`@retry` that admits timeouts (explicitly, by retrying every exception, or through a
combinator: `retry_if_not_exception_type(RejectedError)`, `retry_any`, `|`) on a function
that makes a non-idempotent call or is one by its own name; a retry helper handed both the
call and a timeout-admitting predicate; an event-driven retry, an `if` on a
timeout-admitting predicate whose true branch calls the non-idempotent call again or hands
it to a scheduler as a callback; and an event-loop retry, a handler catching a timeout that
schedules the call again (`loop.call_later(delay, self.deliver, d)`, `call_at`,
`loop.create_task(self.deliver(d))`). A handler is `except` or `except*` alike. A call
listed in `idempotent_calls` never counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import libcst as cst

from invariants.scan.context import CallRecord, FileContext
from invariants.scan.names import child_blocks, last_part, matches_suffix, suite_body
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule
from invariants.scan.rules.walk import all_statements

RULE_ID = "MESH003"

# Calls that must not run twice (matched on the last dotted component).
NON_IDEMPOTENT_CALLS = Names(
    "non_idempotent_calls", ("deliver", "deliver_message", "route_message", "post", "send"))
# Predicates that admit a timeout.
TIMEOUT_PREDICATES = Names("timeout_predicates", ("is_transient", "is_transient_failure"))
# Exception types that mean a timeout.
TIMEOUT_EXCEPTIONS = Names("timeout_exceptions", ("TimeoutError", "asyncio.TimeoutError"))
# Calls that are safe to repeat although their last name is in non_idempotent_calls
# (matched on the whole dotted name or its tail: `cache.post`).
IDEMPOTENT_CALLS = Names("idempotent_calls", ())

# What the messages tell a reader who knows the call is safe to repeat.
_IF_IDEMPOTENT = "(or list it in idempotent_calls if repeating it is safe)"
# Exception types a timeout also is (TimeoutError < OSError < Exception < BaseException).
_TIMEOUT_BASES = ("OSError", "Exception", "BaseException")
# Event-loop calls that run a callback (or a coroutine) later, as methods of any receiver
# (`loop.call_later`, `asyncio.create_task`, `tg.create_task`).
_SCHEDULERS = frozenset(
    {"call_later", "call_at", "call_soon", "call_soon_threadsafe", "create_task",
     "ensure_future", "run_coroutine_threadsafe"}
)
# asyncio's functions among them, also called by a bare imported name (`create_task(...)`
# after `from asyncio import create_task`).
_ASYNCIO_SCHEDULERS = frozenset(
    {"asyncio.create_task", "asyncio.ensure_future", "asyncio.run_coroutine_threadsafe"}
)
# tenacity's decorator and its iterator forms (`for attempt in Retrying(...)`,
# `async for attempt in AsyncRetrying(...)`), matched on the last name
_TENACITY_RETRIERS = frozenset({"retry", "Retrying", "AsyncRetrying"})


def applies(ctx: FileContext) -> bool:
    return True  # production and test code alike


def prefilter(ctx: FileContext) -> bool:
    config = ctx.config
    names = "|".join(re.escape(last_part(name)) for name in NON_IDEMPOTENT_CALLS.of(config))
    # The name, not the call: `from mesh import deliver as push` is called as `push(m)`.
    if not names or re.search(rf"\b(?:{names})\b", ctx.text) is None:
        return False
    exceptions = map(last_part, TIMEOUT_EXCEPTIONS.of(config))
    # `AsyncRetrying(stop=...)` retries every exception and need not say "retry"
    triggers = (*TIMEOUT_PREDICATES.of(config), *exceptions, *_TENACITY_RETRIERS)
    return any(word in ctx.text for word in triggers)


def _non_idempotent_name(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`expr` names a non-idempotent call (`deliver`, `self.router.deliver`)."""
    name = ctx.name_of(expr)
    if name is None and isinstance(expr, cst.Attribute):
        name = "?." + expr.attr.value  # `make().deliver`
    return name is not None and _non_idempotent(ctx, name)


def _non_idempotent(ctx: FileContext, name: str) -> bool:
    if last_part(name) not in NON_IDEMPOTENT_CALLS.of(ctx.config):
        return False
    return not matches_suffix(name, IDEMPOTENT_CALLS.of(ctx.config))


def _is_non_idempotent(ctx: FileContext, call: cst.Call) -> bool:
    return _non_idempotent_name(ctx, call.func)


def _is_predicate(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    name = ctx.name_of(expr)
    return name is not None and last_part(name) in TIMEOUT_PREDICATES.of(ctx.config)


def _names_timeout(
    ctx: FileContext, expr: cst.BaseExpression | None, *, bases: bool = False
) -> bool:
    """`expr` names a timeout exception type (or, with `bases`, a base class of one)."""
    if expr is None:
        return False
    if isinstance(expr, cst.Tuple):
        return any(_names_timeout(ctx, e.value, bases=bases) for e in expr.elements)
    name = ctx.name_of(expr)
    if name is None:
        return False
    return matches_suffix(name, TIMEOUT_EXCEPTIONS.of(ctx.config)) or (
        bases and name in _TIMEOUT_BASES
    )


# `except* T` runs its body when a T is raised, alone or in an exception group (a
# TaskGroup's): to these shapes it catches a timeout wherever `except T` does.
_HANDLERS = (cst.ExceptHandler, cst.ExceptStarHandler)


def _report(ctx: FileContext, node: cst.CSTNode, message: str, symbol: str) -> None:
    """One finding per call: nested loops or tries, two predicates in one gate, or two
    shapes (a gate around a scheduler) may each meet the same call."""
    if not ctx.reported(RULE_ID, node):
        ctx.report(RULE_ID, node, message, symbol)


def _inside(record: CallRecord, node: cst.CSTNode) -> bool:
    return any(ancestor is node for ancestor in record.ancestors)


def _ends_the_loop(body: cst.BaseSuite) -> bool:
    statements = suite_body(body)
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[-1], (cst.Raise, cst.Return, cst.Break)
    )


def _tries_in(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.Try | cst.TryStar]:
    """Try statements (`except` or `except*`) in a loop body, not descending into nested
    defs."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, (cst.Try, cst.TryStar)):
            yield statement
        for block in child_blocks(statement):
            yield from _tries_in(block)


def _loops(ctx: FileContext) -> Iterator[cst.For | cst.While]:
    seen: set[int] = set()
    for record in ctx.calls:
        for ancestor in record.ancestors:
            if isinstance(ancestor, (cst.For, cst.While)) and id(ancestor) not in seen:
                seen.add(id(ancestor))
                yield ancestor


def _retry_loops(ctx: FileContext) -> None:
    calls = ctx.calls
    for loop in _loops(ctx):
        for attempt in _tries_in(suite_body(loop.body)):
            sent = [
                r for r in calls if _inside(r, attempt.body) and _is_non_idempotent(ctx, r.node)
            ]
            if not sent:
                continue
            for handler in attempt.handlers:
                consults = any(
                    _inside(r, handler) and _is_predicate(ctx, r.node.func) for r in calls
                )
                catches = _names_timeout(ctx, handler.type)
                if (catches and not _ends_the_loop(handler.body)) or consults:
                    why = "catching a timeout" if catches else "a timeout-admitting predicate"
                    for record in sent:
                        _report(
                            ctx,
                            record.node,
                            f"{_call_name(record.node)}() is re-sent after {why}: a timed-out "
                            "callee still holds the request; gate the retry on is_resendable "
                            + _IF_IDEMPOTENT,
                            record.symbol,
                        )
                    break


def _call_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else "call"


def _retry_admits_timeouts(ctx: FileContext, decorator: cst.BaseExpression) -> bool:
    """A tenacity `@retry` (or `Retrying(...)`) whose retry condition lets a timeout through."""
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    name = ctx.name_of(target)
    if name is None or last_part(name) not in _TENACITY_RETRIERS:
        return False
    if not isinstance(decorator, cst.Call):
        return True  # bare @retry retries every exception
    condition = next(
        (arg.value for arg in decorator.args if arg.keyword and arg.keyword.value == "retry"),
        None,
    )
    return condition is None or _admits(ctx, condition)


def _admits(ctx: FileContext, condition: cst.BaseExpression) -> bool:
    """Does a tenacity retry condition retry after a timeout? Unknown shapes do not count
    (the rule reports only what it can show)."""
    if isinstance(condition, cst.BinaryOperation):  # `a | b` is retry_any, `a & b` retry_all
        left, right = _admits(ctx, condition.left), _admits(ctx, condition.right)
        if isinstance(condition.operator, cst.BitOr):
            return left or right
        return isinstance(condition.operator, cst.BitAnd) and left and right
    if not isinstance(condition, cst.Call):
        named = ctx.name_of(condition)
        return named is not None and last_part(named) == "retry_always"
    called = last_part(ctx.name_of(condition.func) or "")
    args = [arg.value for arg in condition.args if not arg.keyword or arg.keyword.value in
            ("exception_types", "predicate", "retries")]
    if called in ("retry_if_exception_type", "retry_if_exception_cause_type"):
        return not args or any(_names_timeout(ctx, a, bases=True) for a in args)
    if called in ("retry_if_not_exception_type", "retry_unless_exception_type"):
        # retries every exception but these: a timeout too, unless it is among them
        return bool(args) and not any(_names_timeout(ctx, a, bases=True) for a in args)
    if called == "retry_if_exception":
        return any(_is_predicate(ctx, a) for a in args)
    if called == "retry_any":
        return any(_admits(ctx, a) for a in args)
    if called == "retry_all":
        return bool(args) and all(_admits(ctx, a) for a in args)
    return False


def _functions(ctx: FileContext) -> Iterator[tuple[cst.FunctionDef, str]]:
    for statement, scope in all_statements(ctx.module.body):
        if isinstance(statement, cst.FunctionDef):
            yield statement, ".".join(filter(None, (scope, statement.name.value)))


def _tenacity(ctx: FileContext) -> None:
    # The first non-idempotent call of each function: the function is what @retry repeats.
    sending: dict[int, CallRecord] = {}
    for record in ctx.calls:
        function = record.function
        if function is None or id(function) in sending:
            continue
        if _is_non_idempotent(ctx, record.node):
            sending[id(function)] = record
    for function, symbol in _functions(ctx):
        # the function is what @retry repeats: it is the retried call when it sends, or
        # when its own name is a non-idempotent call (`def deliver(self, d)`)
        own_name = _non_idempotent(ctx, symbol)  # `Link.deliver`
        if id(function) not in sending and not own_name:
            continue
        what = "is a non-idempotent call" if own_name else "makes a non-idempotent call"
        for decorator in function.decorators:
            if _retry_admits_timeouts(ctx, decorator.decorator):
                _report(
                    ctx,
                    decorator.decorator,
                    f"@retry on {function.name.value}() admits timeouts and it {what}: a "
                    f"timed-out callee still holds the request {_IF_IDEMPOTENT}",
                    symbol,
                )


def _helpers(ctx: FileContext) -> None:
    """`retry_call(lambda: deliver(d), should_retry=is_transient)` and the like."""
    for record in ctx.calls:
        args = [arg.value for arg in record.node.args]
        if not any(_is_predicate(ctx, a) for a in args):
            continue
        for arg in args:
            sends = (
                isinstance(arg, cst.Lambda)
                and isinstance(arg.body, cst.Call)
                and _is_non_idempotent(ctx, arg.body)
            )
            if sends or _non_idempotent_name(ctx, arg):
                _report(
                    ctx,
                    record.node,
                    "a non-idempotent call is retried under a timeout-admitting predicate: "
                    f"use is_resendable {_IF_IDEMPOTENT}",
                    record.symbol,
                )
                break


def _sends(ctx: FileContext, call: cst.Call) -> bool:
    """The call makes a non-idempotent call, or hands one over as a callback."""
    if _is_non_idempotent(ctx, call):
        return True
    return any(_non_idempotent_name(ctx, arg.value) for arg in call.args)


def _gates(ctx: FileContext) -> None:
    """`if is_transient(exc) and ...: leg.schedule(delay, self.deliver, d)`: the retry is
    a scheduled re-invocation behind a gate that lets a timeout through."""
    calls = ctx.calls
    for record in calls:
        if not _is_predicate(ctx, record.node.func):
            continue
        gate = next((a for a in reversed(record.ancestors) if isinstance(a, cst.If)), None)
        if gate is None or not (record.node is gate.test or _inside(record, gate.test)):
            continue
        inside_test = record.ancestors[record.ancestors.index(gate) + 1 :]
        if any(isinstance(a, cst.UnaryOperation) for a in inside_test):
            continue  # `not is_transient(exc)`: its true branch gives up
        for sent in calls:
            if _inside(sent, gate.body) and _sends(ctx, sent.node):
                _report(
                    ctx,
                    sent.node,
                    "a non-idempotent call is re-sent behind a timeout-admitting gate: a "
                    "timed-out callee still holds the request; gate the retry on is_resendable "
                    + _IF_IDEMPOTENT,
                    sent.symbol,
                )


def _tenacity_loops(ctx: FileContext) -> None:
    """`for attempt in Retrying(retry=...): with attempt: router.deliver(d)`."""
    for loop in _loops(ctx):
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            continue
        if not _retry_admits_timeouts(ctx, loop.iter):
            continue
        for record in ctx.calls:
            if _inside(record, loop.body) and _is_non_idempotent(ctx, record.node):
                _report(
                    ctx,
                    record.node,
                    f"{_call_name(record.node)}() is re-sent by a tenacity loop that admits "
                    f"timeouts: a timed-out callee still holds the request {_IF_IDEMPOTENT}",
                    record.symbol,
                )


def _scheduler(ctx: FileContext, func: cst.BaseExpression) -> str | None:
    """The scheduler's name when `func` is one: `x.call_later`, or a bare name imported from
    asyncio (`create_task` after `from asyncio import create_task`)."""
    if isinstance(func, cst.Attribute):
        return func.attr.value if func.attr.value in _SCHEDULERS else None
    name = ctx.name_of(func)
    return last_part(name) if name in _ASYNCIO_SCHEDULERS else None


def _scheduled(ctx: FileContext) -> None:
    """`except TimeoutError: loop.call_later(delay, self.deliver, d)`: a handler of a
    timeout hands the call to the event loop again (a gate on a predicate is `_gates`)."""
    for record in ctx.calls:
        scheduler = _scheduler(ctx, record.node.func)
        if scheduler is None:
            continue
        if not any(_non_idempotent_name(ctx, a.value) or (
            isinstance(a.value, cst.Call) and _is_non_idempotent(ctx, a.value)
        ) for a in record.node.args):
            continue
        handler = next(
            (a for a in reversed(record.ancestors) if isinstance(a, _HANDLERS)), None
        )
        if handler is None or not _names_timeout(ctx, handler.type):
            continue
        _report(
            ctx,
            record.node,
            f"{scheduler}() schedules a non-idempotent call again after a timeout: a "
            f"timed-out callee still holds the request; gate it on is_resendable "
            f"{_IF_IDEMPOTENT}",
            record.symbol,
        )


def check(ctx: FileContext) -> None:
    _retry_loops(ctx)
    _tenacity(ctx)
    _tenacity_loops(ctx)
    _helpers(ctx)
    _gates(ctx)
    _scheduled(ctx)


VALID: tuple[str, ...] = (
    """
def deliver_with_retry(router, d):
    for attempt in range(7):
        try:
            return router.deliver(d)
        except Exception as exc:
            if not is_resendable(exc):
                raise
""",
    # a rejection-only catch
    """
def deliver_with_retry(router, d):
    while True:
        try:
            return router.deliver(d)
        except RejectedError:
            continue
""",
    # an idempotent call may retry on timeouts
    """
def attach_with_retry(hub, d):
    for attempt in range(7):
        try:
            return hub.attach(d)
        except TimeoutError:
            continue
""",
    # a timeout that ends the loop is not a retry
    """
def deliver_once(router, d):
    for attempt in range(3):
        try:
            return router.deliver(d)
        except TimeoutError:
            raise
""",
    """
from tenacity import retry, retry_if_exception

@retry(retry=retry_if_exception(is_resendable))
def send_it(router, d):
    router.send(d)
""",
    # an event-driven retry gated on is_resendable; giving up on a transient failure
    """
class Operation:
    def failed(self, leg, attempt, exc):
        if is_resendable(exc) and attempt < self.retries:
            leg.schedule(retry_delay_ms(attempt), self.deliver, leg, attempt + 1)
            return
        if not is_transient(exc):
            self.router.answer_failure(self.d, classify(exc))
""",
    # @retry on a function named like a non-idempotent call, with conditions that exclude
    # timeouts: a combinator naming them, retry_any/| of conditions that never admit one
    """
from tenacity import retry, retry_any, retry_if_exception_type, retry_if_not_exception_type
from tenacity import retry_if_result

class Link:
    @retry(retry=retry_if_not_exception_type((TimeoutError, RejectedError)))
    def deliver(self, d):
        self.write(d)

    @retry(retry=retry_any(retry_if_exception_type(RejectedError), retry_if_result(empty)))
    def post(self, d):
        self.write(d)

    @retry(retry=retry_if_exception_type(RejectedError) | retry_if_result(empty))
    def send(self, d):
        self.write(d)

    @retry
    def attach(self, d):
        self.write(d)
""",
    # an event-loop retry after a failure that is not a timeout
    """
import asyncio

class Router:
    async def deliver(self, d):
        try:
            await self.link.write(d)
        except RejectedError:
            self.loop.call_later(1.0, self.deliver, d)
""",
    # the same TaskGroup batch after a failure that is not a timeout, or a timeout it
    # gives up on: `except*` is read as `except` is
    """
import asyncio

async def deliver_batch(router, batch):
    for attempt in range(3):
        try:
            async with asyncio.TaskGroup() as tg:
                for d in batch:
                    tg.create_task(router.deliver(d))
            return
        except* ValueError:
            log.warning("batch rejected, re-sending")

async def post_batch(hub, batch):
    while True:
        try:
            async with asyncio.TaskGroup() as tg:
                for d in batch:
                    tg.create_task(hub.post(d))
            return
        except* (asyncio.TimeoutError, RejectedError):
            raise
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
def deliver_with_retry(router, d):
    for attempt in range(7):
        try:
            return router.deliver(d)
        except Exception as exc:
            if not is_transient(exc):
                raise
""",
        (5,),
    ),
    (
        """
import asyncio

async def deliver_with_retry(router, d):
    while True:
        try:
            return await router.deliver_message(d)
        except (asyncio.TimeoutError, RejectedError):
            await backoff()
""",
        (7,),
    ),
    (
        """
import tenacity
from tenacity import retry, retry_if_exception_type

@retry(retry=retry_if_exception_type(TimeoutError))
def route(router, d):
    router.route_message(d)

@tenacity.retry
def post_it(hub, d):
    hub.post(d)
""",
        (5, 9),
    ),
    (
        """
from tenacity import Retrying, retry_if_exception_type

def deliver_with_retry(router, d):
    for attempt in Retrying(retry=retry_if_exception_type((TimeoutError, OSError))):
        with attempt:
            router.deliver(d)
""",
        (7,),
    ),
    (
        """
def send_later(router, d):
    return retry_call(lambda: router.send(d), should_retry=is_transient)
""",
        (3,),
    ),
    (
        """
class Operation:
    def failed(self, leg, attempt, exc):
        if is_transient(exc) and attempt < self.retries:
            leg.schedule(retry_delay_ms(attempt), self.deliver, leg, attempt + 1)
            return
        if is_transient(exc):
            self.router.send(self.d)
""",
        (5, 8),
    ),
    (  # the decorated function's own name is the retried call
        """
from tenacity import retry, retry_if_exception_type

class Link:
    @retry(retry=retry_if_exception_type(TimeoutError))
    def deliver(self, d):
        self.write(d)
""",
        (5,),
    ),
    (  # combinators that let a timeout through
        """
import asyncio
from tenacity import retry, retry_any, retry_if_exception_type, retry_if_not_exception_type
from tenacity import retry_if_result

class Link:
    @retry(retry=retry_if_not_exception_type(RejectedError))
    def deliver(self, d):
        self.write(d)

    @retry(retry=retry_any(retry_if_result(empty), retry_if_exception_type(TimeoutError)))
    def post(self, d):
        self.write(d)

    @retry(retry=retry_if_result(empty) | retry_if_exception_type(asyncio.TimeoutError))
    def send(self, d):
        self.write(d)
""",
        (7, 11, 15),
    ),
    (  # event-loop retries scheduled from a timeout handler
        """
import asyncio

class Router:
    async def deliver(self, d, delay):
        try:
            await self.link.write(d)
        except asyncio.TimeoutError:
            self.loop.call_later(delay, self.deliver, d)
        except TimeoutError:
            self.loop.call_at(self.loop.time() + delay, self.deliver, d)

    async def route(self, d):
        try:
            await self.deliver(d)
        except TimeoutError:
            self.loop.create_task(self.deliver(d))
""",
        (9, 11, 17),
    ),
    (  # a batch re-sent through a TaskGroup after an `except*` timeout that only logs
        """
import asyncio

async def deliver_batch(router, batch):
    for attempt in range(3):
        try:
            async with asyncio.TaskGroup() as tg:
                for d in batch:
                    tg.create_task(router.deliver(d))
            return
        except* TimeoutError:
            log.warning("batch timed out, re-sending")
""",
        (9,),
    ),
    (  # `except*` naming a timeout as `except` would: qualified, in a tuple, aliased; and
       # an event-loop retry from an `except*` handler
        """
import asyncio
import asyncio as aio
from asyncio import TimeoutError as Expired

async def post_batch(hub, batch):
    while True:
        try:
            async with asyncio.TaskGroup() as tg:
                for d in batch:
                    tg.create_task(hub.post(d))
            return
        except* asyncio.TimeoutError:
            log.warning("batch timed out, re-sending")

async def send_batch(link, batch):
    for attempt in range(3):
        try:
            async with aio.TaskGroup() as tg:
                tg.create_task(link.send(batch))
        except* (RejectedError, Expired):
            log.warning("batch failed, re-sending")

class Router:
    async def deliver(self, d):
        try:
            await self.link.write(d)
        except* aio.TimeoutError:
            self.loop.call_soon(self.deliver, d)
""",
        (11, 20, 29),
    ),
    (  # tenacity's async iterator, retrying every exception (the file never says "retry")
        """
from tenacity import AsyncRetrying, stop_after_attempt

async def deliver_it(router, d):
    async for attempt in AsyncRetrying(stop=stop_after_attempt(3)):
        with attempt:
            await router.deliver(d)
""",
        (7,),
    ),
    (  # asyncio's create_task by its module's name and by a bare imported one, from a
       # timeout handler
        """
import asyncio
from asyncio import create_task as spawn

class Router:
    async def post(self, d):
        try:
            await asyncio.wait_for(self.link.write(d), 5.0)
        except TimeoutError:
            asyncio.create_task(self.post(d))

    async def send(self, d):
        try:
            await asyncio.wait_for(self.link.write(d), 5.0)
        except asyncio.TimeoutError:
            spawn(self.send(d))
""",
        (10, 16),
    ),
)

RULE = Rule(
    RULE_ID,
    "resend-after-timeout",
    "A non-idempotent call is retried on a predicate that admits timeouts.",
    applies,
    check,
    VALID,
    INVALID,
    prefilter=prefilter,
    options=(NON_IDEMPOTENT_CALLS, TIMEOUT_PREDICATES, TIMEOUT_EXCEPTIONS, IDEMPOTENT_CALLS),
)
