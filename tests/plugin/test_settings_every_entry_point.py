"""One settings path: a bad `[tool.harness]` value is the same one line from every entry
point — `pytest -p harness`, `scan`, `check`, `prove` and `fuzz` — and the corrected
table (the control) gets past the settings in each."""

from __future__ import annotations

import pytest

from harness.cli import main

GOOD = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n'
BAD_LINES = {
    "unknown key": ("guard_fuctions = ['may_answer']", "guard_fuctions: unknown key"),
    "invariant id": ("invariants = ['INV9']", "invariants: unknown invariant 'INV9'"),
    "profile type": ("profile = 5", "profile: expected a non-empty string, got 5"),
    "adapter spec": ("adapter = 'no_colon_here'", "adapter: expected 'module:factory'"),
    "rule id": ("select = ['MESH999']", "select: unknown rule id 'MESH999'"),
}
COMMANDS = {
    "scan": ["scan", "--no-cache"],
    "check": ["check", "--quiet", "--no-prove", "--invariants", "INV1"],
    "prove": ["prove", "--mutant", "M8", "--check", "INV1"],
    "fuzz": ["fuzz", "--minutes", "0.01"],
}


def _table(bad: str) -> str:
    lines = [line for line in GOOD.splitlines() if line.split(" = ")[0] != bad.split(" = ")[0]]
    return "\n".join([*lines, bad]) + "\n"


def _cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1, err
    return err[0].split(": error: ", 1)[1]


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_the_same_bad_value_is_the_same_line_everywhere(
    case: str,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("hypofuzz", reason="the fuzz entry point needs the fuzz extra")
    bad, expected = BAD_LINES[case]
    pyproject = pytester.makepyprojecttoml(_table(bad))
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})

    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.USAGE_ERROR
    errors = [e for e in plugin.stderr.lines if e.startswith("ERROR:")]
    assert len(errors) == 1, errors
    line = errors[0].removeprefix("ERROR: mesh-harness: ")
    assert line.startswith(f"{pyproject}: [tool.harness] {expected}"), line

    capsys.readouterr()  # what the in-process pytest run printed
    monkeypatch.chdir(pytester.path)
    seen = {name: _cli_error(argv, capsys) for name, argv in COMMANDS.items()}
    assert seen == dict.fromkeys(COMMANDS, line)


def test_the_control_table_gets_past_the_settings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytester.makepyprojecttoml(GOOD)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    monkeypatch.chdir(pytester.path)
    assert main(["scan", "--no-cache"]) == 0
    capsys.readouterr()
    # A usage error found after the settings: proof that the table itself was accepted.
    assert main(["check", "--quiet", "--profile", "nightly"]) == 2
    assert "--profile: unknown profile 'nightly'" in capsys.readouterr().err
