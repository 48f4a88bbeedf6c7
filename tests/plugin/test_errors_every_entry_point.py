"""A file or server a setting names that cannot be used is the same one line, exit 2 (4 for
pytest's usage error), from every entry point that reads the setting: a missing or corrupt
baseline (`pytest -p harness`, `scan`, `check`), an unreachable shared database named by
`[tool.harness] shared_database` or `HARNESS_SHARED_DATABASE` (`pytest -p harness`,
`check`, `prove`). The controls: a baseline that exists, and a shared database that
answers, get past the settings (and `check` replays the configured database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.shared_database import SHARED_DATABASE_ENV

GOOD = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n'
UNREACHABLE = "redis://127.0.0.1:1/0"
BASELINE_COMMANDS = {
    "scan": ["scan", "--no-cache"],
    "check": ["check", "--quiet", "--no-prove", "--invariants", "INV1"],
}
DATABASE_COMMANDS = {
    "check": ["check", "--quiet", "--no-prove", "--invariants", "INV1"],
    "prove": ["prove", "--mutant", "M8", "--check", "INV1"],
}


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1, err  # one line: no traceback of the harness's own
    return err[0].split(": error: ", 1)[1]


def _plugin_error(pytester: pytest.Pytester) -> str:
    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.USAGE_ERROR
    errors = [e for e in plugin.stderr.lines if e.strip()]
    assert len(errors) == 1, errors
    return errors[0].removeprefix("ERROR: mesh-harness: ")


def _repo(pytester: pytest.Pytester, extra: str = "") -> Path:
    pytester.makepyprojecttoml(GOOD + extra)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    return pytester.path



def _assert_every_command_says(
    line: str, commands: dict[str, list[str]], repo: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Each command, run in `repo`, fails with the very line pytest -p harness gave."""
    capsys.readouterr()
    monkeypatch.chdir(repo)
    seen = {name: _cli_error(argv, capsys) for name, argv in commands.items()}
    assert seen == dict.fromkeys(commands, line)

@pytest.mark.parametrize("content", [None, "{not json", '{"version": 9}'],
                         ids=["missing", "corrupt", "wrong-version"])
def test_a_baseline_that_cannot_be_read_is_one_line_everywhere(
    content: str | None,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _repo(pytester, 'baseline = "harness-baseline.json"\n')
    if content is not None:
        (repo / "harness-baseline.json").write_text(content, encoding="utf-8")
    line = _plugin_error(pytester)
    assert line.startswith(f"{repo / 'harness-baseline.json'}: baseline "), line
    _assert_every_command_says(line, BASELINE_COMMANDS, repo, monkeypatch, capsys)


def test_control_an_empty_baseline_gets_past_the_settings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = _repo(pytester, 'baseline = "harness-baseline.json"\n')
    (repo / "harness-baseline.json").write_text('{"version": 1, "entries": []}\n')
    monkeypatch.chdir(repo)
    assert main(["scan", "--no-cache"]) == 0
    capsys.readouterr()
    # A usage error found after the baseline is read: proof that it was accepted.
    assert main(["check", "--quiet", "--no-prove", "--invariants", "INV0"]) == 2
    assert "--invariants: unknown invariant 'INV0'" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["key", "variable"])
def test_an_unreachable_shared_database_is_one_line_everywhere(
    where: str,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("redis", reason="a redis:// database needs the fuzz extra")
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    if where == "key":
        repo = _repo(pytester, f'shared_database = "{UNREACHABLE}"\n')
        origin = f"{repo / 'pyproject.toml'}: [tool.harness] shared_database"
    else:
        repo = _repo(pytester)
        monkeypatch.setenv(SHARED_DATABASE_ENV, UNREACHABLE)
        origin = SHARED_DATABASE_ENV
    line = _plugin_error(pytester)
    assert line.startswith(f"{origin}: database '{UNREACHABLE}': cannot reach the server"), line
    _assert_every_command_says(line, DATABASE_COMMANDS, repo, monkeypatch, capsys)


def test_the_option_wins_over_the_key_in_check(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The unreachable key is not contacted when `--shared-database` names another."""
    # Without the redis client the key's URL cannot be opened at all, whoever wins.
    pytest.importorskip("redis", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    repo = _repo(pytester, f'shared_database = "{UNREACHABLE}"\n')
    monkeypatch.chdir(repo)
    assert main(["check", "--quiet", "--profile", "nightly", "--shared-database", "shared"]) == 2
    assert "--profile: unknown profile 'nightly'" in capsys.readouterr().err


def test_control_check_replays_the_database_the_key_names(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv(SHARED_DATABASE_ENV, raising=False)
    repo = _repo(pytester, 'shared_database = "fuzz-db"\n')
    monkeypatch.chdir(repo)
    assert main([*DATABASE_COMMANDS["check"], "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_database"] == str(repo / "fuzz-db")


def test_every_user_error_has_the_one_base() -> None:
    from harness.jobs.scan.command import UsageError
    from invariants.adapter_spec import AdapterSpecError
    from invariants.checks import UnknownCheck
    from invariants.dynamic.database import DatabaseLost, DatabaseSpecError
    from invariants.fuzzing.config import FuzzConfigError
    from invariants.mutants.score.engine import EngineMissing
    from invariants.mutants.score.target import TargetError
    from invariants.mutants.score.triage import TriageError
    from invariants.scan.baseline import BaselineError
    from invariants.scan.config import ConfigError
    from invariants.scan.options import OptionError
    from invariants.user_errors import UserError

    errors = [ConfigError, BaselineError, OptionError, AdapterSpecError, DatabaseSpecError,
              DatabaseLost, FuzzConfigError, UnknownCheck, TargetError, TriageError,
              EngineMissing, UsageError]
    assert [e.__name__ for e in errors if not issubclass(e, UserError)] == []
    # What callers caught before keeps catching them.
    assert issubclass(UnknownCheck, ValueError) and issubclass(EngineMissing, ImportError)


@pytest.mark.parametrize("command", ["scan", "check", "prove", "fuzz", "adapter-check"])
def test_a_user_error_from_any_command_is_one_line_exit_2(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    from harness.cli import COMMANDS
    from invariants.user_errors import UserError

    def failing(args: object) -> int:
        raise UserError("the value 'x' of --y cannot be used")

    monkeypatch.setattr(importlib.import_module(COMMANDS[command]), "run", failing)
    assert main([command]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"mesh-harness {command}: error: the value 'x' of --y cannot be used"
    ]
