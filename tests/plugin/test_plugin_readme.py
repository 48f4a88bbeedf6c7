"""The README's promises that code can check: exactly two commands, the second the very line
.ci/run runs, and every linked docs page present."""

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


def test_the_readme_has_exactly_the_two_commands_and_ci_runs_the_second() -> None:
    commands = first_bash_block((PROJECT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    assert commands[0] == MAIN_JOB
    ci_lines = (PROJECT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci_lines[-1] == commands[1]


def test_a_readme_without_the_block_is_refused() -> None:
    with pytest.raises(ValueError, match="no ```bash block"):
        first_bash_block("# mesh-harness\n\n    pip install .\n")


def test_every_linked_docs_page_exists() -> None:
    links = re.findall(r"\]\((docs/[^)]+\.md)\)", (PROJECT / "README.md").read_text())
    assert "docs/adopting.md" in links and "docs/plugin.md" in links
    missing = [link for link in links if not (PROJECT / link).is_file()]
    assert missing == []
