"""MESH003 resend-after-timeout: a non-idempotent call retried on a timeout.

A timeout means the callee accepted the request and has not answered: re-sending it runs
the handler twice. Retries of non-idempotent calls must be gated on a predicate that
excludes timeouts (`is_resendable`). Four shapes are recognised: a loop around a `try`
whose handler catches a timeout or consults a timeout-admitting predicate; a tenacity
`@retry` that admits timeouts (explicitly, or by retrying every exception); a retry
helper handed both the call and a timeout-admitting predicate; and an event-driven retry,
an `if` on a timeout-admitting predicate whose true branch calls the non-idempotent call
again or hands it to a scheduler as a callback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import libcst as cst

from invariants.scan.context import CallRecord, FileContext, symbol_of
from invariants.scan.names import child_blocks, last_part, matches_suffix, suite_body
from invariants.scan.options import Names
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH003"

NON_IDEMPOTENT_CALLS = Names(
    "non_idempotent_calls",
    ("deliver", "deliver_message", "route_message", "post", "send"),
    "calls that must not run twice (matched on the last dotted component)",
)
TIMEOUT_PREDICATES = Names(
    "timeout_predicates",
    ("is_transient", "is_transient_failure"),
    "predicates that admit a timeout",
)
TIMEOUT_EXCEPTIONS = Names(
    "timeout_exceptions",
    ("TimeoutError", "asyncio.TimeoutError"),
    "exception types that mean a timeout",
)


def applies(ctx: FileContext) -> bool:
    config = ctx.config
    names = "|".join(re.escape(last_part(name)) for name in NON_IDEMPOTENT_CALLS.of(config))
    if not names or re.search(rf"\b(?:{names})\s*\(", ctx.text) is None:
        return False
    exceptions = map(last_part, TIMEOUT_EXCEPTIONS.of(config))
    triggers = (*TIMEOUT_PREDICATES.of(config), *exceptions, "retry")
    return any(word in ctx.text for word in triggers)


def _is_non_idempotent(ctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else ctx.name_of(func)
    return name is not None and last_part(name) in NON_IDEMPOTENT_CALLS.of(ctx.config)


def _is_predicate(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    name = ctx.name_of(expr)
    return name is not None and last_part(name) in TIMEOUT_PREDICATES.of(ctx.config)


def _names_timeout(ctx: FileContext, expr: cst.BaseExpression | None) -> bool:
    if expr is None:
        return False
    if isinstance(expr, cst.Tuple):
        return any(_names_timeout(ctx, element.value) for element in expr.elements)
    name = ctx.name_of(expr)
    return name is not None and matches_suffix(name, TIMEOUT_EXCEPTIONS.of(ctx.config))


def _inside(record: CallRecord, node: cst.CSTNode) -> bool:
    return any(ancestor is node for ancestor in record.ancestors)


def _ends_the_loop(body: cst.BaseSuite) -> bool:
    statements = suite_body(body)
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[-1], (cst.Raise, cst.Return, cst.Break)
    )


def _tries_in(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.Try]:
    """Try statements in a loop body, not descending into nested defs."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.Try):
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
                        ctx.report(
                            RULE_ID,
                            record.node,
                            f"{_call_name(record.node)}() is re-sent after {why}: a timed-out "
                            "callee still holds the request; gate the retry on is_resendable",
                            record.symbol,
                        )
                    break


def _call_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else "call"


# tenacity's decorator and its iterator forms (`for attempt in Retrying(...)`)
_TENACITY_RETRIERS = frozenset({"retry", "Retrying", "AsyncRetrying"})


def _retry_admits_timeouts(ctx: FileContext, decorator: cst.BaseExpression) -> bool:
    """A tenacity `@retry` whose retry condition lets a timeout through."""
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
    if condition is None:
        return True
    for record in ctx.calls:
        if record.node is not condition and not _inside(record, condition):
            continue
        called = ctx.name_of(record.node.func) or ""
        args = [arg.value for arg in record.node.args]
        if last_part(called) == "retry_if_exception_type" and (
            not args or any(_names_timeout(ctx, a) for a in args)
        ):
            return True
        if last_part(called) == "retry_if_exception" and any(_is_predicate(ctx, a) for a in args):
            return True
    return False


def _tenacity(ctx: FileContext) -> None:
    # The first non-idempotent call of each function: the function is what @retry repeats.
    sending: dict[int, CallRecord] = {}
    for record in ctx.calls:
        function = record.function
        if function is None or id(function) in sending:
            continue
        if _is_non_idempotent(ctx, record.node):
            sending[id(function)] = record
    for record in sending.values():
        function = record.function
        assert function is not None
        symbol = symbol_of(record.ancestors[: record.ancestors.index(function) + 1])
        for decorator in function.decorators:
            if _retry_admits_timeouts(ctx, decorator.decorator):
                ctx.report(
                    RULE_ID,
                    decorator.decorator,
                    f"@retry on {function.name.value}() admits timeouts and it makes a "
                    "non-idempotent call: a timed-out callee still holds the request",
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
            named = ctx.name_of(arg)
            names = NON_IDEMPOTENT_CALLS.of(ctx.config)
            if sends or (named is not None and last_part(named) in names):
                ctx.report(
                    RULE_ID,
                    record.node,
                    "a non-idempotent call is retried under a timeout-admitting predicate: "
                    "use is_resendable",
                    record.symbol,
                )
                break


def _sends(ctx: FileContext, call: cst.Call) -> bool:
    """The call makes a non-idempotent call, or hands one over as a callback."""
    if _is_non_idempotent(ctx, call):
        return True
    for arg in call.args:
        named = ctx.name_of(arg.value)
        if named is not None and last_part(named) in NON_IDEMPOTENT_CALLS.of(ctx.config):
            return True
    return False


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
                ctx.report(
                    RULE_ID,
                    sent.node,
                    "a non-idempotent call is re-sent behind a timeout-admitting gate: a "
                    "timed-out callee still holds the request; gate the retry on is_resendable",
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
                ctx.report(
                    RULE_ID,
                    record.node,
                    f"{_call_name(record.node)}() is re-sent by a tenacity loop that admits "
                    "timeouts: a timed-out callee still holds the request",
                    record.symbol,
                )


def check(ctx: FileContext) -> None:
    _retry_loops(ctx)
    _tenacity(ctx)
    _tenacity_loops(ctx)
    _helpers(ctx)
    _gates(ctx)


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
)

RULE = Rule(
    RULE_ID,
    "resend-after-timeout",
    "A non-idempotent call is retried on a predicate that admits timeouts.",
    applies,
    check,
    VALID,
    INVALID,
    options=(NON_IDEMPOTENT_CALLS, TIMEOUT_PREDICATES, TIMEOUT_EXCEPTIONS,),
)
