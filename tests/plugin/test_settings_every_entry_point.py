"""One settings path: a bad `[tool.harness]` value is the same one line from every entry
point — `pytest -p harness`, `scan`, `check`, `prove` and `fuzz` — and the corrected
table (the control) gets past the settings in each; good figures of
`[tool.harness.params]` reach the checkers from every entry point that runs them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

GOOD = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n'
BAD_LINES = {
    "unknown key": ("guard_fuctions = ['may_answer']", "guard_fuctions: unknown key"),
    "invariant id": ("invariants = ['INV9']", "invariants: unknown invariant 'INV9'"),
    "team invariant": ("invariants = ['nowhere_at_all.checks:LEASES']",
                       "invariants: 'nowhere_at_all.checks:LEASES': cannot import module "
                       "'nowhere_at_all.checks'"),
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


@pytest.mark.parametrize(("variable", "raw", "expected"), [
    ("HARNESS_STEP_BUDGET", "soon", "HARNESS_STEP_BUDGET='soon': not a number of seconds"),
    ("HARNESS_STEP_WALL_BUDGET", "-1", "HARNESS_STEP_WALL_BUDGET='-1': must be 0 (no budget) "
                                       "or more"),
])
def test_a_bad_step_budget_is_the_same_line_from_every_entry_point_that_runs_steps(
    variable: str, raw: str, expected: str,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Checked with the settings, not at the first step (where it was a failed check
    blaming the adapter); `scan` runs no step and reads no environment."""
    pytest.importorskip("hypofuzz", reason="the fuzz entry point needs the fuzz extra")
    pytester.makepyprojecttoml(GOOD)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    monkeypatch.setenv(variable, raw)

    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.USAGE_ERROR
    errors = [e for e in plugin.stderr.lines if e.startswith("ERROR:")]
    assert errors == [f"ERROR: mesh-harness: {expected}"]

    capsys.readouterr()
    monkeypatch.chdir(pytester.path)
    stepping = {name: argv for name, argv in COMMANDS.items() if name != "scan"}
    stepping["adapter-check"] = ["adapter-check"]
    seen = {name: _cli_error(argv, capsys) for name, argv in stepping.items()}
    assert seen == dict.fromkeys(stepping, expected)
    assert main(["scan", "--no-cache"]) == 0  # the control: no step, no budget read


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


# Two figures other than the seeds', each of which the reference mesh fails: it re-sends a
# rejected call 6 times (held to 2: "attempted more than 3 times"), and its rejections are
# `RejectionError`s (not re-sendable here: adapter conformance says so).
FIGURES = (
    '[tool.harness]\npaths = ["src"]\ninvariants = ["INV4"]\n'
    '[tool.harness.params]\ndelivery_retries = 2\nresendable_errors = ["CalleeRefused"]\n'
)
RETRIES = "INV4: delivery d1 attempted more than 3 times"
RESENDABLE = "which is not a resendable error: name it in resendable_errors"


class _SessionPlanned(Exception):
    """Raised where a `fuzz` session would start: what it was given is all the test needs."""


def _worker_params(argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The figures the INV4 checker of a fuzzing worker holds the mesh to, built as a
    worker builds its targets (`invariants.fuzzing.targets`): from the session's
    environment, without starting the session."""
    import invariants.fuzzing.run as fuzz_run
    from invariants.fuzzing.config import FuzzConfig
    from invariants.fuzzing.selection import build_machines
    from invariants.fuzzing.session import session_environ

    planned: list[tuple[Any, Any]] = []

    def planning(plan: Any, session_dir: Path, environ: Any = None) -> Any:
        planned.append((plan, environ))
        raise _SessionPlanned

    monkeypatch.setattr(fuzz_run, "run_fuzz", planning)
    with pytest.raises(_SessionPlanned):
        main(argv)
    (plan, environ), = planned
    worker = FuzzConfig.from_environ(session_environ(plan, environ, Path.cwd(), tmp_path))
    machine = build_machines(worker)["INV4"]()
    machine.start((None, None, None), {})
    (monitor,) = machine.judge.monitors
    machine.teardown()
    return monitor.params


def test_good_figures_reach_the_checkers_from_every_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    pytest.importorskip("hypofuzz", reason="the fuzz entry point needs the fuzz extra")
    pytester.makepyprojecttoml(FIGURES)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})

    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.TESTS_FAILED
    plugin.stdout.fnmatch_lines([f"*{RETRIES}*"])
    capsys.readouterr()
    monkeypatch.chdir(pytester.path)

    assert main(["check", "--quiet", "--no-prove", "--invariants", "INV4"]) == 1
    out = capsys.readouterr().out
    assert RETRIES in out and RESENDABLE in out

    assert main(["adapter-check"]) == 1
    assert RESENDABLE in capsys.readouterr().out

    # `prove --mutate` holds the mesh it mutates to the figures (the kill matrix proves the
    # bundled reference and its mutants at the seeds' figures).
    from harness.jobs.prove import mutate
    from harness.settings import for_command

    reference = Path(__file__).parents[2] / "reference_impl"
    target = mutate._target(argparse.Namespace(mutate=[str(reference)], check=[]), for_command())
    assert target.params.delivery_retries == 2
    assert target.params.resendable_errors == frozenset({"CalleeRefused"})

    seen = _worker_params(["fuzz", "--minutes", "0.01", "--workers", "1"], monkeypatch,
                          tmp_path)
    assert seen.delivery_retries == 2 and seen.resendable_errors == frozenset({"CalleeRefused"})
    # The job's --param overrides the table there as everywhere.
    seen = _worker_params(["fuzz", "--minutes", "0.01", "--param", "delivery_retries=4"],
                          monkeypatch, tmp_path)
    assert seen.delivery_retries == 4 and seen.resendable_errors == frozenset({"CalleeRefused"})
