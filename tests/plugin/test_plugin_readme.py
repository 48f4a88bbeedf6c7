"""The README's promises that code can check: exactly two commands, both run by .ci/run first,
verbatim, in a new virtualenv without system site packages, and every linked docs page
present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
MAIN_JOB = "python3 -m pip install -e . && python3 -m harness check"


def first_bash_block(text: str) -> list[str]:
    match = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    if match is None:
        raise ValueError("no ```bash block")
    return [line for line in match.group(1).splitlines() if line.strip()]


def _ci_commands() -> list[str]:
    """.ci/run's command lines, comments and blank lines left out."""
    text = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_readme_has_exactly_the_two_commands_and_ci_runs_them_first() -> None:
    commands = first_bash_block((PROJECT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    assert commands[0] == MAIN_JOB
    ci = _ci_commands()
    first = ci.index(commands[0])
    assert ci[first + 1] == commands[1]
    # Nothing installs or runs a tool before them but the new virtualenv they run in.
    before = ci[:first]
    assert not [line for line in before if re.search(r"\b(pip|pytest)\b", line)]
    venvs = [line for line in before if " -m venv " in line]
    assert venvs and not [line for line in venvs if "system-site-packages" in line]
    assert any(line.startswith("source ") and "/bin/activate" in line for line in before)


def test_a_readme_without_the_block_is_refused() -> None:
    with pytest.raises(ValueError, match="no ```bash block"):
        first_bash_block("# mesh-harness\n\n    pip install .\n")


def test_every_linked_docs_page_exists() -> None:
    links = re.findall(r"\]\((docs/[^)]+\.md)\)", (PROJECT / "README.md").read_text())
    assert "docs/adopting.md" in links and "docs/plugin.md" in links
    missing = [link for link in links if not (PROJECT / link).is_file()]
    assert missing == []
