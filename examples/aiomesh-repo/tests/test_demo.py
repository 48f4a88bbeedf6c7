"""`python -m aiomesh demo` on the stock loop, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def test_the_demo_runs_and_exits_0() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "aiomesh", "demo"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("aiomesh demo:")
    assert not [line for line in lines if line.lstrip().startswith("BAD")]
    assert lines[-1].endswith("all as expected")


def test_the_demo_wants_its_one_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "aiomesh"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and "usage: python -m aiomesh demo" in done.stderr
