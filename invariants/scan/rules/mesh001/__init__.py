"""MESH001 unguarded-failure-emit: a DeliveryFailure construction must run only where a
`may_answer()` check on the delivery it answers came out true.

The rule's parts, all in this package: `emits` records every emit site with its guard
status (control-flow dominance: `cfg`, `guards`); `callsites` records who calls what
(`textscan`, `targets`); `tree` is the whole-tree pass, which clears an unguarded site
whose every caller is guarded (`callgraph`, `resolve`) and checks `expected_emit_sites`.
"""

from __future__ import annotations

from invariants.scan.rules.mesh001.callsites import collect_call_sites, reads_tree
from invariants.scan.rules.mesh001.emits import RULE_ID, applies, check, prefilter
from invariants.scan.rules.mesh001.keys import OPTIONS
from invariants.scan.rules.mesh001.tree import tree_pass
from invariants.scan.rules.spec import InvalidExample, Rule

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
    # the reference's own keyword names the delivery answered
    """
def report(d, error):
    if not d.may_answer():
        return
    d.reply(DeliveryFailure(answers=d.id, error=error))
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
    # a walrus test, alone, inside an `and`, and negated with an early return
    """
def report(d, error, enabled):
    if (ok := d.may_answer()):
        d.reply(DeliveryFailure(d, error))
    if enabled and (ok2 := d.may_answer()):
        d.reply(DeliveryFailure(d, error))
    if not (x := d.may_answer()):
        return
    d.reply(DeliveryFailure(d, error))
""",
    # an early return inside a try with a finally: the finally does not fall through
    """
def report(d, error):
    try:
        if not d.may_answer():
            return
    finally:
        log("checked")
    d.reply(DeliveryFailure(d, error))
""",
    # a check kept in a variable bound once
    """
def report(d, error):
    ok = d.may_answer()
    if ok:
        d.reply(DeliveryFailure(d, error))
""",
    # a check in a comprehension filter
    """
def report_all(deliveries, error):
    return [DeliveryFailure(d, error) for d in deliveries if d.may_answer()]
""",
    # an awaited check
    """
async def report(d, error):
    if not await d.may_answer():
        return
    await d.reply(DeliveryFailure(d, error))
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
    (  # guard on another delivery, the answered one named by keyword
        """
def report(d, other, error):
    if other.may_answer():
        d.reply(DeliveryFailure(error=error, answers=d.id))
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
    (  # a walrus test does not guard through `or`, nor with the wrong polarity
        """
def report(d, error, force):
    if (ok := d.may_answer()) or force:
        d.reply(DeliveryFailure(d, error))
    if (x := d.may_answer()):
        return
    d.reply(DeliveryFailure(d, error))
""",
        (4, 7),
    ),
    (  # the finally runs on the early return too: a check in the try does not guard it
        """
def report(d, error):
    try:
        if not d.may_answer():
            return
    finally:
        d.reply(DeliveryFailure(d, error))
""",
        (7,),
    ),
    (  # a check kept in a variable that is bound again
        """
def report(d, error, force):
    ok = d.may_answer()
    ok = ok or force
    if ok:
        d.reply(DeliveryFailure(d, error))
""",
        (6,),
    ),
    (  # a comprehension filter on another delivery, or negated
        """
def report_all(deliveries, other, error):
    first = [DeliveryFailure(d, error) for d in deliveries if other.may_answer()]
    return first + [DeliveryFailure(d, error) for d in deliveries if not d.may_answer()]
""",
        (3, 4),
    ),
    (  # an awaited check with the wrong polarity
        """
async def report(d, error):
    if await d.may_answer():
        return
    await d.reply(DeliveryFailure(d, error))
""",
        (5,),
    ),
)

RULE = Rule(
    RULE_ID,
    "unguarded-failure-emit",
    "A DeliveryFailure is constructed without a dominating may_answer() guard.",
    applies,
    check,
    VALID,
    INVALID,
    options=OPTIONS,
    prefilter=prefilter,
    collect=collect_call_sites,
    collect_reads_tree=reads_tree,
    tree_pass=tree_pass,
)
