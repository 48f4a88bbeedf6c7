"""The same Hypothesis choice sequence gives the same run: in this process, after other
runs, in a fresh interpreter, and when HypoFuzz re-executes it.

Shrinking, the replay of saved failures and HypoFuzz's coverage guidance all re-run a
recorded choice sequence and rely on it giving the same program and the same trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from fuzz_replaying import Recorder, encode, generate, machine_for, replay

from invariants.adapter import Route
from invariants.checks import CHECK_IDS
from invariants.dynamic.driver import MeshMachine

HERE = Path(__file__).parent
PROGRAMS = 200
FRESH_PROGRAMS = 7  # one per invariant


def _programs(count: int) -> list[tuple[str, tuple[Any, ...], str]]:
    """(invariant, choices, trace digest) of `count` seeded programs, the invariants in turn."""
    recorders = {check: Recorder(machine_for(check)) for check in CHECK_IDS}
    programs = []
    for seed in range(count):
        check = CHECK_IDS[seed % len(CHECK_IDS)]
        choices, trace = generate(recorders[check], seed)
        programs.append((check, choices, trace))
    return programs


@pytest.mark.slow
def test_replaying_200_choice_sequences_twice_gives_the_same_traces() -> None:
    programs = _programs(PROGRAMS)
    assert len({trace for _, _, trace in programs}) > PROGRAMS // 2  # programs do differ
    recorders = {check: Recorder(machine_for(check)) for check in CHECK_IDS}
    for _round in range(2):
        # Reversed: every replay follows other programs than its generation did, so state
        # surviving an example would show.
        for check, choices, trace in reversed(programs):
            assert replay(recorders[check], choices) == trace, check


@pytest.mark.slow
def test_a_mutant_replays_its_programs_too() -> None:
    """A pre-fix mutant (its own copy of the mesh's modules) keeps no state across runs
    either."""
    recorder = Recorder(machine_for("INV4", mutant="M2"))
    programs = [generate(recorder, seed) for seed in range(20)]
    for choices, trace in reversed(programs):
        assert replay(recorder, choices) == trace


class _Leaky(MeshMachine):
    """Negative control: a class-level counter survives examples and steers the run."""

    runs: ClassVar[int] = 0

    def start(self, watermarks: Any, swarm: Any, **options: Any) -> None:
        super().start(watermarks, swarm, **options)
        type(self).runs += 1
        if type(self).runs % 2 == 0:
            self.workload.user("client", "h0", Route.MONOLITH, 1)


def test_the_comparison_sees_state_that_survives_an_example() -> None:
    machine = machine_for("INV1")
    leaky = type(machine.__name__, (_Leaky, machine), {})
    recorder = Recorder(leaky)
    choices, trace = generate(recorder, 0)
    assert {replay(recorder, choices), replay(recorder, choices)} != {trace}


def _fresh_interpreter(requests: list[dict[str, str]], hash_seed: str) -> list[str]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent.parent), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    )
    result = subprocess.run(
        [sys.executable, str(HERE / "fuzz_replaying.py")],
        input=json.dumps(requests), capture_output=True, text=True, env=env, check=False,
    )
    assert result.returncode == 0, result.stderr
    digests: list[str] = json.loads(result.stdout)
    return digests


@pytest.mark.slow
def test_a_fresh_interpreter_replays_the_same_traces() -> None:
    programs = _programs(FRESH_PROGRAMS)
    requests = [{"check": check, "choices": encode(choices)} for check, choices, _ in programs]
    expected = [trace for _, _, trace in programs]
    # Other string-hash seeds: no trace may depend on set or dict order of hashed keys.
    assert _fresh_interpreter(requests, "1") == expected
    assert _fresh_interpreter(requests, "4242") == expected


def _probe(check_id: str, *flags: str) -> dict[str, int]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent.parent), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    )
    result = subprocess.run(
        [sys.executable, str(HERE / "fuzz_stability_probe.py"), check_id, "30", *flags],
        capture_output=True, text=True, env=env, check=False,
    )
    assert result.returncode == 0, result.stderr
    counts: dict[str, int] = json.loads(result.stdout)
    return counts


@pytest.mark.slow
def test_hypofuzz_keeps_the_behaviours_its_re_execution_reproduces() -> None:
    aligned = _probe("INV4")
    assert aligned["inputs"] >= 30
    assert aligned["behaviours"] > 0
    assert aligned["fingerprints"] > 0
    # Control: HypoFuzz's own replay misses the forced draws and keeps nothing.
    unaligned = _probe("INV4", "--unaligned")
    assert unaligned["behaviours"] == 0
    assert unaligned["fingerprints"] == 0
