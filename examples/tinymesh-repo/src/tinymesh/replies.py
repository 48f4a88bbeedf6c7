"""Bounces: a letter that cannot be delivered is answered once, and only if it may be."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinymesh.letters import Bounce, Letter

if TYPE_CHECKING:
    from tinymesh.mesh import TinyMesh

MESH_CALLER = "tinymesh"  # the identity the mesh's own notices travel under


class Replies:
    def __init__(self, mesh: TinyMesh) -> None:
        self.mesh = mesh
        self._answered: set[str] = set()  # one Bounce per letter id, ever

    def bounce(self, letter: Letter, reason: str) -> None:
        mesh = self.mesh
        now = mesh.clock.now
        if not letter.can_reply():
            mesh.log.write(now, "withheld", letter=letter.id, box=letter.target,
                           why="quiet", kind=_kind(letter), blob=letter.packaged)
            return
        if letter.id in self._answered:
            mesh.log.write(now, "withheld", letter=letter.id, box=letter.target, why="again")
            return
        if mesh.stopped:
            mesh.log.write(now, "withheld", letter=letter.id, box=letter.target, why="stopped")
            return
        self._answered.add(letter.id)
        notice = Letter(mesh.new_id(), letter.target, letter.sender, MESH_CALLER,
                        Bounce(letter.id, reason))
        mesh.log.write(now, "bounced", box=letter.target, letter=notice.id, answers=letter.id,
                       error=reason, sender=letter.target, target=letter.sender)
        mesh.courier.carry(notice, trip="return")


def _kind(letter: Letter) -> object:
    return getattr(letter.body, "kind", None)
