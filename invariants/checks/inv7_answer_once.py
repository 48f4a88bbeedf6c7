"""INV7: one answer per request, read off the envelope (seed 004, issue #1485).

A delivery whose routing fails is answered at most once: never if it is a can-be-ignored,
lifecycle or failure payload, packaged or not, exactly once otherwise. Every delivery the
harness posted reaches an end and is handled where it was posted, and an answer to it lands
at its sender and is accepted there. An answer saying its target does not exist (NotFound)
comes only for a target that is missing: one the harness never saw created, or removed; a
hub that exists, the stop under way or not, is never answered NotFound.

Obligations (docs/dynamic-invariants.md, INV7): "suppressed deliveries left unanswered",
"packaged suppressed deliveries left unanswered", "ordinary failed deliveries answered
once", "round-tripped suppressed deliveries left unanswered", "posted deliveries accounted
for", "deliveries handled where posted", "answers landed at their sender", "answers
accepted by their sender", "live targets never answered NotFound", "deliveries behind a
raising handler handled", "handlers raised only where the harness asked", "ShuttingDown
only once a stop was asked", "posts handled in their sender's order" (`inv7_order`).
"""

from __future__ import annotations

from types import MappingProxyType

from invariants.adapter import Capability, FaultKind
from invariants.checks.harness_facts import HarnessFact, Injected, Posted, StopAsked, Subscribed
from invariants.checks.inv7_order import ORDER, PostOrder
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

# Events that say a delivery's routing failed, so report_failure must decide on an answer.
_ROUTING_FAILED = frozenset({EventKind.DISPATCH_REFUSED, EventKind.ANSWER_SUPPRESSED})


def _failed_leg(event: TraceEvent) -> bool:
    """A route leg that ended in failure (`reason` "failed", or an `error` stated)."""
    return event.leg_kind != "nack" and (event.reason == "failed" or event.error is not None)


SUPPRESSED = "suppressed deliveries left unanswered"
# The #1485 shape: the guard must read the envelope, not the payload (RawJson once packaged).
PACKAGED = "packaged suppressed deliveries left unanswered"
ANSWERED = "ordinary failed deliveries answered once"
ROUNDTRIP = "round-tripped suppressed deliveries left unanswered"
ACCOUNTED = "posted deliveries accounted for"
WHERE_POSTED = "deliveries handled where posted"
LANDED = "answers landed at their sender"
ACCEPTED = "answers accepted by their sender"
# The stop's edge: a hub that exists is never answered as missing, stopping or not.
LIVE_NOT_FOUND = "live targets never answered NotFound"
# A handler that raises is logged and its hub goes on: what was queued behind it is handled.
BEHIND_RAISING = "deliveries behind a raising handler handled"
# The pump logs a handler that raises and goes on, so a bug in the mesh's own handlers (a
# subscription's answer, a failure landing) would pass unseen: only the payloads the harness
# posted to raise may.
ONLY_ASKED = "handlers raised only where the harness asked"
# An answer saying the host is stopping tells its sender to keep recovering: before any stop
# was asked it is a refusal or a missing target misnamed (the converse of LIVE_NOT_FOUND).
STOPPING_ONLY = "ShuttingDown only once a stop was asked"
# The error names that say "no such target" and "the host is stopping" (the reference's and
# the seeds' words).
NOT_FOUND_ERRORS = frozenset({"NotFound"})
SHUTTING_DOWN_ERRORS = frozenset({"ShuttingDown"})

# Events that say a delivery reached a hub (`hub`): received there, queued or handled.
_ARRIVALS = frozenset({EventKind.CALL_RECEIVED, EventKind.ENQUEUED, EventKind.HANDLED})
# Events that end a delivery (`delivery_id`): it ran, or was refused and told so or logged.
_ENDS = frozenset({
    EventKind.HANDLED, EventKind.HANDLER_FAULTED, EventKind.REJECTED, EventKind.GATED,
    EventKind.DROPPED, EventKind.SHED, EventKind.ANSWER_SUPPRESSED, EventKind.DISPATCH_REFUSED,
})


class _FromFacts(Monitor):
    """AnswerOnce's rules on what the harness knows exists, judged from its facts: NotFound
    only for a missing target, ShuttingDown only once a stop was asked, deliveries arriving
    only at live hubs. They read the state AnswerOnce keeps, declared here."""

    _posted: dict[str, TraceEvent]
    _hubs: set[str]
    _requests: dict[str, str]
    _stop_asked: bool

    def _not_found_from_live(self, event: TraceEvent, answered: str) -> None:
        """An answer about a delivery whose target the harness knows (its post, or its
        subscription's request): NotFound only where that target is missing."""
        posted = self.harness.posts.get(answered)
        target = posted.target if posted is not None else self._requests.get(answered)
        if target is None or target not in self._hubs or event.error is None:
            return  # never created, or removed: NotFound is the truth (or no error named)
        if event.error in NOT_FOUND_ERRORS:
            shown = self._posted.get(answered)
            self.flag(f"delivery {answered} to {target}, a hub that exists and was never "
                      f"removed, was answered {event.error}",
                      *((shown, event) if shown is not None else (event,)))
        else:
            self.exercised(LIVE_NOT_FOUND)

    def _arrived(self, event: TraceEvent, did: str) -> None:
        """A harness post received, queued or handled at its target: a hub that exists."""
        posted = self.harness.posts.get(did)
        if posted is None or event.hub != posted.target or not self.harness.missing(posted.target):
            return
        if self.harness.posted_before_removal(did, posted.target):
            return  # posted while the hub was there: in flight, or queued, as it went
        self.flag(f"delivery {did} ({posted.message_type} from {posted.sender}) arrived at "
                  f"{event.hub} ({event.kind.value}), a hub the harness never made or "
                  "removed", event)

    def _stopping_only_when_asked(self, event: TraceEvent, answered: str) -> None:
        """An answer about a delivery the harness knows of (its post, or its subscription's
        request), made before the harness asked for any stop: never ShuttingDown."""
        known = self.harness.posted(answered) is not None or answered in self._requests
        if self._stop_asked or event.error is None or not known:
            return
        if event.error in SHUTTING_DOWN_ERRORS:
            self.flag(f"delivery {answered} was answered {event.error} though no stop was "
                      "asked: its sender is told to keep recovering from a host that is not "
                      "stopping", event)
        else:
            self.exercised(STOPPING_ONLY)


class AnswerOnce(_FromFacts):
    check_id = "INV7"
    title = "one answer per request"
    reads_custom_events = False
    obligations = MappingProxyType({
        SUPPRESSED: "no heartbeat, lifecycle or failure delivery failed routing (posted to "
        "missing targets or a stopping host?)",
        PACKAGED: "no packaged heartbeat, lifecycle or failure delivery failed routing: "
        "none went through a router to a missing target",
        ANSWERED: "no ordinary delivery failed routing and was answered",
        ROUNDTRIP: "no packaged heartbeat, lifecycle or failure delivery posted while the "
        "envelope round trip was on failed routing (is the INV7 machine drawing it?)",
        ACCOUNTED: "no delivery the harness posted reached an end before quiescence (does "
        "the adapter emit HANDLED with the delivery id?)",
        WHERE_POSTED: "no delivery the harness posted was handled (does the adapter emit "
        "HANDLED with the delivery id and the hub?)",
        LANDED: "no answer to a delivery the harness posted was offered to a hub (were any "
        "posted from a sender with a hub, to a missing target?)",
        ACCEPTED: "no answer was offered at its sender's hub",
        LIVE_NOT_FOUND: "no delivery to a hub that exists and was never removed was "
        "answered (none posted once the stop had begun, nor refused until its retries "
        "were spent), or the answers name no error",
        BEHIND_RAISING: "no hub handled a delivery after one whose handler raised (is the "
        "`raising` family on, and does the adapter emit HANDLER_FAULTED?)",
        ONLY_ASKED: "no handler raised where the harness posted a payload whose handler "
        "raises (is the `raising` family on, and does the adapter emit HANDLER_FAULTED "
        "with the delivery id?)",
        STOPPING_ONLY: "no failure was answered before a stop was asked, or the answers "
        "name no error",
        ORDER: "no sender had two posts to one target on an ordered route handled (are the "
        "`user` and `burst` families on, and ordered_routes the routes the mesh keeps in "
        "order?)",
    })

    @classmethod
    def by_policy(cls, params: CheckParams) -> dict[str, str]:
        if not params.ordered_routes:
            return {ORDER: "ordered_routes = []: the mesh promises no sender order on any "
                           "route"}
        return {}

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._posted: dict[str, TraceEvent] = {}  # delivery id -> first POSTED
        self._answers: dict[str, TraceEvent] = {}  # delivery id -> first FAILURE_EMITTED
        self._answer_ids: dict[str, TraceEvent] = {}  # an answer's own id -> its FAILURE_EMITTED
        self._failed: dict[str, TraceEvent] = {}  # ordinary deliveries whose routing failed
        self._rejected: set[str] = set()
        self._suppressed: set[str] = set()  # suppressed-class deliveries whose routing failed
        self._stopped = False  # after the stop completed nothing is routed, nor answered
        # Deliveries the harness posted that have not ended yet -> where they were last seen.
        self._open: dict[str, TraceEvent | None] = {}
        # Answers to harness posts, by the answer's own id -> (the answer, its sender).
        self._owed_to: dict[str, tuple[TraceEvent, str]] = {}
        self._landed: dict[str, TraceEvent] = {}  # answer id -> its POSTED at the sender
        self._hubs: set[str] = set()  # live hubs: where an answer can land
        self._subscribed: dict[str, str] = {}  # subscription id -> the harness's target
        self._requests: dict[str, str] = {}  # a subscription's request id -> its target
        self._raised: dict[str, TraceEvent] = {}  # hub -> its HANDLER_FAULTED not yet gone past
        self._stop_asked = False
        self._order = PostOrder(params)

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, Posted):
            self._order.posted(fact)
            reused = self.harness.reused
            if reused and reused[-1][1] is fact:
                earlier = reused[-1][0]
                # One answer per request needs one id per request: answers to the two
                # could not be told apart (a rebuilt node numbering afresh, say).
                self.flag(f"the mesh gave delivery id {fact.delivery_id} to two posts: "
                          f"{earlier.sender}->{earlier.target} at {earlier.time_ms} ms and "
                          f"{fact.sender}->{fact.target} at {fact.time_ms} ms")
        if isinstance(fact, Posted) and not self._stopped \
                and fact.time_ms >= self.harness.down_until:
            self._open[fact.delivery_id] = None
        elif isinstance(fact, StopAsked):
            self._stop_asked = True
        elif isinstance(fact, Subscribed):
            self._subscribed[fact.subscription_id] = fact.target
        elif isinstance(fact, Injected) and fact.kind is FaultKind.CRASH_NODE:
            # What a crashed node held is lost with it, and the harness does not know which
            # hubs shared it: nothing pending at the crash is owed an end, nor what is
            # posted while it is down (`HarnessFacts.down_until`). (A partition or a hold
            # only delays: what waited arrives once it is healed.)
            self._open.clear()
            self._failed.clear()
            self._owed_to.clear()
        elif isinstance(fact, Injected) and fact.kind is FaultKind.REMOVE_TARGET:
            self._hubs.discard(fact.target)
            # Its queue goes with the hub: what waited there is cut off, not lost.
            for did, seen in list(self._open.items()):
                if seen is not None and seen.kind is EventKind.ENQUEUED and seen.hub == fact.target:
                    del self._open[did]

    def _track(self, event: TraceEvent, did: str | None) -> None:
        """`did`: the delivery the event is about (the answered one, for an answer)."""
        if did is None or did not in self._open:
            return
        kind = event.kind
        if kind in _ENDS or kind is EventKind.FAILURE_EMITTED or (
            kind is EventKind.LEG_ENDED and event.reason == "drained"
        ):
            del self._open[did]
            self.exercised(ACCOUNTED)
        else:
            self._open[did] = event

    def observe(self, event: TraceEvent) -> None:
        kind, did = event.kind, event.delivery_id
        if self._open:
            self._track(event, event.answers if kind is EventKind.FAILURE_EMITTED else did)
        if did is not None and (did in self._owed_to or did in self._landed):
            self._follow_answer(event, did)
        if kind in _ARRIVALS and did is not None:
            self._arrived(event, did)
        if did is not None and (kind is EventKind.HANDLED or kind is EventKind.HANDLER_FAULTED):
            self.judged(ORDER, self._order.handled(event, did), event)
        if kind is EventKind.POSTED and did is not None:
            self._posted.setdefault(did, event)
        elif kind is EventKind.HANDLED and did is not None:
            self._handled_where_posted(event, did)
            if event.hub in self._raised and self._raised[event.hub].delivery_id != did:
                del self._raised[event.hub]
                self.exercised(BEHIND_RAISING)
        elif kind is EventKind.HANDLER_FAULTED and event.hub is not None:
            self._raised[event.hub] = event
            self._asked_to_raise(event, did)
        elif kind is EventKind.REJECTED and did is not None:
            self._rejected.add(did)  # terminal and unanswered: INV1's business
        elif kind is EventKind.FAILURE_EMITTED and event.answers is not None:
            self._observe_answer(event, event.answers)
        elif kind is EventKind.HUB_CREATED and event.hub is not None:
            self._hubs.add(event.hub)
        elif kind is EventKind.SUBSCRIBE_ATTEMPT and did is not None \
                and event.subscription_id in self._subscribed:
            self._requests[did] = self._subscribed[event.subscription_id or ""]
        elif kind is EventKind.STOP_COMPLETED:
            self._stopped = True
            self._open.clear()  # cut off by the stop, not lost
            self._owed_to.clear()
        elif kind in _ROUTING_FAILED or (kind is EventKind.LEG_ENDED and _failed_leg(event)):
            if did is not None and self._node_stopped(event):
                self._failed.pop(did, None)  # refused there before: owed nothing now
                return
            if did is None or did in self._failed or did in self._suppressed or self._stopped:
                return
            cls = self.facts.class_of(did)
            # An unknown class is held to the ordinary rule: the stricter reading.
            if cls is None or not cls.suppresses_answer:
                self._failed[did] = event
                if did in self._answers:  # answered before its leg said it failed
                    self.exercised(ANSWERED)
            elif did not in self._answers:
                self._suppressed.add(did)
                self.exercised(SUPPRESSED)
                if event.packaged or self.facts.packaged(did):
                    self.exercised(PACKAGED)
                    if did in self.harness.roundtripped:
                        self.exercised(ROUNDTRIP)

    def _handled_where_posted(self, event: TraceEvent, did: str) -> None:
        posted = self.harness.posts.get(did)
        if posted is None:
            return
        if event.hub == posted.target:
            self.exercised(WHERE_POSTED)
        else:
            self.flag(f"delivery {did}, posted to {posted.target}, was handled at {event.hub}",
                      event)

    def _asked_to_raise(self, event: TraceEvent, did: str | None) -> None:
        posted = self.harness.posted(did)
        if posted is not None and posted.handler_raises:
            self.exercised(ONLY_ASKED)
            return
        shown = self._posted.get(did or "")
        what = f"{did} ({shown.message_type})" if shown is not None else str(did)
        self.flag(f"the handler of {what} at {event.hub} raised "
                  f"{event.error or 'an exception'}, though the harness posted no payload "
                  "that raises there: a fault of the mesh's own, logged and passed over",
                  *((shown, event) if shown is not None else (event,)))

    def _owe(self, event: TraceEvent, answered: str) -> None:
        """An answer to a harness post: addressed to its sender, and followed to it."""
        posted = self.harness.posts.get(answered)
        if posted is None or event.delivery_id is None or self._stopped:
            return  # after the stop completed nothing is owed (answering is INV7's above)
        if event.target is not None and event.target != posted.sender:
            self.flag(f"the answer to {answered} is addressed to {event.target}, but "
                      f"{posted.sender} sent it", event)
        self._owed_to[event.delivery_id] = (event, posted.sender)

    def _follow_answer(self, event: TraceEvent, answer: str) -> None:
        """Where an answer to a harness post is offered, and whether it is taken in."""
        kind = event.kind
        if kind is EventKind.POSTED and answer in self._owed_to:
            emitted, sender = self._owed_to.pop(answer)
            if event.hub == sender:
                self.exercised(LANDED)
                self._landed[answer] = event
            else:
                self.flag(f"the answer {answer} to {emitted.answers} landed at {event.hub}, "
                          f"not at its sender {sender}", emitted, event)
        elif answer in self._owed_to and kind in _ROUTING_FAILED \
                and Capability.NETWORK in self.capabilities:
            # Its own routing failed on the way (a partition, a link held past its timeout):
            # a network may lose an answer as it loses any delivery, and a failure's loss is
            # never answered in turn. (Without a network an answer's route does not fail.)
            del self._owed_to[answer]
        elif answer in self._landed and event.hub == self._landed[answer].hub:
            if kind in (EventKind.ENQUEUED, EventKind.HANDLED):
                self.exercised(ACCEPTED)
                del self._landed[answer]
            elif kind is EventKind.REJECTED:
                self.flag(f"the answer {answer} was rejected by its sender {event.hub}",
                          self._landed.pop(answer), event)
            elif kind in _ENDS:
                del self._landed[answer]  # gated, dropped or shed there: no verdict

    def _observe_answer(self, event: TraceEvent, answered: str) -> None:
        self._answer_ids_unique(event, answered)
        self._not_found_from_live(event, answered)
        self._stopping_only_when_asked(event, answered)
        self._owe(event, answered)
        first = self._answers.get(answered)
        if first is not None:
            self.flag(f"delivery {answered} answered more than once", first, event)
            return
        self._answers[answered] = event
        if answered in self._failed:
            self.exercised(ANSWERED)
        cls = self.facts.class_of(answered)
        if cls is not None and cls.suppresses_answer:
            posted = self._posted.get(answered)
            packaged = "packaged " if self.facts.packaged(answered) else ""
            if answered in self.harness.roundtripped:
                packaged = "round-tripped " + packaged
            shown = (posted, event) if posted is not None else (event,)
            self.flag(f"{packaged}{cls.value} delivery {answered} was answered (must never be)",
                      *shown)

    def _answer_ids_unique(self, event: TraceEvent, answered: str) -> None:
        """An answer is a post too: two answers to different deliveries under one id (a
        node rebuilt after a crash that numbers afresh, say) could not be told apart."""
        if event.delivery_id is None:
            return
        first = self._answer_ids.setdefault(event.delivery_id, event)
        if first is not event and first.answers != answered:
            self.flag(f"the mesh gave answer id {event.delivery_id} to answers of "
                      f"{first.answers} and {answered}", first, event)

    def _node_stopped(self, event: TraceEvent) -> bool:
        """A node of a networked mesh that finished its own part of the stop while others
        still hold: its answers are suppressed as `silo_stopped`, as a stopped silo's are
        (the stop's business, which INV5 judges), once the harness asked for the stop."""
        return (event.kind is EventKind.ANSWER_SUPPRESSED and event.reason == "silo_stopped"
                and self._stop_asked and Capability.NETWORK in self.capabilities)

    def unfinished(self) -> list[Violation]:
        found = [
            self.violation(f"ordinary delivery {did} failed routing and was never answered", ev)
            for did, ev in self._failed.items()
            if did not in self._answers and did not in self._rejected
        ]
        found.extend(
            self.violation(f"the answer {answer} to {emitted.answers} never reached its "
                           f"sender {sender}, a live hub", emitted)
            for answer, (emitted, sender) in self._owed_to.items()
            if sender in self._hubs or self.harness.made_live(sender)
        )
        for did, seen in self._open.items():
            posted = self.harness.posts[did]
            if posted.target in self.harness.removed:
                continue  # its hub was taken away: what it held went with it (REMOVE_TARGET)
            where = (f"last seen {seen.kind.value} at {seen.hub or '?'} at {seen.time_ms} ms"
                     if seen is not None else "no event of it at all")
            raised = self._raised.get(seen.hub or "") if seen is not None else None
            if raised is not None:
                where += (f", queued behind {raised.delivery_id}, whose handler raised "
                          f"{raised.error or 'an exception'} at {raised.time_ms} ms")
            found.append(self.violation(
                f"delivery {did} the harness posted ({posted.message_type} from "
                f"{posted.sender} to {posted.target} via {posted.route.value} at "
                f"{posted.time_ms} ms) reached no end by quiescence: {where}",
                *((seen,) if seen is not None else ())))
        return found


check = check_function(AnswerOnce)
