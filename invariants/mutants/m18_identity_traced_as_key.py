"""M18 identity-traced-as-key: an enqueued delivery's POSTED reports the sender's identity
as its payload identity.

Pre-fix shape (a self-report lie, seed 004 / #1200): the ENQUEUED record of `Hub.offer`
carries `delivery.identity` (who posted it) in place of `delivery.diagnostic_key` (what it
is about). The breaker still counts the true key, so nothing is dropped; the trace says a
fan-out of many identities is one key. Obligation (INV6): the payload identity of a post is
the one the harness gave it, and a POSTED that reports another is a violation naming both.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_KEY = m.Attribute(value=m.Name("delivery"), attr=m.Name("diagnostic_key"))


class IdentityTracedAsKey(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("offer")))
    @m.leave(_KEY)
    def trace_identity(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        self.hit()
        return updated_node.with_changes(attr=cst.Name("identity"))


MUTANT = Mutant(
    id="M18",
    slug="identity-traced-as-key",
    shape="an enqueued post is traced with its sender identity as payload identity",
    path="hub.py",
    site="Hub.offer",
    target="delivery.diagnostic_key (the ENQUEUED record)",
    kills=("INV6",),
    writes="delivery.target, delivery.message_type, message_class, delivery.identity,",
    removes="delivery.diagnostic_key,",
    seeds=("fanout",),
    codemod=IdentityTracedAsKey,
)
