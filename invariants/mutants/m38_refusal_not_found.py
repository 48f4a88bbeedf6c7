"""M38 refusal-not-found: a dispatch refused during the stop is answered NotFound.

Pre-fix shape (the stop's refusal left unclassified, seed 001's window before it failed
clean): `self.answer_failure(delivery, ErrorType.NOT_FOUND, local=True)` in place of
`ErrorType.SHUTTING_DOWN` in `Router.dispatch`, so a post to a hub that exists, made once
the stop has begun, is answered as if its target did not exist (the DISPATCH_REFUSED record
still says ShuttingDown): the sender takes a live hub for a missing one. Obligation (INV7):
"live targets never answered NotFound".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_SHUTTING_DOWN = m.Attribute(value=m.Name("ErrorType"), attr=m.Name("SHUTTING_DOWN"))
_ANSWER = m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name("answer_failure")))


class RefusalNotFound(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("dispatch")))
    @m.call_if_inside(_ANSWER)
    @m.leave(_SHUTTING_DOWN)
    def not_found(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        self.hit()
        return updated_node.with_changes(attr=cst.Name("NOT_FOUND"))


MUTANT = Mutant(
    id="M38",
    slug="refusal-not-found",
    shape="a dispatch refused during the stop is answered NotFound, not ShuttingDown",
    path="routing.py",
    site="Router.dispatch",
    target="self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, local=True)",
    kills=("INV7",),
    writes="self.answer_failure(delivery, ErrorType.NOT_FOUND, local=True)",
    removes="self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, local=True)",
    seeds=("refused-live-hub",),
    codemod=RefusalNotFound,
)
