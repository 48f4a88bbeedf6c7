"""What a `may_answer()` check proves: which deliveries may be answered when a condition
evaluates true or false, following `not`, `and`, `or` and conditional expressions, through
`await` and walrus (`(ok := d.may_answer())`), and inside comprehension filters."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import libcst as cst

from invariants.scan.names import dotted_name, last_part

# delivery (dotted name) -> the guard call that proves it may be answered
Facts = dict[str, cst.Call]


def guard_call(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The expression a test's value comes from: `await x` and `(ok := x)` are worth `x`."""
    while isinstance(expr, (cst.Await, cst.NamedExpr)):
        expr = expr.expression if isinstance(expr, cst.Await) else expr.value
    return expr


def guarded_delivery(expr: cst.BaseExpression, guard_functions: Sequence[str]) -> str | None:
    """`d` for `d.may_answer()`, `may_answer(d)` or `policy.may_answer(delivery=d)` (also
    awaited, or bound by a walrus)."""
    expr = guard_call(expr)
    if not isinstance(expr, cst.Call):
        return None
    func = dotted_name(expr.func)
    if func is None or last_part(func) not in {last_part(g) for g in guard_functions}:
        return None
    for arg in expr.args:
        if arg.keyword is None and arg.star == "":
            return dotted_name(arg.value)
        if arg.keyword is not None and arg.keyword.value == "delivery":
            return dotted_name(arg.value)
    if isinstance(expr.func, cst.Attribute):
        return dotted_name(expr.func.value)
    return None


def _both(left: Facts, right: Facts) -> Facts:
    return {**right, **left}


def _either(left: Facts, right: Facts) -> Facts:
    return {key: node for key, node in left.items() if key in right}


def facts(expr: cst.BaseExpression, outcome: bool, guard_functions: Sequence[str]) -> Facts:
    """Deliveries known answerable when `expr` evaluates to `outcome`."""
    delivery = guarded_delivery(expr, guard_functions)
    if delivery is not None:
        call = guard_call(expr)
        assert isinstance(call, cst.Call)
        return {delivery: call} if outcome else {}
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return facts(expr.expression, not outcome, guard_functions)
    if isinstance(expr, cst.BooleanOperation):
        left_true = facts(expr.left, True, guard_functions)
        left_false = facts(expr.left, False, guard_functions)
        right = facts(expr.right, outcome, guard_functions)
        if isinstance(expr.operator, cst.And):
            # true: both true; false: left false, or left true and right false
            if outcome:
                return _both(left_true, right)
            return _either(left_false, _both(left_true, right))
        # or -- true: left true, or left false and right true; false: both false
        if outcome:
            return _either(left_true, _both(left_false, right))
        return _both(left_false, right)
    if isinstance(expr, cst.IfExp):
        test_true = facts(expr.test, True, guard_functions)
        test_false = facts(expr.test, False, guard_functions)
        body = _both(test_true, facts(expr.body, outcome, guard_functions))
        orelse = _both(test_false, facts(expr.orelse, outcome, guard_functions))
        return _either(body, orelse)
    return {}


def facts_on_the_way(
    ancestors: Sequence[cst.CSTNode], target: cst.CSTNode, guard_functions: Sequence[str]
) -> Facts:
    """Facts that hold when `target` is evaluated inside one expression: the right operand
    of `and`/`or` runs only after the left one, a conditional's branches after its test."""
    known: Facts = {}
    chain = [*ancestors, target]
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, cst.BooleanOperation) and child is parent.right:
            and_op = isinstance(parent.operator, cst.And)
            known = _both(known, facts(parent.left, and_op, guard_functions))
        elif isinstance(parent, cst.IfExp) and child is parent.body:
            known = _both(known, facts(parent.test, True, guard_functions))
        elif isinstance(parent, cst.IfExp) and child is parent.orelse:
            known = _both(known, facts(parent.test, False, guard_functions))
        elif isinstance(parent, _COMPREHENSIONS) and child is not parent.for_in:
            # the element is built only for items every filter let through
            known = _both(known, _filter_facts(parent.for_in, guard_functions))
    return known


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _filter_facts(for_in: cst.CompFor | None, guard_functions: Sequence[str]) -> Facts:
    known: Facts = {}
    while for_in is not None:
        for condition in for_in.ifs:
            known = _both(known, facts(condition.test, True, guard_functions))
        for_in = for_in.inner_for_in
    return known
