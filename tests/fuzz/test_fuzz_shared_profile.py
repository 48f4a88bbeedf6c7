"""Profiles reading the shared database read-only beside their local one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import Phase
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

from invariants.profiles import CI, DEV, PROFILES, SHARED_DATABASE_ENV, with_shared_database

REPO = Path(__file__).resolve().parents[2]


def test_ci_replays_the_shared_database_and_stays_derandomized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the local database is `.hypothesis/examples` here
    shared = tmp_path / "shared"
    assert Phase.reuse not in PROFILES[CI].phases  # control: plain ci replays nothing
    chosen = with_shared_database(PROFILES[CI], str(shared))
    assert chosen.derandomize is True
    assert Phase.reuse in chosen.phases and Phase.generate in chosen.phases
    database = chosen.database
    assert isinstance(database, MultiplexedDatabase)
    local, read_only = database._wrapped
    assert isinstance(local, DirectoryBasedExampleDatabase)
    assert read_only == ReadOnlyDatabase(DirectoryBasedExampleDatabase(shared.resolve()))
    # A failure saved by a session is fetched; what the CI run saves stays local.
    DirectoryBasedExampleDatabase(shared).save(b"key", b"session")
    database.save(b"key", b"ci")
    assert set(database.fetch(b"key")) == {b"session", b"ci"}
    assert list(DirectoryBasedExampleDatabase(shared).fetch(b"key")) == [b"session"]
    assert list(DirectoryBasedExampleDatabase(tmp_path / ".hypothesis" / "examples").fetch(
        b"key")) == [b"ci"]


def test_a_profile_with_its_own_database_keeps_it_as_the_local_one(tmp_path: Path) -> None:
    own = DirectoryBasedExampleDatabase(tmp_path / "own")
    base = PROFILES[DEV]
    chosen = with_shared_database(type(base)(base, database=own), str(tmp_path / "shared"))
    assert isinstance(chosen.database, MultiplexedDatabase)
    assert chosen.database._wrapped[0] is own


def test_a_bad_shared_spec_names_the_variable() -> None:
    with pytest.raises(ValueError, match=f"{SHARED_DATABASE_ENV}: database 'ftp://x/y'"):
        with_shared_database(PROFILES[CI], "ftp://x/y")


PROBE = "from invariants.profiles import PROFILES; print(repr(PROFILES['ci'].database))"


def _profiles_database(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != SHARED_DATABASE_ENV}
    if env_value is not None:
        env[SHARED_DATABASE_ENV] = env_value
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env,
                            capture_output=True, text=True, check=True)
    return result.stdout.strip()


def test_the_environment_variable_switches_every_profile_to_replay(tmp_path: Path) -> None:
    assert _profiles_database(None) == "None"  # control: ci has no database by default
    replaying = _profiles_database(str(tmp_path / "shared"))
    assert replaying.startswith("MultiplexedDatabase(") and "ReadOnlyDatabase(" in replaying
