"""Run a state machine on a given Hypothesis choice sequence and digest the mesh's trace.

`generate(machine, seed)` draws a fresh program (Hypothesis' own provider, seeded) and
returns its choice sequence with the digest of the trace it produced; `replay(machine,
choices)` runs that sequence again (`ConjectureData.for_choices`, as Hypothesis replays a
saved example) and returns the digest. Run as a script it replays sequences read as JSON
from stdin in a fresh interpreter, for the cross-process comparison.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from random import Random
from typing import Any

from hypothesis import HealthCheck, Verbosity, settings
from hypothesis.core import StateForActualGivenExecution, process_arguments_to_given
from hypothesis.database import choices_from_bytes, choices_to_bytes
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.reflection import get_signature
from hypothesis.stateful import get_state_machine_test

from invariants.dynamic.driver import MeshMachine
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.selection import build_machines
from invariants.trace import digest

STEPS = 16  # the `ci` profile's step count: enough steps, 200 programs in seconds
NOT_STARTED = "no mesh"  # a program whose init never ran (it overran)


class Recorder:
    """A machine's runner that keeps the digest of every run's final trace."""

    def __init__(self, machine: type[MeshMachine], steps: int = STEPS) -> None:
        self.digests: list[str] = []
        recorder = self

        def teardown(self: MeshMachine) -> None:
            try:
                MeshMachine.teardown(self)
            finally:
                recorder.digests.append(
                    digest(self.mesh.trace()) if self.adapter is not None else NOT_STARTED
                )

        # A subclass: the machine under test keeps its own class untouched.
        recording = type(machine.__name__, (machine,), {"teardown": teardown})
        run_settings = settings(
            database=None,
            deadline=None,
            stateful_step_count=steps,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
        )
        test: Any = get_state_machine_test(recording, settings=run_settings)
        _, _, stuff = process_arguments_to_given(
            test,
            arguments=[],
            kwargs={},
            given_kwargs=test.hypothesis._given_kwargs,
            params=get_signature(test).parameters,
        )
        self.state = StateForActualGivenExecution(
            stuff, test.hypothesis.inner_test, run_settings, Random(0), test
        )

    def run(self, data: ConjectureData) -> str:
        self.digests.clear()
        with contextlib.suppress(StopTest):  # an overrun program ends early: still a run
            self.state._execute_once_for_engine(data)
        data.freeze()
        return self.digests[-1] if self.digests else NOT_STARTED


def generate(recorder: Recorder, seed: int) -> tuple[tuple[Any, ...], str]:
    data = ConjectureData(random=Random(seed))
    trace = recorder.run(data)
    return tuple(data.choices), trace


def replay(recorder: Recorder, choices: Sequence[Any]) -> str:
    return recorder.run(ConjectureData.for_choices(tuple(choices)))


def machine_for(check_id: str, mutant: str | None = None) -> type[MeshMachine]:
    return build_machines(FuzzConfig(invariants=(check_id,), mutant=mutant))[check_id]


def encode(choices: Sequence[Any]) -> str:
    return choices_to_bytes(tuple(choices)).hex()


def decode(text: str) -> tuple[Any, ...]:
    choices = choices_from_bytes(bytes.fromhex(text))
    assert choices is not None
    return tuple(choices)


def replay_all(requests: list[dict[str, str]], make: Callable[[str], Recorder]) -> list[str]:
    recorders: dict[str, Recorder] = {}
    out = []
    for request in requests:
        check = request["check"]
        recorder = recorders.setdefault(check, make(check))
        out.append(replay(recorder, decode(request["choices"])))
    return out


if __name__ == "__main__":
    print(json.dumps(replay_all(json.load(sys.stdin), lambda c: Recorder(machine_for(c)))))
