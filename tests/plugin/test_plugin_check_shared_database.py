"""The shared database outside the invariant items: `python -m harness check` and `prove`
with `--shared-database SPEC` (over `HARNESS_SHARED_DATABASE`), and the kill-matrix items.
Each run records the database in the settings its invariant runs were given; the control
is the same run naming none. The named profiles themselves never change."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    MultiplexedDatabase,
    ReadOnlyDatabase,
)
from prove_selection import ONLY_M3
from redis_client import UNREACHABLE

import harness.jobs.check.run
import harness.prove_items
import invariants.mutants.matrix
from harness.cli import main
from harness.shared_database import SHARED_DATABASE_ENV
from invariants.dynamic.profiles import CI, profile
from invariants.mutants.registry import MUTANTS

# One job: the runs replay in this process, where the tests' patches record what they read.
ARGS = ["check", "--no-prove", "--invariants", "INV1", "--quiet", "--jobs", "1"]


def _shared_directory(database: object) -> Path | None:
    """The directory a profile's database replays read-only, None when it has none."""
    if database is None:
        return None
    assert isinstance(database, MultiplexedDatabase)
    read_only = database._wrapped[1]
    assert isinstance(read_only, ReadOnlyDatabase)
    shared = read_only._wrapped
    assert isinstance(shared, DirectoryBasedExampleDatabase)
    return Path(shared.path)


def _recording(original: Callable[..., Any], seen: list[Path | None]) -> Callable[..., Any]:
    """`original`, noting which shared database the settings it is given replay."""

    def call(check: str, factory: Any, given: settings, *args: Any, **kwargs: Any) -> Any:
        assert isinstance(given, settings)  # a settings object, never a profile's name
        seen.append(_shared_directory(given.database))
        return original(check, factory, given, *args, **kwargs)

    return call


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Path | None]:
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    calls: list[Path | None] = []
    monkeypatch.setattr(harness.jobs.check.run, "run_invariant",
                        _recording(harness.jobs.check.run.run_invariant, calls))
    return calls


def test_check_replays_the_named_database(
    seen: list[Path | None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    assert main([*ARGS, "--shared-database", str(shared)]) == 0
    assert seen == [shared.resolve()]
    assert f"; profile ci, replaying {shared.resolve()}" in capsys.readouterr().out
    assert profile(CI).database is None  # the named profile is untouched


def test_control_check_without_one_replays_nothing(
    seen: list[Path | None], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*ARGS, "--format", "json"]) == 0
    assert seen == [None]
    assert json.loads(capsys.readouterr().out)["shared_database"] is None


@pytest.mark.slow
def test_the_option_wins_over_the_variable(
    seen: list[Path | None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    variable, option = (tmp_path / "from-variable").resolve(), (tmp_path / "option").resolve()
    monkeypatch.setenv(SHARED_DATABASE_ENV, str(variable))
    assert main([*ARGS, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_database"] == str(variable)
    assert main([*ARGS, "--format", "json", "--shared-database", str(option)]) == 0
    assert json.loads(capsys.readouterr().out)["shared_database"] == str(option)
    assert seen == [variable, option]


@pytest.mark.parametrize(
    ("option", "variable", "expected"),
    [
        ("ftp://host/x", None, "--shared-database: database 'ftp://host/x': unsupported URL"),
        (None, "ftp://host/x",
         f"{SHARED_DATABASE_ENV}: database 'ftp://host/x': unsupported URL"),
        ("redis://127.0.0.1:1/0", None,
         f"--shared-database: database 'redis://127.0.0.1:1/0': {UNREACHABLE}"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(
    seen: list[Path | None], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], option: str | None, variable: str | None,
    expected: str,
) -> None:
    if variable is not None:
        monkeypatch.setenv(SHARED_DATABASE_ENV, variable)
    assert main([*ARGS, *(["--shared-database", option] if option else [])]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mesh-harness check: error: ")
    assert expected in lines[0]
    assert seen == []  # nothing ran


@pytest.mark.parametrize("named", [True, False])
def test_a_kill_matrix_item_replays_the_run_s_database(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    calls: list[Path | None] = []
    monkeypatch.setattr(harness.prove_items, "dynamic_cell",
                        _recording(harness.prove_items.dynamic_cell, calls))
    pytester.makepyprojecttoml('[tool.harness]\npaths = ["src"]\ninvariants = []\n')
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    shared = pytester.path / "shared"
    option = [f"--harness-shared-database={shared}"] if named else []
    result = pytester.runpytest("-p", "harness", "--harness-prove", "-k", ONLY_M3, *option)
    result.assert_outcomes(passed=1, deselected=len(MUTANTS) + 1)
    assert calls == [shared if named else None]  # M3 is killed by INV2 alone
    assert profile(CI).database is None


PROVE = ["prove", "--mutant", "M3", "--check", "INV2", "--expected-only", "--format", "json",
         "--jobs", "1"]


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.slow
def test_prove_replays_the_named_database_for_the_reference_and_the_mutant(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    named: bool,
) -> None:
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    calls: list[Path | None] = []
    monkeypatch.setattr(invariants.mutants.matrix, "run_invariant",
                        _recording(invariants.mutants.matrix.run_invariant, calls))
    shared = tmp_path / "shared"
    option = ["--shared-database", str(shared)] if named else []
    assert main([*PROVE, *option]) == 0
    assert json.loads(capsys.readouterr().out)["mutants"]["M3"]["INV2"]["killed"] is True
    expected = shared.resolve() if named else None
    assert calls == [expected, expected]  # the reference's INV2, then M3's
    assert profile(CI).database is None


def test_prove_names_a_bad_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SHARED_DATABASE_ENV, "ftp://host/x")
    assert main(PROVE) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"mesh-harness prove: error: {SHARED_DATABASE_ENV}: database 'ftp://host/x': "
        "unsupported URL scheme (use redis://host:port/db or a directory)"
    ]
