"""MESH001 unguarded-failure-emit: a DeliveryFailure construction must run only where a
`may_answer()` check on the delivery it answers came out true.

Per file this records every emit site with its guard status (dominance in the function's
control-flow graph, plus `and`/`or`/conditional-expression guards inside one statement);
the findings come from the tree-level pass (`callgraph`), which may still clear an
unguarded site whose every caller is guarded.
"""

from __future__ import annotations

import itertools

import libcst as cst

from invariants.scan.context import CallRecord, FileContext
from invariants.scan.guards import facts_on_the_way
from invariants.scan.names import dotted_name, last_part, matches_last
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH001"


def applies(ctx: FileContext) -> bool:
    # Tests build failures to feed a mesh; emit sites are a property of production code.
    return not ctx.is_test and any(
        last_part(name) in ctx.text for name in ctx.config.emit_constructors
    )


def answered_delivery(call: cst.Call) -> str | None:
    """The delivery a failure answers: first positional argument or `delivery=`."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "delivery":
            return dotted_name(arg.value)
    for arg in call.args:
        if arg.keyword is None and arg.star == "":
            return dotted_name(arg.value)
    return None


def guards_at(ctx: FileContext, record: CallRecord) -> dict[str, cst.Call]:
    """Deliveries proved answerable wherever `record` runs (empty outside functions)."""
    function = record.function
    statement = record.statement
    known: dict[str, cst.Call] = {}
    if statement is not None:
        inside = record.ancestors[record.ancestors.index(statement) + 1 :]
        known.update(facts_on_the_way(inside, record.node, ctx.config.guard_functions))
    if function is None or statement is None:
        return known
    cfg = ctx.cfg(function)
    node = cfg.node_of.get(id(statement))
    if node is None:  # a decorator or default argument: runs outside the function body
        return known
    known = {**(cfg.dominating_facts(node) or {}), **known}
    # A closure runs only after its `def` has: what guards the def guards its body.
    nested = [n for n in record.ancestors if isinstance(n, cst.FunctionDef)]
    for inner, outer in itertools.pairwise(reversed(nested)):
        definition = ctx.cfg(outer).node_of.get(id(inner))
        if definition is None:
            break
        known = {**(ctx.cfg(outer).dominating_facts(definition) or {}), **known}
    return known


def check(ctx: FileContext) -> None:
    constructors = ctx.config.emit_constructors
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is None or not matches_last(name, constructors):
            continue
        delivery = answered_delivery(record.node)
        guard = guard_covering(delivery, guards_at(ctx, record)) if delivery is not None else None
        ctx.emit_site(record.node, record.symbol, guard)


def guard_covering(delivery: str, guards: dict[str, cst.Call]) -> cst.Call | None:
    """The check on `d` also covers a failure built from `d.id` (the id it answers)."""
    name = delivery
    while name not in guards:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return guards[name]


VALID: tuple[str, ...] = (
    # the true branch of the check
    """
def report(d, error):
    if d.may_answer():
        d.reply(DeliveryFailure(d, error))
""",
    # an early return guards what follows
    """
def report(d, error):
    if not d.may_answer():
        return
    d.reply(DeliveryFailure(d, error))
""",
    # the failure is built from the id of the delivery it answers
    """
def report(d, error):
    if not d.may_answer():
        return
    d.reply(DeliveryFailure(d.id, error))
""",
    # early raise, function form of the guard
    """
def report(d, error):
    if not may_answer(d):
        raise Ignored()
    return DeliveryFailure(delivery=d, error=error)
""",
    # `and` short-circuit: the true edge passes through the check
    """
def report(d, error, enabled):
    if d.may_answer() and enabled:
        d.reply(DeliveryFailure(d, error))
""",
    # negated conjunction with early return
    """
def report(d, error, enabled):
    if not (d.may_answer() and enabled):
        return None
    return DeliveryFailure(d, error)
""",
    # conditional expression and `and` inside one statement
    """
def report(d, error):
    answer = DeliveryFailure(d, error) if d.may_answer() else None
    return d.may_answer() and DeliveryFailure(d, error)
""",
    # assert
    """
def report(d, error):
    assert d.may_answer()
    return DeliveryFailure(d, error)
""",
    # attribute delivery, try/finally after the guard
    """
class Router:
    def fail(self, error):
        if not self.delivery.may_answer():
            return
        try:
            self.send(error)
        finally:
            self.post(DeliveryFailure(self.delivery, error))
""",
    # elif chain: the emit sits in the branch the check guards
    """
def report(d, error, kind):
    if kind == "ignored":
        return
    elif d.may_answer():
        d.reply(DeliveryFailure(d, error))
    else:
        log(error)
""",
    # match case guard
    """
def report(d, error):
    match error:
        case NotFound() if d.may_answer():
            d.reply(DeliveryFailure(d, error))
        case _:
            pass
""",
    # unguarded helper, but its only caller is guarded
    """
def _nack(d, error):
    return DeliveryFailure(d, error)

def report(d, error):
    if d.may_answer():
        d.reply(_nack(d, error))
""",
    # a closure defined under the guard
    """
def report(d, error, schedule):
    if not d.may_answer():
        return

    def later():
        d.reply(DeliveryFailure(d, error))

    schedule(later)
""",
    # loop: the guard is checked on every iteration before the emit
    """
def report_all(deliveries, error):
    for d in deliveries:
        if not d.may_answer():
            continue
        d.reply(DeliveryFailure(d, error))
""",
    # a method and a free function of one name are two functions: the unguarded call
    # reaches the free one, the method's only caller is guarded
    """
def nack(d, error):
    return None

class Router:
    def nack(self, d, error):
        return DeliveryFailure(d, error)

    def route(self, d, error):
        if d.may_answer():
            self.nack(d, error)

def sweep(d):
    nack(d, "late")
""",
    # an inherited method, reached through self under the guard
    """
class Base:
    def nack(self, d, error):
        return DeliveryFailure(d, error)

class Router(Base):
    def route(self, d, error):
        if not d.may_answer():
            return
        self.nack(d, error)
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
def report(d, error):
    return DeliveryFailure(d, error)
""",
        (3,),
    ),
    (  # `or` lets the emit run without the check being true
        """
def report(d, error, force):
    if d.may_answer() or force:
        d.reply(DeliveryFailure(d, error))
""",
        (4,),
    ),
    (  # a bare check decides nothing
        """
def report(d, error):
    d.may_answer()
    d.reply(DeliveryFailure(d, error))
""",
        (4,),
    ),
    (  # guard on another delivery
        """
def report(d, other, error):
    if other.may_answer():
        d.reply(DeliveryFailure(d, error))
""",
        (4,),
    ),
    (  # guard on another delivery, the failure built from an id
        """
def report(d, other, error):
    if other.may_answer():
        d.reply(DeliveryFailure(d.id, error))
""",
        (4,),
    ),
    (  # aliased import and attribute form
        """
import messages
from messages import DeliveryFailure as DF

def report(d, error):
    d.reply(DF(d, error))
    d.reply(messages.DeliveryFailure(d, error))
""",
        (6, 7),
    ),
    (  # module level
        """
FALLBACK = DeliveryFailure(None, "boot")
""",
        (2,),
    ),
    (  # elif: the guarded branch is another one
        """
def report(d, error, kind):
    if d.may_answer():
        log(error)
    elif kind:
        d.reply(DeliveryFailure(d, error))
""",
        (6,),
    ),
    (  # a guard inside the try body does not reach the handler
        """
def report(d, error):
    try:
        if not d.may_answer():
            return
        d.reply(error)
    except OSError:
        d.reply(DeliveryFailure(d, error))
""",
        (8,),
    ),
    (  # a loop may run zero times
        """
def report(d, error, items):
    for item in items:
        if not d.may_answer():
            return
    d.reply(DeliveryFailure(d, error))
""",
        (6,),
    ),
    (  # one guarded caller, one unguarded
        """
def _nack(d, error):
    return DeliveryFailure(d, error)

def route(d, error):
    if d.may_answer():
        d.reply(_nack(d, error))

def drop(d, error):
    d.reply(_nack(d, error))
""",
        (3,),
    ),
    (  # a closure defined before the guard
        """
def report(d, error, schedule):
    def later():
        d.reply(DeliveryFailure(d, error))

    if d.may_answer():
        schedule(lambda: None)
    schedule(later)
""",
        (4,),
    ),
    (  # match: the guard covers one case only
        """
def report(d, error):
    match error:
        case NotFound():
            if not d.may_answer():
                return
        case _:
            pass
    d.reply(DeliveryFailure(d, error))
""",
        (9,),
    ),
    (  # a guarded call of a method of the same name does not vouch for a free function
        """
def nack(d, error):
    return DeliveryFailure(d, error)

class Router:
    def nack(self, d, error):
        return d.reply(error)

    def route(self, d, error):
        if d.may_answer():
            self.nack(d, error)
""",
        (3,),
    ),
    (  # self.nack() in a base class may run a subclass's override
        """
class Base:
    def nack(self, d, error):
        return None

    def route(self, d, error):
        self.nack(d, error)

class Loud(Base):
    def nack(self, d, error):
        return DeliveryFailure(d, error)
""",
        (11,),
    ),
    (  # a call on a receiver not known statically may reach every method of that name
        """
class Hub:
    def nack(self, d, error):
        return DeliveryFailure(d, error)

    def fail(self, d, error):
        if d.may_answer():
            self.nack(d, error)

def sweep(hubs, d):
    for hub in hubs:
        hub.nack(d, 0)
""",
        (4,),
    ),
    (  # a call inside an f-string is a call
        """
def nack(d, error):
    return DeliveryFailure(d, error)

def route(d, error):
    if d.may_answer():
        nack(d, error)

def sweep(d):
    log(f"late: {nack(d, 0)}")
""",
        (3,),
    ),
)

RULE = Rule(RULE_ID, applies, check, VALID, INVALID)
