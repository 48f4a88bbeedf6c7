"""M32 answer-without-identity: a NACK carries no identity, and its sender's guard drops it.

Pre-fix shape (the answer's access context left out): `identity=None` for
`identity=NACK_IDENTITY` in `AnswerLedger.send`, so the DeliveryFailure reaches the
sender's hub and the identity guard rejects it there like any anonymous post; the sender
never learns its delivery failed. Obligation (INV7): "answers accepted by their sender".
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_NACK_IDENTITY = m.Arg(keyword=m.Name("identity"), value=m.Name("NACK_IDENTITY"))


class AnswerWithoutIdentity(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("send")))
    @m.leave(_NACK_IDENTITY)
    def no_identity(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        self.hit()
        return updated_node.with_changes(value=cst.Name("None"))


MUTANT = Mutant(
    id="M32",
    slug="answer-without-identity",
    shape="a NACK carries no identity: the sender's guard rejects it",
    path="answers.py",
    site="AnswerLedger.send",
    target="identity=NACK_IDENTITY",
    kills=("INV7",),
    writes="identity=None)",
    removes="identity=NACK_IDENTITY)",
    seeds=("answer-lands",),
    codemod=AnswerWithoutIdentity,
)
