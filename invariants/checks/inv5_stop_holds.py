"""INV5: a graceful stop lets accepted routing work land (seed 001).

A graceful stop holds at Active until every accepted route leg and NACK has landed, at most
its budget, and GrainDeactivation sees none in flight; a non-graceful stop, one with nothing
in flight and one the host gave up on hold nothing. No route leg starts once the stop began,
nothing routing-related runs once it completed, stages descend, and the stop completes.

Obligations (docs/dynamic-invariants.md, INV5): "graceful stops held with legs in flight",
"GrainDeactivation saw 0 in flight", "hold budgets expired with the residual named",
"graceful stops with nothing in flight not held", "non-graceful stops not held", "holds
ended when the host gave up", "stops given up before Active not held" (a give-up that comes
before the stop reaches Active, in the stop's own instant included, leaves nothing to hold),
"dispatches after the stop began refused", "stages entered in descending order", "requested
stops completed", "application messages offered at a closed teardown gate refused"
(`inv5_gate`: once a hub's teardown gate has closed, no application message reaches its
handler), "NACK legs ended during the hold landed" (`inv5_answers`: an answer in flight
holds the stop like any leg, and its leg ends by delivering it).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from invariants.adapter import FaultKind, Route
from invariants.checks.harness_facts import HarnessFact, Injected, Posted, StopAsked
from invariants.checks.inv5_answers import NACK_LANDED, NacksInFlight
from invariants.checks.inv5_gate import GATE, TeardownGate
from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

HELD = "graceful stops held with legs in flight"
ZERO_AT_DEACTIVATION = "GrainDeactivation saw 0 in flight"
BUDGET = "hold budgets expired with the residual named"
NOT_HELD = "non-graceful stops not held"
REFUSED = "dispatches after the stop began refused"
ORDER = "stages entered in descending order"
COMPLETED = "requested stops completed"
GAVE_UP = "holds ended when the host gave up"
GAVE_UP_EARLY = "stops given up before Active not held"
IDLE = "graceful stops with nothing in flight not held"

_ROUTING = frozenset({
    EventKind.LEG_STARTED,
    EventKind.LEG_ENDED,
    EventKind.ATTEMPT,
    EventKind.ATTEMPT_FAILED,
    EventKind.CALL_RECEIVED,
    EventKind.FAILURE_EMITTED,
})


class _StopEdges:
    """The stop's edges as the harness asked for it and the mesh ran it (requested, the
    stages entered, Active held and left, the budget spent, given up, completed), judged
    for `monitor` against `legs`, the monitor's open legs in dispatch order, less those
    `lost` (in flight when the harness crashed a node) where a stop must hold for them."""

    def __init__(self, monitor: Monitor, legs: dict[str, TraceEvent], lost: set[str]) -> None:
        self._monitor = monitor
        self._legs = legs
        self._lost = lost
        self._active = monitor.params.stop_stages.get("Active")
        self._deactivation = monitor.params.stop_stages.get("GrainDeactivation")
        self.asked: StopAsked | None = None  # the harness's own request
        self.gave_up: StopAsked | None = None  # a non-graceful request during a graceful stop
        self._waited = False  # the graceful stop found legs in flight at Active
        self.requested: TraceEvent | None = None
        self._active_entered: TraceEvent | None = None
        self._hold: TraceEvent | None = None
        self._budget_released = False
        self.residuals: list[str] = []
        self._open_at_release: list[str] = []
        self._last_stage: TraceEvent | None = None
        self.completed: TraceEvent | None = None
        self._active_left = False
        self._legs_at_active = False  # a leg was in flight while Active was held

    @property
    def graceful(self) -> bool:
        if self.asked is not None:  # the harness knows what it asked for
            return self.asked.graceful
        return bool(self.requested is not None and self.requested.graceful)

    @property
    def stopping(self) -> bool:
        return self.requested is not None or self.asked is not None

    @property
    def holding(self) -> bool:
        """A graceful stop is between entering Active and leaving it, budget unspent and
        not given up."""
        return (
            self.graceful
            and self._active_entered is not None
            and not self._active_left
            and not self._budget_released
            and self.gave_up is None
        )

    def context(self, event: TraceEvent) -> tuple[TraceEvent, ...]:
        return (self.requested, event) if self.requested is not None else (event,)

    def asked_for(self, fact: StopAsked) -> None:
        """The harness asked for a stop: the first request, or the host giving up on a
        graceful one."""
        if self.asked is None:
            self.asked = fact
            self._monitor.saw("stops requested")
        elif not fact.graceful and self.graceful and self.gave_up is None:
            if self.holding and self._legs:
                self._monitor.exercised(GAVE_UP)
            self.gave_up = fact

    def requested_by(self, event: TraceEvent) -> None:
        """The mesh's STOP_REQUESTED: whether it is graceful is the harness's word."""
        self.requested = event
        asked = self.asked
        if asked is not None and event.graceful not in (None, asked.graceful):
            said, truth = ("graceful", "non-graceful") if event.graceful else (
                "non-graceful", "graceful")
            self._monitor.flag(f"the mesh reports a {said} stop, but the harness asked for a "
                               f"{truth} one", event)

    def leg_started(self) -> None:
        if self._active_entered is not None and not self._active_left:
            self._legs_at_active = True

    def hold_started(self, event: TraceEvent) -> None:
        self._hold = event
        if not self.graceful:
            self._monitor.flag("a non-graceful stop holds", *self.context(event))
        elif self.gave_up is not None:
            self._monitor.flag("a stop the harness gave up on holds", *self.context(event))

    def stage_entered(self, event: TraceEvent) -> None:
        monitor = self._monitor
        last = self._last_stage
        if (
            last is not None
            and event.stage is not None
            and last.stage is not None
            and event.stage >= last.stage
        ):
            monitor.flag(f"stop stage {event.stage} entered after stage {last.stage}", last, event)
        if last is not None:
            monitor.exercised(ORDER)
        self._last_stage = event
        if event.stage == self._active:
            monitor.saw("Active entered")
            self._active_entered = event
            self._legs_at_active = bool(self._legs)
            if self._legs:
                self._waited = self.graceful and self.gave_up is None
                monitor.exercised(
                    GAVE_UP_EARLY if self.graceful and self.gave_up is not None
                    else HELD if self.graceful else NOT_HELD
                )
        if event.stage != self._deactivation:
            return
        monitor.saw("GrainDeactivation entered")
        if (
            self.graceful and self._waited and not self._budget_released
            and self.gave_up is None
        ):
            monitor.exercised(ZERO_AT_DEACTIVATION)
        owed = self._owed()
        if self.graceful and not self._budget_released and self.gave_up is None and owed:
            monitor.flag(
                f"{len(owed)} leg(s) in flight at GrainDeactivation (must be 0)",
                owed[0],
                event,
            )

    def stage_left(self, event: TraceEvent) -> None:
        """A stage was left: Active is judged by what it held, for how long."""
        monitor, budget = self._monitor, self._monitor.params.stop_budget_ms
        entered = self._active_entered
        if event.stage != self._active or entered is None:
            return
        self._active_left = True
        held = event.time_ms - entered.time_ms
        if not self.graceful:
            if held > 0:
                monitor.flag(f"a non-graceful stop held Active for {held} ms", entered, event)
            return
        if not self._legs_at_active and self.gave_up is None:
            if held > 0:
                monitor.flag(f"a graceful stop held Active for {held} ms with nothing in "
                             "flight (no leg to wait for)", entered, event)
            else:
                monitor.exercised(IDLE)
            return
        gave_up = self.gave_up
        if gave_up is not None:
            after = event.time_ms - max(entered.time_ms, gave_up.time_ms)
            if after > 0 and not self._budget_released:
                monitor.flag(f"Active held {after} ms after the harness gave up on the stop "
                             f"at {gave_up.time_ms} ms (a non-graceful stop ends the hold)",
                             entered, event)
            return
        if held > budget:
            monitor.flag(f"stop held Active for {held} ms (budget {budget} ms)", entered, event)
        if self._budget_released and self.residuals != self._open_at_release:
            monitor.flag(
                f"residual legs logged {self.residuals}, but in flight at expiry "
                f"(oldest first) {self._open_at_release}",
                entered,
                event,
            )
        owed = self._owed()
        if owed and not self._budget_released:
            monitor.flag(
                f"stop left Active with {len(owed)} leg(s) in flight after {held} ms, "
                "before the budget expired",
                owed[0],
                event,
            )

    def _owed(self) -> list[TraceEvent]:
        """The legs in flight a graceful stop must hold for, oldest first."""
        return [leg for leg_id, leg in self._legs.items() if leg_id not in self._lost]

    def hold_released(self, event: TraceEvent) -> None:
        if event.reason != "budget":
            return
        self._budget_released = True
        self._monitor.exercised(BUDGET)
        hold, budget = self._hold, self._monitor.params.stop_budget_ms
        if hold is not None and event.time_ms - hold.time_ms < budget:
            self._monitor.flag(
                f"hold released as expired after {event.time_ms - hold.time_ms} ms "
                f"(budget {budget} ms)",
                hold,
                event,
            )
        self._open_at_release = list(self._legs)

    def overdue(self, now_ms: int) -> list[Violation]:
        """A graceful stop still at Active: held with nothing to wait for, after the host
        gave up, or past its budget."""
        monitor, budget = self._monitor, self._monitor.params.stop_budget_ms
        hold, entered = self._hold, self._active_entered
        start = hold or entered
        if start is None or not self.graceful or self.completed is not None:
            return []
        if self._last_stage is not None and self._last_stage.stage != self._active:
            return []
        if (
            entered is not None and not self._active_left and not self._legs_at_active
            and self.gave_up is None and now_ms > entered.time_ms
        ):
            return [monitor.violation(
                f"stop still held at Active {now_ms - entered.time_ms} ms after it began, "
                "with nothing in flight (no leg to wait for)",
                entered,
            )]
        gave_up = self.gave_up
        if gave_up is not None and not self._active_left and now_ms > gave_up.time_ms:
            return [monitor.violation(
                f"stop still held at Active {now_ms - gave_up.time_ms} ms after the "
                "harness gave up on it (a non-graceful stop ends the hold)",
                start,
            )]
        if now_ms - start.time_ms > budget:
            return [monitor.violation(
                f"stop still held at Active {now_ms - start.time_ms} ms after it began "
                f"(budget {budget} ms)",
                start,
            )]
        return []


class StopHolds(Monitor):
    check_id = "INV5"
    title = "a graceful stop holds until accepted legs have landed"
    reads_custom_events = False
    obligations = MappingProxyType({
        HELD: "no graceful stop found a leg in flight at Active (is the `stop` family on, "
        "with slow destinations keeping legs in flight?)",
        ZERO_AT_DEACTIVATION: "no graceful stop that had legs to wait for reached "
        "GrainDeactivation",
        BUDGET: "no stop hold ran out its budget (stop_budget_ms): no leg outlived it",
        IDLE: "no graceful stop reached Active with nothing in flight",
        NOT_HELD: "no non-graceful stop found a leg in flight at Active",
        REFUSED: "the harness never posted through a router after asking for the stop",
        GAVE_UP: "the harness never gave up on a graceful stop while it held Active with "
        "legs in flight (is the `give_up` family on?)",
        GAVE_UP_EARLY: "the harness never gave up on a graceful stop before it reached "
        "Active with legs in flight (does the `stop` family draw `give_up_ms` 0?)",
        ORDER: "no stop ran more than one stage",
        COMPLETED: "no requested stop completed",
        GATE: "no application message was offered at a hub once its teardown gate had "
        "closed (is the `user` family on, with direct posts after the stop?)",
        NACK_LANDED: "no NACK leg ended while a graceful stop held at Active (do the "
        "stop's racing posts go to missing targets through a router?)",
    })

    @classmethod
    def by_policy(cls, params: CheckParams) -> dict[str, str]:
        declared: dict[str, str] = {}
        if params.stop_failure_answers == "direct":
            declared[NACK_LANDED] = ("stop_failure_answers = 'direct': the mesh hands a "
                                     "failure answer to its sender's intake itself, never as "
                                     "a leg")
        if params.leg_lifetime == "response_timeout" \
                and params.response_timeout_ms < params.stop_budget_ms:
            declared[BUDGET] = (
                f"leg_lifetime = 'response_timeout': every leg ends by its caller's "
                f"response timeout ({params.response_timeout_ms} ms), before a hold's budget "
                f"({params.stop_budget_ms} ms) can run out")
        return declared

    @classmethod
    def cause(cls, obligation: str, evidence: Mapping[str, int]) -> str:
        stops = evidence.get("stops requested", 0)
        if obligation in (HELD, ZERO_AT_DEACTIVATION, BUDGET, NOT_HELD, IDLE,
                          GAVE_UP_EARLY, NACK_LANDED) and stops:
            for name in ("Active", "GrainDeactivation"):
                if evidence.get(f"{name} entered", 0) == 0:
                    return (f"{stops} stop(s) were requested but no stop stage named {name} "
                            "was entered: if your mesh numbers its stages otherwise, set "
                            "stop_stages in [tool.harness.params]")
        if obligation != REFUSED and stops == 0:
            return "the harness never asked for a stop (is the `stop` family on?)"
        return super().cause(obligation, evidence)

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._legs: dict[str, TraceEvent] = {}  # open legs, in dispatch order
        self._started: dict[str, TraceEvent] = {}  # every leg id started, and where
        self._lost: set[str] = set()  # legs in flight when the harness crashed a node
        self._cut: set[str] = set()  # deliveries gated or refused during the stop
        self._stop = _StopEdges(self, self._legs, self._lost)
        self._gate = TeardownGate(self)
        self._nacks = NacksInFlight(self)

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, StopAsked):
            self._stop.asked_for(fact)
        elif isinstance(fact, Injected) and fact.kind is FaultKind.CRASH_NODE:
            # A crashed node's legs are lost with it, and the harness does not know which
            # hubs (and so which legs) it hosted: no leg in flight at the crash is one a
            # stop must hold for (one that still ends during the hold is judged as any).
            self._lost.update(self._legs)
        elif (
            isinstance(fact, Posted) and self._stop.asked is not None
            and fact.route is not Route.DIRECT
        ):
            self.exercised(REFUSED)  # a dispatch that must be refused (no route leg)

    def observe(self, event: TraceEvent) -> None:
        kind, stop = event.kind, self._stop
        self._gate.observe(event, stop.stopping)
        self._nacks.observe(event, stop.holding)
        if stop.completed is not None and (
            kind in _ROUTING or (kind is EventKind.POSTED and event.packaged)
        ):
            what = "routed delivery landed" if kind is EventKind.POSTED else kind.value
            self.flag(f"{what} after the stop completed", stop.completed, event)
        if kind is EventKind.LEG_STARTED and event.leg_id is not None:
            if stop.stopping and event.leg_kind == "route":
                self.flag(
                    f"route leg {event.leg_id} dispatched after the stop began "
                    "(must be refused as ShuttingDown)",
                    *stop.context(event),
                )
            self._started_once(event, event.leg_id)
            self._legs[event.leg_id] = event
            stop.leg_started()
        elif kind is EventKind.LEG_ENDED and event.leg_id is not None:
            self._observe_leg_ended(event)
        elif (
            kind in (EventKind.GATED, EventKind.DISPATCH_REFUSED)
            and stop.stopping
            and event.delivery_id is not None
        ):
            self._cut.add(event.delivery_id)
        elif kind is EventKind.STOP_REQUESTED and stop.requested is None:
            stop.requested_by(event)
        elif kind is EventKind.STOP_STAGE_ENTERED:
            stop.stage_entered(event)
        elif kind is EventKind.STOP_STAGE_LEFT:
            stop.stage_left(event)
        elif kind is EventKind.STOP_HOLD_STARTED:
            stop.hold_started(event)
        elif kind is EventKind.STOP_HOLD_RELEASED:
            stop.hold_released(event)
        elif kind is EventKind.RESIDUAL_LEG and event.leg_id is not None:
            stop.residuals.append(event.leg_id)
        elif kind is EventKind.STOP_COMPLETED and stop.completed is None:
            stop.completed = event
            if stop.stopping:
                self.exercised(COMPLETED)

    def _started_once(self, event: TraceEvent, leg_id: str) -> None:
        """Every leg id is started once: a second start (a node rebuilt after a crash that
        numbers its legs afresh, say) makes two legs one, and either's end ends both."""
        first = self._started.setdefault(leg_id, event)
        if first is not event:
            self.flag(f"leg {leg_id} started twice (a leg id is started once)", first, event)

    def _observe_leg_ended(self, event: TraceEvent) -> None:
        """A leg ended by a refusal, a gate or the pool's drain while the graceful stop holds
        has not landed."""
        started = self._legs.pop(event.leg_id or "", None)
        # A node that crashes loses its legs with it: what ends while one is down
        # (`HarnessFacts.down_until`) was not cut by the stop.
        if started is None or not self._stop.holding or event.time_ms < self.harness.down_until:
            return
        did = event.delivery_id
        how = (
            f"its delivery {did} was refused or gated" if did in self._cut
            else f"'{event.reason}'" if event.reason in self.params.unlanded_reasons
            else None
        )
        if how is not None:
            self.flag(
                f"leg {event.leg_id} ended by {how} while the graceful stop held at Active: "
                "work cut off has not landed",
                started,
                event,
            )

    def overdue(self, now_ms: int) -> list[Violation]:
        return self._stop.overdue(now_ms)

    def unfinished(self) -> list[Violation]:
        found: list[Violation] = []
        stop = self._stop
        if stop.stopping and stop.completed is None:
            shown = (stop.requested,) if stop.requested is not None else ()
            found.append(self.violation("the stop never completed", *shown))
        # A crash leaves no word: a leg in flight at one owes no end.
        found.extend(
            self.violation(f"leg {leg_id} never ended", started)
            for leg_id, started in self._legs.items() if leg_id not in self._lost
        )
        return found


check = check_function(StopHolds)
