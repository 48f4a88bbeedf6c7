"""`python -m harness fuzz` on its unhappy paths: one line, exit 2, the line `check` gives.

- A Redis server that does not answer at the start, or that goes away during the session,
  is an error of the environment (exit 2, one line naming the SPEC), never exit 1, which
  says a failure was found. Replaying the saved failures against a server that went away
  raises it too, instead of reporting the connection error as a failure of the mesh.
- The adapter named by `[tool.harness] adapter` is imported through the repository's
  pytest `pythonpath`, as `check` imports it, in this process and in HypoFuzz's workers;
  when it cannot be, the line names the key it came from (not `--adapter`, which was not
  given) and is the line `check` gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
pytest.importorskip("redis", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

import redis

import harness
from harness.cli import main
from invariants.dynamic.database import DatabaseLost, guarded, open_database
from invariants.fuzzing.config import FuzzConfig
from invariants.fuzzing.failures import replay
from invariants.fuzzing.selection import build_machines

WORKTREE = Path(harness.__file__).resolve().parents[1]
UNREACHABLE = "redis://127.0.0.1:1/0"
WRITE_DEADLINE_SECONDS = 120.0  # only ends a session that never writes; never a verdict


def _environ() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "PYTEST_"))}
    env["PYTHONPATH"] = str(WORKTREE)
    return env


def _fuzz(cwd: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        # The session directory is the default, a short temporary one: HypoFuzz puts a
        # socket in it, and a socket's path has a short limit.
        [sys.executable, "-m", "harness", "fuzz", "--workers", "1", "--invariant", "INV1",
         *argv],
        cwd=cwd, env=_environ(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr  # no traceback
    assert lines[0].startswith("mesh-harness fuzz: error: "), lines[0]
    return lines[0].removeprefix("mesh-harness fuzz: error: ")


def test_an_unreachable_server_at_the_start_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["fuzz", "--minutes", "0.1", "--database", UNREACHABLE,
                 "--session-dir", str(tmp_path / "s")])
    assert code == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"database '{UNREACHABLE}': cannot reach the server"), line


def test_a_saved_failure_is_not_replayed_from_a_server_that_went_away() -> None:
    database = guarded(open_database(UNREACHABLE), UNREACHABLE)
    with pytest.raises(DatabaseLost, match="the server stopped answering"):
        list(database.fetch(b"key"))
    machine = build_machines(FuzzConfig(invariants=("INV1",)))["INV1"]
    # Before: the connection error was caught as the mesh's and shown as a saved failure.
    with pytest.raises(DatabaseLost):
        replay(machine, database)


@pytest.mark.fuzz_session
@pytest.mark.slow
def test_a_server_that_goes_away_mid_session_is_one_line_exit_2(
    own_redis: tuple[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    url, server = own_redis
    # The server publishes every write it takes (keyspace notifications): the test is told
    # of the session's first one. Subscribed, and the subscription confirmed, before the
    # session starts, so that no write goes unseen.
    with redis.Redis.from_url(url) as client, client.pubsub() as writes:
        client.config_set("notify-keyspace-events", "KA")
        writes.psubscribe("__keyspace@*__:*")
        assert writes.get_message(timeout=WRITE_DEADLINE_SECONDS) is not None, "no subscription"
        session = _fuzz(tmp_path, "--minutes", "1", "--database", url)
        deadline = time.monotonic() + WRITE_DEADLINE_SECONDS
        # The session is under way once its workers have written. The read wakes every
        # second only to notice a session that exited, or the deadline.
        while writes.get_message(ignore_subscribe_messages=True, timeout=1.0) is None:
            assert session.poll() is None, session.communicate()
            assert time.monotonic() < deadline, "the session wrote nothing to the database"
    server.kill()
    server.wait()
    out, err = session.communicate(timeout=300)
    assert session.returncode == 2, (out, err)  # before: a traceback, and exit 1
    line = _one_error_line(err)
    assert line.startswith(f"database '{url}': the server stopped answering ("), line


def _repo(tmp_path: Path, adapter: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "src" / "mymesh").mkdir(parents=True)
    (repo / "src" / "mymesh" / "__init__.py").write_text("")
    (repo / "src" / "mymesh" / "adapter.py").write_text(
        "from reference_impl.adapter import make_adapter\n\n\n"
        "def make(chooser):\n    return make_adapter(chooser)\n"
    )
    (repo / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n'
        f'[tool.harness]\npaths = ["src"]\nadapter = "{adapter}"\ninvariants = ["INV1"]\n'
    )
    return repo


def test_an_adapter_that_does_not_import_is_named_by_its_key_as_check_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, "mymesh.missing:make")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the repo's pythonpath goes on it
    assert main(["fuzz", "--minutes", "0.1", "--session-dir", str(tmp_path / "s")]) == 2
    fuzz = _one_error_line(capsys.readouterr().err)
    assert fuzz.startswith(f"{repo / 'pyproject.toml'}: [tool.harness] adapter: "
                           "cannot import module 'mymesh.missing'"), fuzz
    assert main(["check", "--quiet", "--no-prove"]) == 2
    check = capsys.readouterr().err.strip()
    assert check == f"mesh-harness check: error: {fuzz}"


@pytest.mark.fuzz_session
@pytest.mark.slow
def test_the_adapter_is_imported_through_pytest_s_pythonpath(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "mymesh.adapter:make")
    session = _fuzz(repo, "--minutes", "0.1")
    out, err = session.communicate(timeout=300)
    # Before: "--adapter: cannot import module 'mymesh.adapter' ...", exit 2.
    assert session.returncode == 0, (out, err)
    assert "adapter mymesh.adapter:make" in out
    assert "every selected test ran at least 1 example(s)" in out  # in the workers too


def test_an_adapter_that_exits_from_its_factory_is_named_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the adapter's SystemExit(0) ended `fuzz` with exit 0 and nothing said."""
    monkeypatch.syspath_prepend(str(WORKTREE / "tests" / "dynamic"))  # exiting_adapters
    code = main(["fuzz", "--minutes", "0.1", "--adapter", "exiting_adapters:factory_exit",
                 "--database", str(tmp_path / "db")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("mesh-harness fuzz: error: the adapter exiting_adapters:factory_exit "
                       "raised SystemExit(0) from its factory: an adapter reports an error by "
                       "raising an exception, never by ending the run")
    assert any("exiting_adapters.py" in line for line in err)  # the adapter's own frame
