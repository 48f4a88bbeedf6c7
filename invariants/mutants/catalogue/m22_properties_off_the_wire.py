"""M22 properties-off-the-wire: the wire format carries only string-valued properties.

Pre-fix shape (a serialiser that treats envelope properties as string headers):
`"properties": {k: v for k, v in self.properties.items() if isinstance(v, str)}` in place
of `dict(self.properties)` in `Delivery.to_json`. The diagnostic key (a string) survives a
JSON round trip, the answer-suppressed marker (`True`) does not, so a round-tripped
heartbeat whose routing fails is answered. Obligation (INV7): "round-tripped suppressed
deliveries left unanswered"; only a run with the envelope round trip on can see it.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M22",
    slug="properties-off-the-wire",
    shape="the wire format drops non-string envelope properties (the answer marker)",
    path="envelope.py",
    site="Delivery.to_json",
    before="dict(self.properties)",
    after="{k: v for k, v in self.properties.items() if isinstance(v, str)}",
    kills=("INV7",),
    seeds=("answer-once-roundtrip",),
)
