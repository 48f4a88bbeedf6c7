"""`--harness-shared-database`, the `harness_shared_database` ini key, `[tool.harness]
shared_database` and `HARNESS_SHARED_DATABASE`: the invariant items replay what was saved
there for their mesh, the option winning over the ini key over the table over the
variable; a bad value is one error line naming where it was given.

The saved failure comes from a mesh whose bug the `ci` profile does not find by itself
(`fuzz_rare_resend_mesh`: M2's bug on hub h2 only, in long runs), found by a longer
derandomized run of longer programs, as a fuzzing session would find it. The controls:
the same run without the database passes, and so does a twin of the mesh with it (a
failure replays only on its own mesh).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from redis_client import UNREACHABLE

from harness.shared_database import SHARED_DATABASE_ENV
from invariants.checks import CHECKS
from invariants.dynamic.profiles import CI, profile
from invariants.dynamic.runner import run_invariant

FUZZ_TESTS = Path(__file__).resolve().parents[1] / "fuzz"
RARE = "fuzz_rare_resend_mesh:make_adapter"
TABLE = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV4"]\n'


@pytest.fixture(autouse=True)
def _rare_mesh_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FUZZ_TESTS))
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A directory database holding the rare mesh's INV4 failure, and its step program."""
    import sys

    sys.path.insert(0, str(FUZZ_TESTS))
    try:
        from fuzz_rare_resend_mesh import make_adapter
    finally:
        sys.path.remove(str(FUZZ_TESTS))
    directory = tmp_path_factory.mktemp("shared")
    ci = profile(CI)
    search = settings(ci, max_examples=500, stateful_step_count=60,
                      phases=(Phase.reuse, *ci.phases),
                      database=DirectoryBasedExampleDatabase(directory))
    outcome = run_invariant("INV4", make_adapter, search)
    assert outcome.verdict == "violation", outcome.failure_text
    return directory, _steps(outcome.failure_text or "")


def _steps(text: str) -> list[str]:
    report = text.split("short test summary info", 1)[0]
    return [line.strip() for line in report.splitlines() if line.strip().startswith("state.")]


def _repo(pytester: pytest.Pytester, table: str = TABLE, ini: str = "") -> None:
    text = table + ("\n[tool.pytest.ini_options]\n" + ini if ini else "")
    pytester.makepyprojecttoml(text)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "harness", "-m", "harness_invariant", "-p",
                              "no:cacheprovider", *args)


@pytest.mark.slow
def test_the_option_replays_the_saved_failure_on_its_mesh(
    pytester: pytest.Pytester, saved: tuple[Path, list[str]]
) -> None:
    directory, steps = saved
    _repo(pytester)
    result = _run(pytester, f"--harness-adapter={RARE}",
                  f"--harness-shared-database={directory}")
    result.assert_outcomes(failed=1)
    assert f"INV4 ({CHECKS['INV4'].title}) violated by {RARE}" in result.stdout.str()
    assert steps and _steps(result.stdout.str()) == steps


def test_control_without_a_shared_database_the_mesh_passes(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    _run(pytester, f"--harness-adapter={RARE}").assert_outcomes(passed=1)


TWIN = """
from fuzz_rare_resend_mesh import make_adapter as rare


def make_adapter(chooser):
    return rare(chooser)
"""


@pytest.mark.slow
def test_another_mesh_does_not_replay_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    saved: tuple[Path, list[str]],
) -> None:
    """A twin of the rare mesh (the same bug under another name) with the same database
    passes: `ci` draws the same programs on both and does not find the bug by itself, and
    the failure saved for the rare mesh is not replayed on its twin."""
    directory, _ = saved
    _repo(pytester)
    pytester.makepyfile(twin_mesh=TWIN)
    monkeypatch.syspath_prepend(str(pytester.path))
    result = _run(pytester, "--harness-adapter=twin_mesh:make_adapter",
                  f"--harness-shared-database={directory}")
    result.assert_outcomes(passed=1)
    # The control: the twin claiming the rare mesh's identity replays the failure.
    pytester.makepyfile(twin_claiming=TWIN + f"\n\nmake_adapter.harness_mesh_id = {RARE!r}\n")
    claimed = _run(pytester, "--harness-adapter=twin_claiming:make_adapter",
                   f"--harness-shared-database={directory}")
    claimed.assert_outcomes(failed=1)


@pytest.mark.parametrize("where", ["ini", "table", "environment"])
@pytest.mark.slow
def test_the_ini_key_the_table_and_the_variable_name_it_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    saved: tuple[Path, list[str]], where: str,
) -> None:
    directory, steps = saved
    table, ini = TABLE, ""
    if where == "ini":
        ini = f'harness_shared_database = "{directory}"\n'
    elif where == "table":
        table += f'shared_database = "{directory}"\n'
    else:
        monkeypatch.setenv(SHARED_DATABASE_ENV, str(directory))
    _repo(pytester, table, ini)
    result = _run(pytester, f"--harness-adapter={RARE}")
    result.assert_outcomes(failed=1)
    assert _steps(result.stdout.str()) == steps


@pytest.mark.parametrize("winner", ["option", "ini", "table"])
@pytest.mark.slow
def test_the_option_wins_over_the_ini_key_over_the_table_over_the_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    saved: tuple[Path, list[str]], winner: str,
) -> None:
    """Each source names the saved failure in turn while every lower one names an empty
    database and every higher one is absent: the run fails only if the winner is read."""
    directory, _ = saved
    empty = pytester.path / "empty-db"
    empty.mkdir()
    chosen = {"option": empty, "ini": empty, "table": empty}
    chosen[winner] = directory
    order = ["option", "ini", "table"]
    given = order[order.index(winner):]  # the winner and everything below it
    monkeypatch.setenv(SHARED_DATABASE_ENV, str(empty))
    table = TABLE + (f'shared_database = "{chosen["table"]}"\n' if "table" in given else "")
    ini = f'harness_shared_database = "{chosen["ini"]}"\n' if "ini" in given else ""
    _repo(pytester, table, ini)
    args = [f"--harness-shared-database={chosen['option']}"] if "option" in given else []
    _run(pytester, f"--harness-adapter={RARE}", *args).assert_outcomes(failed=1)
    # The control: the winner names the empty database as well, and the run passes. (The
    # failing run kept its failure in the local database, as CI does: start afresh.)
    shutil.rmtree(pytester.path / ".hypothesis")
    swapped = [f"--harness-shared-database={empty}"] if winner == "option" else args
    table = table.replace(str(directory), str(empty))
    ini = ini.replace(str(directory), str(empty))
    _repo(pytester, table, ini)
    _run(pytester, f"--harness-adapter={RARE}", *swapped).assert_outcomes(passed=1)


@pytest.mark.slow
def test_a_relative_table_path_is_relative_to_the_pyproject(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    saved: tuple[Path, list[str]],
) -> None:
    """Started from a subdirectory holding an empty `db` of its own: the table's `db` is the
    one beside the pyproject, which holds the failure."""
    directory, _ = saved
    (pytester.path / "db").symlink_to(directory, target_is_directory=True)
    _repo(pytester, TABLE + 'shared_database = "db"\n')
    elsewhere = pytester.path / "sub"
    (elsewhere / "db").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    result = pytester.runpytest("-p", "harness", "-m", "harness_invariant",
                                f"--harness-adapter={RARE}", f"--rootdir={pytester.path}",
                                "-c", str(pytester.path / "pyproject.toml"))
    result.assert_outcomes(failed=1)


def _one_error(result: pytest.RunResult, *fragments: str) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1, result.stderr.lines
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert "Traceback" not in result.stderr.str()
    return errors[0]


@pytest.mark.parametrize(
    ("table_line", "ini", "option", "fragments"),
    [
        ("", "", "--harness-shared-database=ftp://host/x",
         ("--harness-shared-database: database 'ftp://host/x': unsupported URL scheme",)),
        ("", "", "--harness-shared-database= ",
         ("--harness-shared-database: expected a directory or a redis:// URL",)),
        ("", "", "--harness-shared-database=pyproject.toml",
         ("--harness-shared-database: database", "exists and is not a directory")),
        ("", "", "--harness-shared-database=redis://127.0.0.1:1/0",
         (f"--harness-shared-database: database 'redis://127.0.0.1:1/0': {UNREACHABLE}",)),
        ("", 'harness_shared_database = "ftp://host/x"\n', "",
         ("pyproject.toml: harness_shared_database: database 'ftp://host/x'",)),
        ('shared_database = "ftp://host/x"\n', "", "",
         ("[tool.harness] shared_database: database 'ftp://host/x'",)),
        ("shared_database = 3\n", "", "",
         ("[tool.harness] shared_database: expected a non-empty string, got 3",)),
    ],
)
def test_a_bad_value_is_one_error_line_naming_where_it_was_given(
    pytester: pytest.Pytester, table_line: str, ini: str, option: str,
    fragments: tuple[str, ...],
) -> None:
    _repo(pytester, TABLE + table_line, ini)
    result = pytester.runpytest("-p", "harness", *([option] if option else []))
    line = _one_error(result, *fragments)
    assert line.startswith("ERROR: mesh-harness: ")


def test_a_bad_variable_is_named_and_an_option_overrides_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SHARED_DATABASE_ENV, "ftp://host/x")
    _repo(pytester, '[tool.harness]\npaths = ["src"]\ninvariants = []\n')
    _one_error(pytester.runpytest("-p", "harness"),
               f"{SHARED_DATABASE_ENV}: database 'ftp://host/x': unsupported URL scheme")
    # The control: an option naming a good database takes its place.
    good = pytester.path / "good-db"
    result = pytester.runpytest("-p", "harness", f"--harness-shared-database={good}")
    result.assert_outcomes(passed=2)  # the file's scan item and the run's


LOAD_PROBE = """
import sys
import tempfile
from pathlib import Path

import harness.plugin

WATCHED = ("invariants.dynamic.profiles", "invariants.dynamic.database")
print(sorted(m for m in WATCHED if m in sys.modules))
from harness.shared_database import environment_database

environment_database({"HARNESS_SHARED_DATABASE": tempfile.mkdtemp()}, Path("."))
print(sorted(m for m in WATCHED if m in sys.modules))
"""


def test_loading_the_plugin_neither_opens_databases_nor_registers_profiles() -> None:
    """The plugin loads in every pytest run of an environment that has it installed: the
    shared-database support imports Hypothesis' databases only when a database is named,
    and never the harness's profiles. The control: naming one imports the databases."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != SHARED_DATABASE_ENV}
    result = subprocess.run([sys.executable, "-c", LOAD_PROBE], env=env, capture_output=True,
                            text=True, check=True)
    assert result.stdout.splitlines() == [
        "[]", "['invariants.dynamic.database']"
    ]
