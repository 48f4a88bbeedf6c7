"""Failures a session saved: watch for new ones, and replay each to show it.

HypoFuzz saves a failure as soon as it finds one (unshrunk, under the test's secondary
key) and the shrunk one under the test's own key, the key Hypothesis replays first.
`FailureWatcher` notices either key gaining an entry during the session. After the
session, `collect_failures` re-runs each test's saved examples in this process under
Hypothesis (`replay_settings`) and shrinks a failing one as the `ci` profile would: it
comes back with its violations, the shrunk step program, the reproduce blob and the
Mermaid trace diagram; saved examples that no longer fail are reported as stale, not as
a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import ExampleDatabase

from invariants.dynamic.database import DatabaseLost
from invariants.dynamic.driver import MeshMachine
from invariants.dynamic.mesh_keys import run_keyed_machine
from invariants.dynamic.profiles import CI, FUZZ
from invariants.dynamic.profiles import profile as named_profile
from invariants.dynamic.report import InvariantViolated, failure_text


@dataclass(frozen=True)
class SavedFailure:
    check_id: str
    entries: int  # examples saved under the test's key
    new_entries: int  # of which saved during this session
    reproduces: bool
    violation: bool  # an invariant failed (not an error raised by the mesh)
    text: str | None  # violations, step program, diagram, reproduce blob


def secondary_key(key: bytes) -> bytes:
    """Where Hypothesis and HypoFuzz keep failures not yet (or no longer) minimal."""
    return key + b".secondary"


class FailureWatcher:
    """Remembers each test's saved failures at the start, and reports tests that gained
    one (shrunk or not)."""

    def __init__(self, database: ExampleDatabase, keys: Mapping[str, bytes]) -> None:
        self.database = database
        self.keys = dict(keys)
        self.baseline = {check: self.saved(check) for check in self.keys}

    def saved(self, check_id: str) -> frozenset[bytes]:
        key = self.keys[check_id]
        return frozenset(self.database.fetch(key)) | frozenset(
            self.database.fetch(secondary_key(key))
        )

    def new_entries(self, check_id: str) -> frozenset[bytes]:
        return self.saved(check_id) - self.baseline[check_id]

    def checks_with_new_failures(self) -> list[str]:
        return [check for check in self.keys if self.new_entries(check)]


def replay_settings(database: ExampleDatabase) -> settings:
    """Replay the saved examples and shrink a failing one as the `ci` profile would.

    A session may stop before HypoFuzz has shrunk its failure, and HypoFuzz's shrinker
    stops earlier than Hypothesis' own, so the failure is shrunk here, derandomized like
    `ci`, with the database writable: the minimal example is saved under the test's key
    (larger ones move aside), which is the counterexample a `ci` run replaying the shared
    database then reports. Steps up to the
    `fuzz` profile's count, so a long saved program is read as it was recorded. No
    generation: only what the session saved is run.
    """
    return settings(
        named_profile(CI),
        database=database,
        phases=(Phase.reuse, Phase.shrink),
        stateful_step_count=max(
            named_profile(CI).stateful_step_count, named_profile(FUZZ).stateful_step_count
        ),
        print_blob=True,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )


def replay(machine: type[MeshMachine], database: ExampleDatabase) -> tuple[bool, bool, str | None]:
    """(reproduces, is a violation, failure text) for the machine's saved examples."""
    try:
        run_keyed_machine(machine, replay_settings(database))
    except InvariantViolated as exc:
        return True, True, failure_text(exc)
    except DatabaseLost:  # the database's server, not the mesh: no failure to show
        raise
    except Exception as exc:  # the mesh or adapter raised: still a saved failure
        return True, False, failure_text(exc)
    return False, False, None


def collect_failures(
    watcher: FailureWatcher, machines: Mapping[str, type[MeshMachine]]
) -> list[SavedFailure]:
    found: list[SavedFailure] = []
    for check_id, machine in machines.items():
        saved = watcher.saved(check_id)
        if not saved:
            continue
        reproduces, violation, text = replay(machine, watcher.database)
        found.append(
            SavedFailure(
                check_id=check_id,
                entries=len(saved),
                new_entries=len(saved - watcher.baseline[check_id]),
                reproduces=reproduces,
                violation=violation,
                text=text,
            )
        )
    return found


def as_json(failure: SavedFailure) -> dict[str, Any]:
    return {
        "check": failure.check_id,
        "entries": failure.entries,
        "new_entries": failure.new_entries,
        "reproduces": failure.reproduces,
        "violation": failure.violation,
        "text": failure.text,
    }
