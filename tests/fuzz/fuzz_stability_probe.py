"""Fuzz one machine in this interpreter with HypoFuzz's own `FuzzTarget`, as a worker
does, and print what its coverage-guided corpus kept (JSON).

    python fuzz_stability_probe.py CHECK EXAMPLES [--unaligned]

HypoFuzz adds an input's behaviours to the corpus only when a re-execution of its choice
sequence reproduces them (its stability check), so non-zero counts mean the re-execution
replayed the same program. `--unaligned` leaves HypoFuzz's replay as it is (the negative
control). A script run in a fresh interpreter: it loads a Hypothesis profile globally.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hypofuzz.database import HypofuzzDatabase
from hypofuzz.hypofuzz import FuzzTarget
from hypothesis import settings
from hypothesis.database import InMemoryExampleDatabase
from hypothesis.stateful import get_state_machine_test

from invariants.dynamic.profiles import FUZZ, profile
from invariants.engine_internals.replay_alignment import align_replayed_choices
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.selection import build_machines


def probe(check_id: str, examples: int, aligned: bool) -> dict[str, Any]:
    database = InMemoryExampleDatabase()
    settings.register_profile("probe", settings(profile(FUZZ), database=database))
    settings.load_profile("probe")  # the provider reads the default database, as in a worker
    if aligned:
        align_replayed_choices()
    machine = build_machines(FuzzConfig(invariants=(check_id,)))[check_id]
    test: Any = get_state_machine_test(machine, settings=settings())
    target = FuzzTarget.from_hypothesis_test(test, database=HypofuzzDatabase(database))
    target.random.seed(0)
    target.provider.random.seed(0)
    target._enter_fixtures()
    for _ in range(examples):
        target.run_one()
    corpus = target.provider.corpus
    assert corpus is not None
    return {
        "inputs": target.provider.ninputs,
        "behaviours": len(corpus.behavior_counts),
        "fingerprints": len(corpus.fingerprints),
    }


if __name__ == "__main__":
    result = probe(sys.argv[1], int(sys.argv[2]), aligned="--unaligned" not in sys.argv)
    print(json.dumps(result))
