"""`.pre-commit-hooks.yaml`: the scan as a pre-commit hook, run by the `pre-commit` package
itself (`try-repo`, which builds the hook's environment from this repository) in a
throwaway repository: an unguarded emit fails the hook, its guarded twin passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[2]
UNGUARDED = '''\
class DeliveryFailure:
    def __init__(self, answers):
        self.answers = answers


def nack(delivery, send):
    send(DeliveryFailure(delivery.id))
'''
GUARDED = UNGUARDED.replace(
    "    send(DeliveryFailure(delivery.id))",
    "    if delivery.may_answer():\n        send(DeliveryFailure(delivery.id))",
)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
                   cwd=cwd, check=True, capture_output=True)


def _run_hook(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(HERE), "mesh-harness-scan",
         "--all-files"],
        cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=600,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
@pytest.mark.slow
def test_the_hook_finds_an_unguarded_emit_and_passes_its_guarded_twin(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit", reason="the dev extra installs pre-commit")
    if not (HERE / ".git").exists():
        pytest.skip("try-repo needs this repository's git checkout")
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[tool.harness]\npaths = ["src"]\n', encoding="utf-8")
    mesh = repo / "src" / "mesh.py"
    mesh.write_text(UNGUARDED, encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    home = tmp_path / "pre-commit-home"

    failed = _run_hook(repo, home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "mesh-harness scan" in failed.stdout and "Failed" in failed.stdout
    assert "src/mesh.py:7:10 MESH001" in failed.stdout

    mesh.write_text(GUARDED, encoding="utf-8")
    _git(repo, "add", "-A")
    passed = _run_hook(repo, home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
