"""MESH002 payload-type-exemption: an answer-policy exemption read off the payload's type.

After packaging, every routed payload is RawJson, so `isinstance(d.message, DeliveryFailure)`
or `type(d.message).can_be_ignored` can never match: the exemption silently does nothing.
Ordinary dispatch on user message types is left alone.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.context import FileContext
from invariants.scan.model import ScanConfig
from invariants.scan.names import dotted_name, last_part
from invariants.scan.options import Names
from invariants.scan.rules.mesh001.keys import GUARD_FUNCTIONS
from invariants.scan.rules.spec import InvalidExample, Rule

RULE_ID = "MESH002"

# Attributes that hold a delivery's payload.
PAYLOAD_ATTRIBUTES = Names("payload_attributes", ("message",))
# Message types an answer policy exempts.
EXEMPTION_TYPES = Names("exemption_types", ("DeliveryFailure",))
# Flags that mark a message as exempt, read off the envelope.
EXEMPTION_ATTRIBUTES = Names("exemption_attributes", ("can_be_ignored", "system_message"))


def message(config: ScanConfig) -> str:
    """In the repository's own words: its exempt types and its guard (MESH001's key)."""
    exempt = "/".join(last_part(name) for name in EXEMPTION_TYPES.of(config))
    guard = "/".join(f"{last_part(name)}()" for name in GUARD_FUNCTIONS.of(config))
    return (f"answer exemption read off the payload's type: after packaging the payload is "
            f"serialized text, not a {exempt}, so this check never matches; call {guard} "
            "on the delivery")
_TYPE_WORDS = ("isinstance", "issubclass", "type(", "__class__")


def applies(ctx: FileContext) -> bool:
    return True  # production and test code alike


def prefilter(ctx: FileContext) -> bool:
    config = ctx.config
    exemptions = (*map(last_part, EXEMPTION_TYPES.of(config)), *EXEMPTION_ATTRIBUTES.of(config))
    return (
        any(word in ctx.text for word in exemptions)
        and any(a in ctx.text for a in PAYLOAD_ATTRIBUTES.of(config))
        and any(word in ctx.text for word in _TYPE_WORDS)
    )


def _is_payload(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value in PAYLOAD_ATTRIBUTES.of(ctx.config)


def _is_payload_type(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`type(x.message)` or `x.message.__class__`."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
        return _is_payload(ctx, expr.value)
    return (
        isinstance(expr, cst.Call)
        and dotted_name(expr.func) == "type"
        and len(expr.args) == 1
        and _is_payload(ctx, expr.args[0].value)
    )


def _names_exemption_type(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return any(_names_exemption_type(ctx, element.value) for element in expr.elements)
    name = ctx.name_of(expr)
    return name is not None and last_part(name) in {
        last_part(t) for t in EXEMPTION_TYPES.of(ctx.config)
    }


def _exemption_use(ctx: FileContext, expr: cst.BaseExpression, parent: cst.CSTNode) -> bool:
    """Is the payload type `expr` used, in `parent`, to decide an answer exemption?"""
    if isinstance(parent, cst.Attribute) and parent.value is expr:
        return parent.attr.value in EXEMPTION_ATTRIBUTES.of(ctx.config)
    if isinstance(parent, cst.Comparison):
        operands = [parent.left, *(target.comparator for target in parent.comparisons)]
        return any(_names_exemption_type(ctx, o) for o in operands if o is not expr)
    return False


def _check_call(ctx: FileContext, call: cst.Call) -> bool:
    func = dotted_name(call.func)
    args = [arg.value for arg in call.args]
    if func == "isinstance" and len(args) == 2:
        return _is_payload(ctx, args[0]) and _names_exemption_type(ctx, args[1])
    if func == "issubclass" and len(args) == 2:
        return _is_payload_type(ctx, args[0]) and _names_exemption_type(ctx, args[1])
    if func in ("getattr", "hasattr") and len(args) >= 2 and _is_payload_type(ctx, args[0]):
        attribute = args[1]
        return isinstance(attribute, cst.SimpleString) and (
            attribute.evaluated_value in EXEMPTION_ATTRIBUTES.of(ctx.config)
        )
    return False


def check(ctx: FileContext) -> None:
    for record in ctx.calls:
        if _check_call(ctx, record.node) or (
            _is_payload_type(ctx, record.node)
            and _exemption_use(ctx, record.node, record.ancestors[-1])
        ):
            ctx.report(RULE_ID, record.node, message(ctx.config), record.symbol)
    for read in ctx.class_reads:
        if _is_payload_type(ctx, read.node) and _exemption_use(ctx, read.node, read.ancestors[-1]):
            ctx.report(RULE_ID, read.node, message(ctx.config), read.symbol)


VALID: tuple[str, ...] = (
    """
def route(d):
    if not d.may_answer():
        return
    answer(d)
""",
    # ordinary dispatch on user message types
    """
def handle(d):
    if isinstance(d.message, OrderPlaced):
        place(d.message)
    if type(d.message) is OrderCancelled:
        cancel(d.message)
""",
    # a type check on something that is not the payload
    """
def handle(error):
    if isinstance(error, DeliveryFailure):
        log(error)
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
def route(d):
    if isinstance(d.message, DeliveryFailure):
        return
    answer(d)
""",
        (3,),
    ),
    (
        """
def route(d):
    if isinstance(d.message, (Heartbeat, DeliveryFailure)):
        return
""",
        (3,),
    ),
    (
        """
def route(d):
    exempt = type(d.message) is DeliveryFailure
    ignorable = getattr(type(d.message), "can_be_ignored", False)
    system = d.message.__class__.system_message
""",
        (3, 4, 5),
    ),
    (
        """
import messages

def route(delivery):
    if type(delivery.message).can_be_ignored or issubclass(
        delivery.message.__class__, messages.DeliveryFailure
    ):
        return
""",
        (5, 5),
    ),
)

RULE = Rule(
    RULE_ID,
    "payload-type-exemption",
    "An answer-policy exemption reads the payload's type, which packaging erases.",
    applies,
    check,
    VALID,
    INVALID,
    prefilter=prefilter,
    options=(PAYLOAD_ATTRIBUTES, EXEMPTION_TYPES, EXEMPTION_ATTRIBUTES,),
)
