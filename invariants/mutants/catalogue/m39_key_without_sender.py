"""M39 key-without-sender: the breaker key leaves the sender out.

Pre-fix shape (a key of what is said, not of who says it): `breaker_key` returns (target,
message type, payload identity), and (target, message type) without an identity, so
several senders talking to one target about one thing share one count: each is well within
the threshold, and together they trip a key none of them stormed, dropping a sender that
posted once. Obligation (INV6): "senders on one key counted apart".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod, Rewrite

_SENDER = m.Element(value=m.Attribute(value=m.Name("delivery"), attr=m.Name("sender")))
_KEYED_BY_SENDER = m.Return(value=m.Tuple(elements=[_SENDER, m.ZeroOrMore()]))


class KeyWithoutSender(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("breaker_key")))
    @m.leave(_KEYED_BY_SENDER)
    def drop_sender(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.Tuple)  # guaranteed by the matcher
        return updated_node.with_changes(value=value.with_changes(elements=value.elements[1:]))


MUTANT = Rewrite(
    id="M39",
    slug="key-without-sender",
    shape="breaker key leaves the sender out: senders on one target, type and identity share "
    "a count",
    path="breaker.py",
    site="breaker_key",
    target="return (delivery.sender, delivery.target, delivery.message_type, identity)",
    kills=("INV6",),
    expected_hits=2,
    writes="return (delivery.target, delivery.message_type, identity)",
    removes="return (delivery.sender, delivery.target, delivery.message_type, identity)",
    seeds=("storm",),
    codemod=KeyWithoutSender,
)
