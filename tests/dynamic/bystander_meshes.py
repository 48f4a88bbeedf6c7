"""A mesh whose bug only another invariant's plan drives, for the bystander tests.

`RaisesOnFanOut` is the reference mesh, except that the handler of one fan-out payload
(`node/3`) raises though the harness posted an ordinary one: INV7 flags the raise
("handlers raised only where the harness asked"), but INV7's plan and seed programs
never fan out; INV6's plan fans out in every run, but INV6 does not judge raises.
"""

from __future__ import annotations

from dataclasses import replace

from invariants.adapter import MessageSpec, Route
from reference_impl.adapter import ReferenceAdapter

RAISING_KEY = "node/3"  # the fourth payload identity of every fan-out


class RaisesOnFanOut(ReferenceAdapter):
    def post(self, sender: str, target: str, message: MessageSpec, *,
             identity: str | None = "user", route: Route = Route.MONOLITH) -> str:
        if message.diagnostic_key == RAISING_KEY:
            message = replace(message, handler_raises=True)  # the mesh's fault, not asked
        return super().post(sender, target, message, identity=identity, route=route)
