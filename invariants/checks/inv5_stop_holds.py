"""INV5: a graceful stop lets accepted routing work land (seed 001).

A graceful stop holds at stage Active until every accepted route leg and NACK has ended,
at most `stop_budget_ms` (30 s; on expiry the residual legs are logged, oldest first);
the GrainDeactivation stage sees 0 legs in flight; from the first stop step no new route
leg is dispatched (the gauge only falls); nothing routing-related runs after the stop has
completed (no leg, attempt, answer, or packaged delivery landing at a hub); a non-graceful
stop (token already cancelled) holds nothing. Stages run in descending order, and a
requested stop completes.

Obligations (what each reads), with the evidence each counts:
- "graceful stops held with legs in flight": a graceful stop entered Active with a leg in
  flight and held until it landed or the budget expired (LEG_STARTED/LEG_ENDED,
  STOP_STAGE_ENTERED/LEFT, STOP_HOLD_*; the harness's stop request). A leg ended by a
  refusal, a gate or the pool's drain (its `reason`, or a GATED / DISPATCH_REFUSED for
  its delivery) has not landed: ending it that way during the hold is a violation.
- "GrainDeactivation saw 0 in flight": the GrainDeactivation stage of such a stop found no
  leg in flight (counted per graceful stop that reached it with legs to wait for).
- "hold budgets expired with the residual named": a hold released by its 30 s budget,
  with the residual legs logged oldest first (STOP_HOLD_RELEASED "budget", RESIDUAL_LEG).
- "graceful stops with nothing in flight not held": a graceful stop entered Active with no
  leg in flight and none started until it left, and it left at that instant: there is
  nothing to wait for (LEG_STARTED/LEG_ENDED, STOP_STAGE_ENTERED/LEFT).
- "non-graceful stops not held": a non-graceful stop entered Active with legs in flight
  and did not hold (STOP_HOLD_STARTED, the time Active was left).
- "holds ended when the host gave up": the harness asked for a non-graceful stop while a
  graceful one ran and legs were in flight at Active (the host's shutdown timeout expiring
  mid-hold, or before the hold began), and Active was left at that instant or, reached
  later, not held (the second stop request; STOP_HOLD_STARTED, the time Active was left).
  After the give-up nothing is held, and legs may be cut off.
- "dispatches after the stop began refused": the harness posted through a router after
  it asked for the stop, and no route leg was started for it (harness facts: posts and
  the stop request; LEG_STARTED).
- "stages entered in descending order": each stage after the first (STOP_STAGE_ENTERED).
- "requested stops completed": STOP_COMPLETED after the harness asked for a stop; every
  event after it is watched for routing work (none may follow).

The stop request and whether it was graceful are the harness's facts; a STOP_REQUESTED
that says otherwise is a violation. The stage numbers are params (`stop_stages`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from invariants.adapter import Capability, Route
from invariants.checks.harness_facts import HarnessFact, Posted, StopAsked
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
IDLE = "graceful stops with nothing in flight not held"

_ROUTING = frozenset({
    EventKind.LEG_STARTED,
    EventKind.LEG_ENDED,
    EventKind.ATTEMPT,
    EventKind.ATTEMPT_FAILED,
    EventKind.CALL_RECEIVED,
    EventKind.FAILURE_EMITTED,
})


class StopHolds(Monitor):
    check_id = "INV5"
    title = "a graceful stop holds until accepted legs have landed"
    needs = frozenset({Capability.STOP_LIFECYCLE})
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
        ORDER: "no stop ran more than one stage",
        COMPLETED: "no requested stop completed",
    })

    @classmethod
    def cause(cls, obligation: str, evidence: Mapping[str, int]) -> str:
        stops = evidence.get("stops requested", 0)
        if obligation in (HELD, ZERO_AT_DEACTIVATION, BUDGET, NOT_HELD, IDLE) and stops:
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
        self._active = params.stop_stages.get("Active")
        self._deactivation = params.stop_stages.get("GrainDeactivation")
        self._legs: dict[str, TraceEvent] = {}  # open legs, in dispatch order
        self._cut: set[str] = set()  # deliveries gated or refused during the stop
        self._asked: StopAsked | None = None  # the harness's own request
        self._gave_up: StopAsked | None = None  # a non-graceful request during a graceful stop
        self._waited = False  # the graceful stop found legs in flight at Active
        self._requested: TraceEvent | None = None
        self._active_entered: TraceEvent | None = None
        self._hold: TraceEvent | None = None
        self._budget_released = False
        self._residuals: list[str] = []
        self._open_at_release: list[str] = []
        self._last_stage: TraceEvent | None = None
        self._completed: TraceEvent | None = None
        self._active_left = False
        self._legs_at_active = False  # a leg was in flight while Active was held

    @property
    def _graceful(self) -> bool:
        if self._asked is not None:  # the harness knows what it asked for
            return self._asked.graceful
        return bool(self._requested is not None and self._requested.graceful)

    @property
    def _stopping(self) -> bool:
        return self._requested is not None or self._asked is not None

    def on_fact(self, fact: HarnessFact) -> None:
        if isinstance(fact, StopAsked) and self._asked is None:
            self._asked = fact
            self.saw("stops requested")
        elif (
            isinstance(fact, StopAsked) and not fact.graceful and self._graceful
            and self._gave_up is None
        ):
            if self._holding and self._legs:
                self.exercised(GAVE_UP)
            self._gave_up = fact
        elif (
            isinstance(fact, Posted) and self._asked is not None and fact.route is not Route.DIRECT
        ):
            self.exercised(REFUSED)  # a dispatch that must be refused (no route leg)

    def observe(self, event: TraceEvent) -> None:
        kind = event.kind
        if self._completed is not None and (
            kind in _ROUTING or (kind is EventKind.POSTED and event.packaged)
        ):
            what = "routed delivery landed" if kind is EventKind.POSTED else kind.value
            self.flag(f"{what} after the stop completed", self._completed, event)
        if kind is EventKind.LEG_STARTED and event.leg_id is not None:
            if self._stopping and event.leg_kind == "route":
                self.flag(
                    f"route leg {event.leg_id} dispatched after the stop began "
                    "(must be refused as ShuttingDown)",
                    *self._context(event),
                )
            self._legs[event.leg_id] = event
            if self._active_entered is not None and not self._active_left:
                self._legs_at_active = True
        elif kind is EventKind.LEG_ENDED and event.leg_id is not None:
            self._observe_leg_ended(event)
        elif (
            kind in (EventKind.GATED, EventKind.DISPATCH_REFUSED)
            and self._stopping
            and event.delivery_id is not None
        ):
            self._cut.add(event.delivery_id)
        elif kind is EventKind.STOP_REQUESTED and self._requested is None:
            self._requested = event
            asked = self._asked
            if asked is not None and event.graceful not in (None, asked.graceful):
                said, truth = ("graceful", "non-graceful") if event.graceful else (
                    "non-graceful", "graceful")
                self.flag(f"the mesh reports a {said} stop, but the harness asked for a "
                          f"{truth} one", event)
        elif kind is EventKind.STOP_STAGE_ENTERED:
            self._observe_stage_entered(event)
        elif kind is EventKind.STOP_STAGE_LEFT and event.stage == self._active:
            self._observe_active_left(event)
        elif kind is EventKind.STOP_HOLD_STARTED:
            self._hold = event
            if not self._graceful:
                self.flag("a non-graceful stop holds", *self._context(event))
            elif self._gave_up is not None:
                self.flag("a stop the harness gave up on holds", *self._context(event))
        elif kind is EventKind.STOP_HOLD_RELEASED:
            self._observe_hold_released(event)
        elif kind is EventKind.RESIDUAL_LEG and event.leg_id is not None:
            self._residuals.append(event.leg_id)
        elif kind is EventKind.STOP_COMPLETED and self._completed is None:
            self._completed = event
            if self._stopping:
                self.exercised(COMPLETED)

    def _observe_leg_ended(self, event: TraceEvent) -> None:
        started = self._legs.pop(event.leg_id or "", None)
        if started is None or not self._holding:
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

    @property
    def _holding(self) -> bool:
        """A graceful stop is between entering Active and leaving it, budget unspent and
        not given up."""
        return (
            self._graceful
            and self._active_entered is not None
            and not self._active_left
            and not self._budget_released
            and self._gave_up is None
        )

    def _context(self, event: TraceEvent) -> tuple[TraceEvent, ...]:
        return (self._requested, event) if self._requested is not None else (event,)

    def _observe_stage_entered(self, event: TraceEvent) -> None:
        last = self._last_stage
        if (
            last is not None
            and event.stage is not None
            and last.stage is not None
            and event.stage >= last.stage
        ):
            self.flag(f"stop stage {event.stage} entered after stage {last.stage}", last, event)
        if last is not None:
            self.exercised(ORDER)
        self._last_stage = event
        if event.stage == self._active:
            self.saw("Active entered")
            self._active_entered = event
            self._legs_at_active = bool(self._legs)
            if self._legs:
                self._waited = self._graceful and self._gave_up is None
                self.exercised(
                    GAVE_UP if self._gave_up is not None
                    else HELD if self._graceful else NOT_HELD
                )
        if event.stage != self._deactivation:
            return
        self.saw("GrainDeactivation entered")
        if (
            self._graceful and self._waited and not self._budget_released
            and self._gave_up is None
        ):
            self.exercised(ZERO_AT_DEACTIVATION)
        if self._graceful and not self._budget_released and self._gave_up is None and self._legs:
            oldest = next(iter(self._legs.values()))
            self.flag(
                f"{len(self._legs)} leg(s) in flight at GrainDeactivation (must be 0)",
                oldest,
                event,
            )

    def _observe_active_left(self, event: TraceEvent) -> None:
        entered = self._active_entered
        if entered is None:
            return
        self._active_left = True
        held = event.time_ms - entered.time_ms
        if not self._graceful:
            if held > 0:
                self.flag(f"a non-graceful stop held Active for {held} ms", entered, event)
            return
        if not self._legs_at_active and self._gave_up is None:
            if held > 0:
                self.flag(f"a graceful stop held Active for {held} ms with nothing in flight "
                          "(no leg to wait for)", entered, event)
            else:
                self.exercised(IDLE)
            return
        gave_up = self._gave_up
        if gave_up is not None:
            after = event.time_ms - max(entered.time_ms, gave_up.time_ms)
            if after > 0 and not self._budget_released:
                self.flag(f"Active held {after} ms after the harness gave up on the stop "
                          f"at {gave_up.time_ms} ms (a non-graceful stop ends the hold)",
                          entered, event)
            return
        if held > self.params.stop_budget_ms:
            self.flag(
                f"stop held Active for {held} ms (budget {self.params.stop_budget_ms} ms)",
                entered,
                event,
            )
        if self._budget_released and self._residuals != self._open_at_release:
            self.flag(
                f"residual legs logged {self._residuals}, but in flight at expiry "
                f"(oldest first) {self._open_at_release}",
                entered,
                event,
            )
        if self._legs and not self._budget_released:
            oldest = next(iter(self._legs.values()))
            self.flag(
                f"stop left Active with {len(self._legs)} leg(s) in flight after {held} ms, "
                "before the budget expired",
                oldest,
                event,
            )

    def _observe_hold_released(self, event: TraceEvent) -> None:
        if event.reason != "budget":
            return
        self._budget_released = True
        self.exercised(BUDGET)
        hold = self._hold
        if hold is not None and event.time_ms - hold.time_ms < self.params.stop_budget_ms:
            self.flag(
                f"hold released as expired after {event.time_ms - hold.time_ms} ms "
                f"(budget {self.params.stop_budget_ms} ms)",
                hold,
                event,
            )
        self._open_at_release = list(self._legs)

    def overdue(self, now_ms: int) -> list[Violation]:
        hold, entered = self._hold, self._active_entered
        start = hold or entered
        if start is None or not self._graceful or self._completed is not None:
            return []
        if self._last_stage is not None and self._last_stage.stage != self._active:
            return []
        if (
            entered is not None and not self._active_left and not self._legs_at_active
            and self._gave_up is None and now_ms > entered.time_ms
        ):
            return [
                self.violation(
                    f"stop still held at Active {now_ms - entered.time_ms} ms after it began, "
                    "with nothing in flight (no leg to wait for)",
                    entered,
                )
            ]
        gave_up = self._gave_up
        if gave_up is not None and not self._active_left and now_ms > gave_up.time_ms:
            return [
                self.violation(
                    f"stop still held at Active {now_ms - gave_up.time_ms} ms after the "
                    "harness gave up on it (a non-graceful stop ends the hold)",
                    start,
                )
            ]
        if now_ms - start.time_ms > self.params.stop_budget_ms:
            return [
                self.violation(
                    f"stop still held at Active {now_ms - start.time_ms} ms after it began "
                    f"(budget {self.params.stop_budget_ms} ms)",
                    start,
                )
            ]
        return []

    def unfinished(self) -> list[Violation]:
        found: list[Violation] = []
        if self._stopping and self._completed is None:
            shown = (self._requested,) if self._requested is not None else ()
            found.append(self.violation("the stop never completed", *shown))
        found.extend(
            self.violation(f"leg {leg_id} never ended", started)
            for leg_id, started in self._legs.items()
        )
        return found


check = check_function(StopHolds)
