"""An adapter that raises `SystemExit` or `KeyboardInterrupt` (from its factory or a step)
is an error of that adapter, named, with the adapter's own traceback: never the run's exit
code (before: `check` exited 0 and printed nothing on `SystemExit(0)`, and exited 130,
"interrupted", on the adapter's own `KeyboardInterrupt`). A real Ctrl-C arriving while the
adapter runs stays an interrupt (exit 130). Under `pytest -p harness` the item shows the
adapter's frames, not the plugin's, the harness's, Hypothesis's or pytest's (before:
about a thousand lines, most of them pytest's internals)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import exiting_adapters
import pytest

import harness
from invariants.adapter_calls import AdapterExited, calling_adapter
from invariants.dynamic.runner import run_invariant

WORKTREE = Path(harness.__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
CASES = {
    "factory_exit": ("SystemExit(0)", "from its factory"),
    "factory_interrupt": ("KeyboardInterrupt()", "from its factory"),
    "step_exit": ("SystemExit(0)", "in step "),
    "step_interrupt": ("KeyboardInterrupt()", "in step "),
}


def test_the_boundary_turns_the_adapter_s_exits_into_its_error() -> None:
    for raised in (SystemExit(3), KeyboardInterrupt()):
        with (pytest.raises(AdapterExited, match=r"^the adapter m:f raised .* in a step: ")
              as seen, calling_adapter("m:f", "in a step")):
            raise raised
        assert seen.value.__cause__ is raised
    with pytest.raises(ValueError), calling_adapter("m:f", "in a step"):  # passes through
        raise ValueError("an ordinary error")


def test_a_real_interrupt_passes_the_boundary() -> None:
    """Python's own SIGINT handler raises where the interpreter is, not at a `raise`. It is
    installed for the test: a suite started in the background inherits SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as seen, calling_adapter("m:f", "in a step"):
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not isinstance(seen.value, AdapterExited)


@pytest.mark.parametrize("name", list(CASES))
def test_an_invariant_run_reports_the_adapter_s_error(name: str) -> None:
    shown, where = CASES[name]
    outcome = run_invariant("INV1", getattr(exiting_adapters, name), "ci")
    assert outcome.verdict == "error"
    assert isinstance(outcome.error, AdapterExited)
    assert str(outcome.error).startswith(
        f"the adapter exiting_adapters:{name} raised {shown} {where}"
    ), outcome.error
    assert isinstance(outcome.error.__cause__, (SystemExit, KeyboardInterrupt))


def _repo(tmp_path: Path, adapter: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "mesh.py").write_text("VALUE = 1\n")
    (repo / "pyproject.toml").write_text(
        f'[tool.harness]\npaths = ["src"]\nadapter = "exiting_adapters:{adapter}"\n'
        'invariants = ["INV1"]\n'
    )
    return repo


def _run(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "PYTEST_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(WORKTREE), str(HERE)])
    return subprocess.run([sys.executable, "-m", *argv], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.slow
def test_check_fails_naming_the_adapter(tmp_path: Path, name: str) -> None:
    shown, _where = CASES[name]
    done = _run(_repo(tmp_path, name), "harness", "check", "--quiet", "--no-prove")
    assert done.returncode == 1, (done.stdout, done.stderr)  # before: 0, or 130
    assert "interrupted" not in done.stderr
    line = f"the adapter exiting_adapters:{name} raised {shown} "
    assert line in done.stdout
    assert "Result: FAIL" in done.stdout
    # The adapter's own frame is shown; the harness's driving frames are not.
    assert "exiting_adapters.py" in done.stdout
    assert "invariants/dynamic/driver.py" not in done.stdout


def test_control_a_real_ctrl_c_during_a_step_is_an_interrupt(tmp_path: Path) -> None:
    done = _run(_repo(tmp_path, "step_signal"), "harness", "check", "--quiet", "--no-prove")
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == (
        "mesh-harness check: interrupted (SIGINT): no verdict"
    )
    assert "AdapterExited" not in done.stdout + done.stderr


@pytest.mark.parametrize("name", ["step_exit", "step_error"])
@pytest.mark.slow
def test_the_pytest_item_shows_the_adapter_s_frames_only(tmp_path: Path, name: str) -> None:
    done = _run(_repo(tmp_path, name), "pytest", "-p", "harness", "-p", "no:cacheprovider",
                "-k", "INV1")
    assert done.returncode == 1, done.stdout
    failure = done.stdout.split(" FAILURES ", 1)[1].split("Captured evidence", 1)[0]
    assert "exiting_adapters.py" in failure
    for internal in ("_pytest", "pluggy", "hypothesis", "harness/", "invariants/"):
        assert internal not in failure, (internal, failure)
    assert len(done.stdout.splitlines()) < 60, done.stdout  # before: about 1,000 lines


@pytest.mark.parametrize("name", ["factory_exit", "step_exit"])
def test_adapter_check_fails_naming_the_adapter(tmp_path: Path, name: str) -> None:
    shown, _where = CASES[name]
    where = "from its factory" if name == "factory_exit" else "in conformance program 'intake'"
    done = _run(_repo(tmp_path, name), "harness", "adapter-check")
    assert where in done.stdout
    assert done.returncode == 1, (done.stdout, done.stderr)  # before: 0, and nothing said
    assert f"  the adapter exiting_adapters:{name} raised {shown} " in done.stdout
    assert "exiting_adapters.py" in done.stderr
    assert "harness/" not in done.stderr and "invariants/" not in done.stderr
