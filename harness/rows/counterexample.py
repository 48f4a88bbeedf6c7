"""A failing invariant's counterexample, as `check` reports it.

From the run's `Outcome`, where the run ran (a worker's row travels as text): the failure
text shown under the invariant's row (everything pytest shows: the violations, the step
program, the Mermaid diagram, the virtual loop's schedule where the adapter records one,
the reproduce blob), and for the JSON the same as fields: the step program (a seed
program's, or the search's shrunk one), its steps, the seed program's name, the schedule,
the diagram, the blob and the examples run until the failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from invariants.dynamic.report import PROGRAM_HEADS, reproduce_decorator, step_program
from invariants.dynamic.runner import Outcome


@dataclass(frozen=True)
class Counterexample:
    examples: int  # examples run until the failure (a seed program counts as one)
    steps: int | None  # steps of the program (`init` included); None where not counted
    seed_program: str | None  # the seed program that failed; None: the search's program
    program: str  # the `state.*` lines: paste them into a test that has the machine class
    schedule: str | None  # the virtual loop's schedule (`schedule_text()`), where recorded
    diagram: str | None  # the failing run as a Mermaid sequenceDiagram
    reproduce: str | None  # the `@reproduce_failure(...)` decorator (the search's only)
    # The invariant whose run recorded the violation, judging this one as a bystander
    # (None: this invariant's own run), and whether its program failed again when replayed
    # on this invariant's own machine.
    found_by: str | None = None
    replayed: bool = True

    def to_json(self) -> dict[str, object]:
        return {"examples": self.examples, "steps": self.steps,
                "seed_program": self.seed_program, "program": self.program,
                "schedule": self.schedule, "diagram": self.diagram,
                "reproduce": self.reproduce, "found_by": self.found_by,
                "replayed": self.replayed}


def counterexample_of(outcome: Outcome) -> Counterexample | None:
    """The failing example of a violation or error; None where no single example fails (a
    pass, a contradiction in the run's counts, a factory that raised before any step)."""
    text = outcome.failure_text
    if outcome.verdict not in ("violation", "error") or not text:
        return None
    program = step_program(text)
    if program is None:
        return None
    return Counterexample(outcome.examples, outcome.shrunk_steps, outcome.seed_program,
                          program, outcome.schedule, outcome.diagram,
                          reproduce_decorator(text))


def failure_shown(outcome: Outcome) -> str:
    """What the row shows under its first line: a violation's whole failure text after its
    head; an error's from its step program on (its traceback is shown apart)."""
    text = outcome.failure_text
    if not text or outcome.verdict not in ("violation", "error"):
        return ""
    lines = text.splitlines()
    if outcome.verdict == "violation":
        return "\n".join(lines[1:])
    start = next((i for i, line in enumerate(lines) if line.startswith(PROGRAM_HEADS)),
                 len(lines))
    return "\n".join(lines[start:])
