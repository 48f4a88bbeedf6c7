"""M22 properties-off-the-wire: the wire format carries only string-valued properties.

Pre-fix shape (a serialiser that treats envelope properties as string headers):
`"properties": {k: v for k, v in self.properties.items() if isinstance(v, str)}` in place
of `dict(self.properties)` in `Delivery.to_json`. The diagnostic key (a string) survives a
JSON round trip, the answer-suppressed marker (`True`) does not, so a round-tripped
heartbeat whose routing fails is answered. Obligation (INV7): "round-tripped suppressed
deliveries left unanswered"; only a run with the envelope round trip on can see it.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_COPY = m.Call(
    func=m.Name("dict"),
    args=[m.Arg(m.Attribute(value=m.Name("self"), attr=m.Name("properties")))],
)


class PropertiesOffTheWire(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("to_json")))
    @m.leave(_COPY)
    def strings_only(
        self, original_node: cst.Call, updated_node: cst.Call
    ) -> cst.BaseExpression:
        self.hit()
        return cst.parse_expression(
            "{k: v for k, v in self.properties.items() if isinstance(v, str)}"
        )


MUTANT = Mutant(
    id="M22",
    slug="properties-off-the-wire",
    shape="the wire format drops non-string envelope properties (the answer marker)",
    path="envelope.py",
    site="Delivery.to_json",
    target='"properties": dict(self.properties)',
    kills=("INV7",),
    writes="if isinstance(v, str)}",
    removes='"properties": dict(self.properties)',
    seeds=("answer-once-roundtrip",),
    codemod=PropertiesOffTheWire,
)
