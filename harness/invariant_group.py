"""The invariant items of one adapter, judged as `check` judges them.

The first of an adapter's selected invariant items to run runs them all: each invariant's
machine judges the other selected invariants as a bystander, and each row then takes what
the others' runs saw of it (`harness.rows.merge`: their cases counted before "not
exercised" is decided, a violation they saw replayed on the row's own machine). An item's
verdict is so the row `check --invariants` gives for the same selection, and a correct mesh
whose obligations only another invariant's plan drives passes under either entry point.
Under pytest-xdist each worker that runs one of the group's items runs the group itself:
the same verdicts, the work done once per worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from harness.rows.build import row_of
from harness.rows.merge import merged
from harness.rows.row import InvariantRow
from harness.run_key import RUN_KEY
from harness.run_state import HarnessRun
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from invariants.dynamic.seed_programs import Program


@dataclass(frozen=True)
class Judged:
    outcome: Outcome  # the invariant's own run (the mesh's exception, its own failure text)
    row: InvariantRow  # the row, with what the group's other runs saw of it


# The session's judged groups: (adapter, selected invariant ids) -> each one's verdict.
GROUPS = pytest.StashKey[dict[tuple[str, tuple[str, ...]], dict[str, Judged]]]()


def judged(config: pytest.Config, adapter: str, check_ids: Sequence[str],
           check_id: str) -> Judged:
    """`check_id`'s verdict on `adapter` among the selected `check_ids` (run once per
    adapter and selection, on first use)."""
    groups = config.stash.setdefault(GROUPS, {})
    key = (adapter, tuple(check_ids))
    if key not in groups:
        groups[key] = _judge_group(config.stash[RUN_KEY], adapter, check_ids)
    return groups[key][check_id]


def _judge_group(run: HarnessRun, adapter: str,
                 check_ids: Sequence[str]) -> dict[str, Judged]:
    factory = run.factories[adapter]
    params = run.settings.params
    outcomes = {
        check_id: run_invariant(check_id, factory, run.profile, params=params,
                                seed_scenarios=not run.settings.search_only,
                                bystanders=len(check_ids) > 1)  # alone: no one to tell
        for check_id in check_ids
    }

    def replay(_adapter: str, check_id: str, program: Program, name: str) -> Outcome:
        return run_program(check_id, factory, program, params=params, name=name,
                           bystanders=False)

    rows = merged([row_of(outcome, adapter) for outcome in outcomes.values()], replay,
                  lambda _line: None)
    return {row.check_id: Judged(outcomes[row.check_id], row) for row in rows}
