"""n02 (race, INV7): two posts from one node to another, made in one instant, whose first
attempts leave in the other order: the callee takes the later-numbered one first and then
acknowledges the other as a copy without taking it, so it is lost (neither handled nor
answered); only when the schedule runs the second leg's first step before the first's."""

from __future__ import annotations

from _common import OrderChooser, main, of, prove_race
from invariants.adapter import MessageSpec, Route
from invariants.trace import EventKind

from nodemesh.harness_adapter import NodeMeshAdapter, bug_n02, make

REQUEST = MessageSpec("Request")


def scenario(mesh: NodeMeshAdapter) -> list[str]:
    for hub in ("h0", "h1", "h2", "h3"):
        mesh.create_hub(hub)  # h0 and h3 on n1
    mesh.post("client", "h0", REQUEST, route=Route.MONOLITH)  # the link gw -> n1 is up
    mesh.advance(100)
    posts = [mesh.post("client", "h0", REQUEST, route=Route.MONOLITH),
             mesh.post("client", "h3", REQUEST, route=Route.MONOLITH)]
    mesh.run_until_idle(60_000)
    return posts


ENDS = (EventKind.HANDLED, EventKind.HANDLER_FAULTED, EventKind.REJECTED, EventKind.GATED,
        EventKind.SHED, EventKind.ANSWER_SUPPRESSED, EventKind.DISPATCH_REFUSED)


def detect(mesh: NodeMeshAdapter, posts: list[str]) -> str | None:
    for d in posts:
        ended = any(of(mesh, kind, delivery_id=d) for kind in ENDS)
        answered = of(mesh, EventKind.FAILURE_EMITTED, answers=d)
        if not ended and not answered:
            leg = of(mesh, EventKind.LEG_ENDED, delivery_id=d)
            return (f"{d} reached no end (its leg ended "
                    f"{leg[0].reason if leg else 'never'}; never handled, never answered)")
    return None


if __name__ == "__main__":
    main(prove_race("n02", bug_n02, make, scenario, detect,
                    choosers=[OrderChooser(s) for s in range(200)]))
