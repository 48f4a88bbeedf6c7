"""The docs' mutant tables are the registry's: a row per registered mutant, none for a
mutant that is not, and each row of the kill table naming every check that must kill it.
So a new mutant costs its module, its registry line and its two rows, and a test says
which row is missing."""

from __future__ import annotations

import re
from pathlib import Path

from invariants.mutants.registry import MUTANTS

DOCS = Path(__file__).resolve().parents[2] / "docs"
# The mutation points (site and diff) and the kill table (which checks kill each).
TABLES = ("reference-mesh.md", "dynamic-invariants.md")
ROW = re.compile(r"^\| (M\d+) [^|]*\|(.*)\|\s*$", re.MULTILINE)


def table_rows(text: str) -> dict[str, str]:
    """Mutant id -> the rest of its table row (later rows of one id overwrite earlier)."""
    return {match.group(1): match.group(2) for match in ROW.finditer(text)}


def missing_and_extra(text: str) -> tuple[list[str], list[str]]:
    rows = table_rows(text)
    registered = [m.id for m in MUTANTS]
    return ([m for m in registered if m not in rows],
            [m for m in rows if m not in registered])


def unnamed_kills(text: str) -> list[str]:
    """`Mn: CHECK` for each check a mutant must be killed by that its row does not name."""
    rows = table_rows(text)
    return [f"{m.id}: {check}" for m in MUTANTS if m.id in rows for check in m.kills
            if not re.search(rf"\b{check}\b", rows[m.id].rsplit("|", 1)[-1])]


def test_every_registered_mutant_has_its_row_in_each_table() -> None:
    for name in TABLES:
        missing, extra = missing_and_extra((DOCS / name).read_text(encoding="utf-8"))
        assert (missing, extra) == ([], []), f"docs/{name}: rows missing {missing}, extra {extra}"


def test_the_kill_table_names_every_check_a_mutant_must_fail() -> None:
    assert unnamed_kills((DOCS / "dynamic-invariants.md").read_text(encoding="utf-8")) == []


def test_control_a_dropped_row_and_a_dropped_killer_are_reported() -> None:
    text = (DOCS / "dynamic-invariants.md").read_text(encoding="utf-8")
    first = MUTANTS[0]
    row = next(line for line in text.splitlines() if line.startswith(f"| {first.id} "))
    assert missing_and_extra(text.replace(row + "\n", "")) == ([first.id], [])
    killer = first.kills[-1]
    cells = row.rsplit("|", 2)
    doctored = row.replace(cells[-2], cells[-2].replace(killer, "X"))
    assert f"{first.id}: {killer}" in unnamed_kills(text.replace(row, doctored))
    ghost = row.replace(f"| {first.id} ", "| M999 ", 1)
    assert missing_and_extra(text + "\n" + ghost + "\n") == ([], ["M999"])
