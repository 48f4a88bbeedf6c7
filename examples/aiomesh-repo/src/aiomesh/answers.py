"""Failure answers: one DeliveryFailure per delivery, ever, and only where may_answer().

The answer travels back to the sender as a `nack` leg, counted like any routed work, so
the stop waits for it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiomesh.envelope import (
    MESH_IDENTITY,
    NO_ANSWER,
    QUIET,
    DeliveryFailure,
    Envelope,
    Kind,
    RawJson,
)

if TYPE_CHECKING:
    from aiomesh.mesh import Mesh


class Answers:
    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self._answered: set[str] = set()

    def may_answer(self, env: Envelope) -> bool:
        """Whether a failure to deliver `env` may be answered: the stamp first, since a
        packaged payload is RawJson and says nothing of its kind."""
        body, bugs = env.body, self.mesh.bugs
        if "answer-failures" in bugs:
            return True
        if "payload-type-guard" in bugs:
            return not isinstance(body, DeliveryFailure) and getattr(
                body, "kind", Kind.USER) is not Kind.IGNORABLE
        if NO_ANSWER in env.props:
            return False
        return isinstance(body, RawJson) or body.kind not in QUIET

    def report(self, env: Envelope, error: str) -> None:
        mesh, obs = self.mesh, self.mesh.observer
        if not self.may_answer(env):
            obs.answer_suppressed(delivery_id=env.id, hub=env.target,
                                  reason="may_answer_false", packaged=env.packaged,
                                  message_class=getattr(env.body, "kind", None))
            return
        if env.id in self._answered:
            obs.answer_suppressed(delivery_id=env.id, hub=env.target, reason="already_answered")
            return
        if mesh.stopped:
            obs.answer_suppressed(delivery_id=env.id, hub=env.target, reason="silo_stopped")
            return
        self._answered.add(env.id)
        answer = Envelope(mesh.new_id("d"), env.target, env.sender, MESH_IDENTITY,
                          DeliveryFailure(env.id, error))
        obs.failure_emitted(hub=env.target, delivery_id=answer.id, answers=env.id,
                            error=error, sender=env.target, target=env.sender)
        mesh.legs.send_back(answer)
