"""INV5: a graceful stop lets accepted routing work land (seed 001).

A graceful stop holds at stage Active until every accepted route leg and NACK has ended,
at most `stop_budget_ms` (30 s; on expiry the residual legs are logged, oldest first);
the GrainDeactivation stage sees 0 legs in flight; from the first stop step no new route
leg is dispatched (the gauge only falls); nothing routing-related runs after the stop has
completed (no leg, attempt, answer, or packaged delivery landing at a hub); a non-graceful
stop (token already cancelled) holds nothing. Stages run in descending order, and a
requested stop completes.
"""

from __future__ import annotations

from invariants.checks.monitor import Monitor, check_function
from invariants.checks.params import DEFAULT_PARAMS, CheckParams
from invariants.checks.violation import Violation
from invariants.trace import EventKind, TraceEvent

ACTIVE = 20_000
GRAIN_DEACTIVATION = 19_998

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

    def __init__(self, params: CheckParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self._legs: dict[str, TraceEvent] = {}  # open legs, in dispatch order
        self._requested: TraceEvent | None = None
        self._active_entered: TraceEvent | None = None
        self._hold: TraceEvent | None = None
        self._budget_released = False
        self._residuals: list[str] = []
        self._open_at_release: list[str] = []
        self._last_stage: TraceEvent | None = None
        self._completed: TraceEvent | None = None

    @property
    def _graceful(self) -> bool:
        return bool(self._requested is not None and self._requested.graceful)

    def observe(self, event: TraceEvent) -> None:
        kind = event.kind
        if self._completed is not None and (
            kind in _ROUTING or (kind is EventKind.POSTED and event.packaged)
        ):
            what = "routed delivery landed" if kind is EventKind.POSTED else kind.value
            self.flag(f"{what} after the stop completed", self._completed, event)
        if kind is EventKind.LEG_STARTED and event.leg_id is not None:
            if self._requested is not None and event.leg_kind == "route":
                self.flag(
                    f"route leg {event.leg_id} dispatched after the stop began "
                    "(must be refused as ShuttingDown)",
                    self._requested,
                    event,
                )
            self._legs[event.leg_id] = event
        elif kind is EventKind.LEG_ENDED and event.leg_id is not None:
            self._legs.pop(event.leg_id, None)
        elif kind is EventKind.STOP_REQUESTED and self._requested is None:
            self._requested = event
        elif kind is EventKind.STOP_STAGE_ENTERED:
            self._observe_stage_entered(event)
        elif kind is EventKind.STOP_STAGE_LEFT and event.stage == ACTIVE:
            self._observe_active_left(event)
        elif kind is EventKind.STOP_HOLD_STARTED:
            self._hold = event
            if not self._graceful:
                self.flag("a non-graceful stop holds", *self._context(event))
        elif kind is EventKind.STOP_HOLD_RELEASED:
            self._observe_hold_released(event)
        elif kind is EventKind.RESIDUAL_LEG and event.leg_id is not None:
            self._residuals.append(event.leg_id)
        elif kind is EventKind.STOP_COMPLETED and self._completed is None:
            self._completed = event

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
        self._last_stage = event
        if event.stage == ACTIVE:
            self._active_entered = event
        if (
            event.stage == GRAIN_DEACTIVATION
            and self._graceful
            and not self._budget_released
            and self._legs
        ):
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
        held = event.time_ms - entered.time_ms
        if not self._graceful:
            if held > 0:
                self.flag(f"a non-graceful stop held Active for {held} ms", entered, event)
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
        if self._last_stage is not None and self._last_stage.stage != ACTIVE:
            return []
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
        if self._requested is not None and self._completed is None:
            found.append(self.violation("the stop never completed", self._requested))
        found.extend(
            self.violation(f"leg {leg_id} never ended", started)
            for leg_id, started in self._legs.items()
        )
        return found


check = check_function(StopHolds)
