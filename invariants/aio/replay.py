"""Replaying a recorded schedule, checked step by step.

A replayed run takes each choice from its recording and checks, at every step the
recording decided, that the run stands where the recording stood: the same step, time and
number of options, and the same callback run before the same ones. The first difference is
a `ScheduleDivergence` naming the step, so a run that would silently be another run fails
instead.
"""

from __future__ import annotations

import sys

from invariants.aio.errors import ScheduleDivergence
from invariants.aio.schedule import Decision, Schedule, format_time, python_version

NEVER = sys.maxsize

class Replay:
    """The recording's decisions, consumed in order."""

    def __init__(self, recording: Schedule) -> None:
        self.recording = recording
        self._decisions = recording.decisions
        self._index = 0

    @property
    def next_step(self) -> int:
        """The step of the next recorded decision (NEVER once all are consumed)."""
        if self._index < len(self._decisions):
            return self._decisions[self._index].step
        return NEVER

    def _fail(self, step: int, time_us: int, what: str) -> ScheduleDivergence:
        recorded = self.recording.python
        versions = (
            f" (recorded on Python {recorded}, replayed on {python_version()})"
            if recorded != python_version() else ""
        )
        return ScheduleDivergence(
            f"the run diverged from its recording at step {step} (t={format_time(time_us)}): "
            f"{what}{versions}"
        )

    @staticmethod
    def _recorded(decision: Decision) -> str:
        return (
            f"the recording chose among {decision.options} options at t="
            f"{format_time(decision.time_us)} and ran {decision.ran}"
        )

    def decide(self, step: int, time_us: int, options: int) -> Decision:
        """The recorded decision for a choice among `options` at `step`; raises when the
        recording has none there or had another number of options."""
        expected = self.next_step
        if expected != step:
            if expected == NEVER:
                what = f"this run chose among {options} options; the recording has no more choices"
            else:
                what = (
                    f"this run chose among {options} options; the recording had no choice "
                    f"here (its next one is at step {expected})"
                )
            raise self._fail(step, time_us, what)
        decision = self._decisions[self._index]
        if decision.time_us != time_us or decision.options != options:
            raise self._fail(
                step, time_us,
                f"this run had {options} options; {self._recorded(decision)}",
            )
        return decision

    def confirm(
        self, decision: Decision, step: int, time_us: int, ran: str,
        overtaken: tuple[str, ...],
    ) -> None:
        """The replayed choice ran what the recording ran, before the same callbacks."""
        if (ran, overtaken) != (decision.ran, decision.overtaken):
            raise self._fail(
                step, time_us,
                f"option {decision.chosen} is {ran} here; {self._recorded(decision)}",
            )
        self._index += 1

    def forced(self, step: int, time_us: int, ran: str) -> ScheduleDivergence:
        """A step with one option where the recording had a choice."""
        decision = self._decisions[self._index]
        return self._fail(
            step, time_us, f"this run had one option ({ran}); {self._recorded(decision)}",
        )

    def unfinished(self, step: int, time_us: int) -> ScheduleDivergence | None:
        """The run ended with recorded decisions left over."""
        left = len(self._decisions) - self._index
        if left <= 0:
            return None
        return self._fail(
            step, time_us,
            f"the run ended after {step} steps with {left} recorded choice(s) left "
            f"(the next at step {self.next_step})",
        )

