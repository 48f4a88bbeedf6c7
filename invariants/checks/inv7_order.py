"""INV7's order rule: posts one sender made to one target, on a route the mesh keeps in
order (`ordered_routes`: the reference keeps its direct posts in order, since they join
the target's queue as they are made and its pump takes the oldest first), are handled in
the order the harness posted them. Posts that never ran (dropped, shed, refused) are left
out; the order is of those handled (`HANDLED`, or `HANDLER_FAULTED` for a handler that
raised)."""

from __future__ import annotations

from invariants.checks.harness_facts import Posted
from invariants.checks.params import CheckParams
from invariants.trace import TraceEvent

ORDER = "posts handled in their sender's order"

Pair = tuple[str, str, str]  # (sender, target, and the class where order is per class)


class PostOrder:
    """The harness's posts on ordered routes, numbered per sender and target, and the
    verdict on each one handled."""

    def __init__(self, params: CheckParams) -> None:
        self._routes = params.ordered_routes
        self._across_classes = params.order_across_classes
        self._posted: dict[str, tuple[Pair, int]] = {}  # delivery id -> its pair, its number
        self._counts: dict[Pair, int] = {}
        self._latest: dict[Pair, tuple[int, str]] = {}  # pair -> the highest number handled

    def posted(self, fact: Posted) -> None:
        if fact.route.value not in self._routes:
            return
        kind = "" if self._across_classes else str(fact.message_class)
        pair = (fact.sender, fact.target, kind)
        number = self._counts[pair] = self._counts.get(pair, 0) + 1
        self._posted[fact.delivery_id] = (pair, number)

    def handled(self, event: TraceEvent, did: str) -> tuple[bool, str | None]:
        """(judged against an earlier post of its pair, the violation's text or None)."""
        entry = self._posted.pop(did, None)
        if entry is None or event.hub != entry[0][1]:
            return False, None
        pair, number = entry
        latest = self._latest.get(pair)
        if latest is None or latest[0] < number:
            self._latest[pair] = (number, did)
            return latest is not None, None
        sender, target, kind = pair
        within = f" of class {kind}" if kind else ""
        return True, (f"delivery {did} was handled at {target} after {latest[1]}, which "
                      f"{sender} posted after it: posts{within} of one sender to one target "
                      f"on the {', '.join(sorted(self._routes))} route are handled in the "
                      "order posted (ordered_routes)")
