"""Same seeded choices, same bytes and same schedule: twice in one process and in a fresh
process under another hash seed; a recorded schedule replays, and a doctored one is caught;
a verdict reads as what the network did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from net_helpers import no_real_sockets, nth_verdict_on
from net_programs import PROGRAMS, Transcript, net_place

from invariants.adapter import Chooser, SeededChooser
from invariants.aio import Schedule, ScheduleDivergence, render_schedule
from invariants.aio.net import Network, run

HERE = Path(__file__).parent


def chat(chooser: Chooser | None = None, replay: Schedule | None = None
         ) -> tuple[Transcript, Schedule]:
    net = Network()
    with no_real_sockets():
        result = run(PROGRAMS["chat"](net_place(net)), network=net, chooser=chooser,
                     replay=replay)
    return result.result, result.schedule


def test_the_same_seed_gives_the_same_bytes_and_schedule() -> None:
    first, second, other = chat(SeededChooser(5)), chat(SeededChooser(5)), chat(SeededChooser(6))
    assert first[0] == second[0]
    assert first[1].dumps() == second[1].dumps()
    assert first[1].reorderings()  # the seed held segments
    assert other[1].dumps() != first[1].dumps()  # negative control: another seed, another run


def test_a_fresh_process_under_another_hash_seed_runs_the_same() -> None:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from test_net_determinism import chat;"
        "from invariants.adapter import SeededChooser;"
        "transcript, schedule = chat(SeededChooser(5));"
        "print(json.dumps([transcript, schedule.dumps()]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(HERE)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONHASHSEED": "123"}, timeout=60)
    assert done.returncode == 0, done.stderr
    transcript, schedule = chat(SeededChooser(5))
    assert json.loads(done.stdout) == [transcript, schedule.dumps()]


def test_a_recorded_schedule_replays_and_a_doctored_one_is_caught() -> None:
    transcript, schedule = chat(SeededChooser(5))
    assert chat(replay=Schedule.loads(schedule.dumps())) == (transcript, schedule)
    index = next(i for i, d in enumerate(schedule.decisions)
                 if d.ran.startswith("verdict: delivered"))
    doctored = Schedule.loads(schedule.dumps())
    doctored.decisions[index] = replace(doctored.decisions[index], chosen=1)
    with pytest.raises(ScheduleDivergence, match="option 1 is verdict: held"):
        chat(replay=doctored)


def test_a_verdict_reads_as_what_the_network_did() -> None:
    """The client's second segment held for 3000 ms: the why the chooser was asked names
    every option, the schedule the one taken."""
    net = Network()
    chooser = nth_verdict_on("segment cli→srv", {1: 2})
    with no_real_sockets():
        result = run(PROGRAMS["echo"](net_place(net)), network=net, chooser=chooser)
    assert render_schedule(result.schedule) == (
        "FIFO except:\n  at t=5 ms (step 18), held segment cli→srv (4 bytes) for 3000 ms"
    )
    assert (
        "verdict at t=5 ms, step 18: delivered segment cli→srv (4 bytes) after 1 ms; "
        "or held segment cli→srv (4 bytes) for 5 ms; or held segment cli→srv (4 bytes) "
        "for 3000 ms"
    ) in chooser.asked
