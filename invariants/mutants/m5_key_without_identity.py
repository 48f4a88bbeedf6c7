"""M5 key-without-identity: the breaker key drops the payload identity.

Pre-fix shape (#1200): `breaker_key` returns (sender, target, message type) even when the
payload has an identity, so a wide legitimate fan-out counts as one key and is dropped.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_FOUR_TUPLE = m.Return(value=m.Tuple(elements=[m.DoNotCare()] * 4))


class KeyWithoutIdentity(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("breaker_key")))
    @m.leave(_FOUR_TUPLE)
    def drop_identity(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.Tuple)  # guaranteed by the matcher
        routing_tuple = [element.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                         for element in value.elements[:3]]
        return updated_node.with_changes(value=value.with_changes(elements=routing_tuple))


MUTANT = Mutant(
    id="M5",
    slug="key-without-identity",
    shape="breaker key drops the payload identity",
    path="breaker.py",
    site="breaker_key",
    target="return (delivery.sender, delivery.target, delivery.message_type, identity)",
    kills=("INV6",),
    writes="return (delivery.sender, delivery.target, delivery.message_type)",
    removes="return (delivery.sender, delivery.target, delivery.message_type, identity)",
    seeds=("fanout",),
    codemod=KeyWithoutIdentity,
)
