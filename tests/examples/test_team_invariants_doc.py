"""docs/team-invariants.md says what the code does: its API table names every public name
of `invariants.checks.api`, its TURN1 has the example's obligations, its error line is the
one the settings give for the misspelt module it shows, and the contract it shows is the
example's own. (The rows and the failure it shows are held by
tests/examples/test_aiomesh_planted_bugs.py, which runs them.)"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness.settings import Overrides, resolve
from invariants.checks import CHECKS, api
from invariants.scan.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "aiomesh-repo"
DOC = (ROOT / "docs" / "team-invariants.md").read_text(encoding="utf-8")
SHOWN_ROOT = "/home/me/aiomesh-repo"


@pytest.fixture
def example(tmp_path: Path, team_registry: None) -> Path:
    repo = tmp_path / "aiomesh-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".*cache*"))
    return repo


def test_the_api_table_names_every_public_name() -> None:
    table = DOC.split("## The API", 1)[1]
    missing = [name for name in api.__all__ if f"`{name}" not in table]
    assert not missing, missing


def test_turn1_is_the_examples(example: Path) -> None:
    pyproject = example / "pyproject.toml"
    chosen = resolve(pyproject, example, Overrides()).invariants
    assert chosen[-1] == "TURN1"
    obligations = list(CHECKS["TURN1"].obligations)
    shown = DOC.split("## 4. What `check` prints", 1)[1].split("```", 2)[1]
    assert [re.sub(r"^\s*\d+\s+", "", line) for line in shown.splitlines()[-3:]] == obligations
    for name in obligations[:2]:  # the two the combinators make, as the doc's code names them
        assert f'"{name}"' in DOC


def test_the_error_line_shown_is_the_settings(example: Path) -> None:
    pyproject = example / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace("aiomesh_invariants.turns:HUB_TURNS",
                                      "aiomesh_invariants.turn:HUB_TURNS"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resolve(pyproject, example, Overrides())
    line = f"mesh-harness check: error: {caught.value}".replace(str(example), SHOWN_ROOT)
    assert f"\n{line}\n" in DOC


def test_the_contract_shown_is_the_examples() -> None:
    shown = DOC.split("## 7. Keeping to the API", 1)[1].split("```toml\n", 1)[1].split("```")[0]
    assert shown in (EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
