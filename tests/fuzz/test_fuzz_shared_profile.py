"""Profiles reading the shared database read-only beside their local one: named by the
environment variable for the process, or by an option for a block (`replaying`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)

from invariants.dynamic.profiles import (
    CI,
    DEV,
    PROFILES,
    SHARED_DATABASE_ENV,
    profile,
    replaying,
    with_shared_database,
)

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


PROBE = "from invariants.dynamic.profiles import PROFILES; print(repr(PROFILES['ci'].database))"


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


def _replays(chosen: settings) -> bool:
    return isinstance(chosen.database, MultiplexedDatabase)


def test_replaying_switches_the_named_profiles_for_a_block_and_restores_them(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    assert not _replays(profile(CI))  # control: this process names no shared database
    with replaying(str(shared), "--harness-shared-database"):
        assert _replays(profile(CI)) and _replays(PROFILES[DEV])
        assert _replays(settings.get_profile(CI))  # as registered with Hypothesis
        read_only = profile(CI).database._wrapped[1]  # type: ignore[union-attr]
        assert read_only == ReadOnlyDatabase(DirectoryBasedExampleDatabase(shared.resolve()))
        with replaying(None, "--shared-database"):  # None: no shared database at all
            assert profile(CI).database is None
        assert _replays(profile(CI))
    assert profile(CI).database is None and settings.get_profile(CI).database is None


def test_replaying_a_bad_spec_names_its_origin_and_changes_nothing() -> None:
    before = dict(PROFILES)
    block = replaying("ftp://x/y", "--shared-database")
    with pytest.raises(ValueError, match="--shared-database: database 'ftp://x/y'"):
        block.__enter__()
    assert dict(PROFILES) == before


BAD_VARIABLE_PROBE = """
from invariants.dynamic.profiles import CI, profile, replaying
try:
    profile(CI)
except ValueError as exc:
    print("error:", exc)
with replaying({shared!r}, "--harness-shared-database"):
    print("replaying:", type(profile(CI).database).__name__)
"""


def test_a_bad_variable_is_an_error_when_a_profile_is_asked_for_not_at_import(
    tmp_path: Path,
) -> None:
    env = {**os.environ, SHARED_DATABASE_ENV: "ftp://x/y"}
    probe = BAD_VARIABLE_PROBE.format(shared=str(tmp_path / "shared"))
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env,
                            capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [
        f"error: {SHARED_DATABASE_ENV}: database 'ftp://x/y': unsupported URL scheme "
        "(use redis://host:port/db or a directory)",
        "replaying: MultiplexedDatabase",
    ]
