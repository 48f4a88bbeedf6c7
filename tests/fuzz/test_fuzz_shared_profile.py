"""Profiles reading the shared database read-only beside their local one, laid over them
by value (`with_shared_database`); the environment never rewrites them."""

from __future__ import annotations

import json
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

from harness.shared_database import SHARED_DATABASE_ENV
from invariants.dynamic.profiles import CI, DEV, PROFILES, with_shared_database

REPO = Path(__file__).resolve().parents[2]


def test_ci_replays_the_shared_database_and_stays_derandomized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the local database is `.hypothesis/examples` here
    shared = tmp_path / "shared"
    assert Phase.reuse not in PROFILES[CI].phases  # control: plain ci replays nothing
    chosen = with_shared_database(PROFILES[CI], str(shared), "test")
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
    chosen = with_shared_database(type(base)(base, database=own), str(tmp_path / "shared"),
                                  "test")
    assert isinstance(chosen.database, MultiplexedDatabase)
    assert chosen.database._wrapped[0] is own


def test_a_bad_shared_spec_names_where_it_was_given() -> None:
    with pytest.raises(ValueError, match="--shared-database: database 'ftp://x/y'"):
        with_shared_database(PROFILES[CI], "ftp://x/y", "--shared-database")


PROBE = """
import json
from hypothesis import settings
from invariants.dynamic.profiles import PROFILES, with_shared_database
databases = {{name: repr(chosen.database) for name, chosen in PROFILES.items()}}
registered = {{name: repr(settings.get_profile(name).database) for name in PROFILES}}
replaying = type(with_shared_database(PROFILES["ci"], {shared!r}, "probe").database).__name__
print(json.dumps([databases, registered, replaying]))
"""


def test_the_profiles_are_values_the_environment_does_not_rewrite(tmp_path: Path) -> None:
    """Only the entry points read `HARNESS_SHARED_DATABASE` (`harness.settings`): importing
    the profiles with it set, even to a bad SPEC, leaves every profile as defined."""
    for value in (str(tmp_path / "shared"), "ftp://x/y"):
        env = {**os.environ, SHARED_DATABASE_ENV: value}
        probe = PROBE.format(shared=str(tmp_path / "shared"))
        result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env,
                                capture_output=True, text=True, check=True)
        databases, registered, replaying = json.loads(result.stdout)
        assert databases["ci"] == registered["ci"] == "None"
        assert "ReadOnlyDatabase" not in repr(databases) + repr(registered)
        # Control: the same SPEC laid over a profile by value does replay.
        assert replaying == "MultiplexedDatabase"
