"""docs/architecture.md is the map of the import contracts in pyproject.toml.

Its layer table names the packages of the `layers` contract, one row per layer, top first;
its list of the other contracts has one bullet per contract, opening with the contract's
`name` in bold. A doctored copy of the doc (a layer dropped, rows swapped, a bullet
missing, a bullet naming no contract) fails the same checks.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
LIST_INTRO = "The contracts beside the layers"


def contracts() -> list[dict[str, Any]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = data["tool"]["importlinter"]["contracts"]
    return found


def layers_contract() -> dict[str, Any]:
    (layers,) = [c for c in contracts() if c["type"] == "layers"]
    return layers


def contract_layers() -> list[frozenset[str]]:
    """The `layers` contract's layers, top first, each the set of its modules."""
    return [
        frozenset(part.strip() for part in re.split(r"[|:]", layer))
        for layer in layers_contract()["layers"]
    ]


def _module(path: str) -> str:
    return path.removesuffix("/").removesuffix(".py").replace("/", ".")


def doc_layers(text: str) -> list[frozenset[str]]:
    """The packages of each row of the doc's layer table, top first."""
    rows: list[frozenset[str]] = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.match(r"\d+\.", cells[0]):
            rows.append(frozenset(_module(p) for p in re.findall(r"`([^`]+)`", cells[1])))
    return rows


def doc_contract_bullets(text: str) -> dict[str, str]:
    """Contract name -> the text of its bullet, from the list after `LIST_INTRO`."""
    section = text[text.index(LIST_INTRO):].split("\n## ", 1)[0]
    bullets = re.split(r"\n- ", "\n" + section.split("\n", 1)[1])[1:]
    named: dict[str, str] = {}
    for bullet in bullets:
        match = re.match(r"\*\*(.+?)\*\*", bullet.strip(), re.DOTALL)
        name = " ".join(match.group(1).split()) if match else bullet.strip()[:60]
        named[name] = " ".join(bullet.split())
    return named


def layer_problems(text: str) -> list[str]:
    problems: list[str] = []
    documented, contracted = doc_layers(text), contract_layers()
    if documented != contracted:
        problems.append(f"layer table {documented} != layers contract {contracted}")
    name = layers_contract()["name"]
    if name not in " ".join(text.split()):
        problems.append(f"the layers contract {name!r} is not named in the doc")
    return problems


def contract_list_problems(text: str) -> list[str]:
    problems: list[str] = []
    bullets = doc_contract_bullets(text)
    others = {c["name"]: c for c in contracts() if c["type"] != "layers"}
    for name in sorted(set(others) - set(bullets)):
        problems.append(f"contract {name!r} has no bullet in the doc")
    for name in sorted(set(bullets) - set(others)):
        problems.append(f"bullet {name!r} names no contract of pyproject.toml")
    for name, contract in others.items():
        if contract["type"] == "independence" and name in bullets:
            for module in contract["modules"]:
                if module.rsplit(".", 1)[-1] not in bullets[name]:
                    problems.append(f"{name!r}: its bullet does not name {module}")
    return problems


def test_the_layer_table_is_the_layers_contract() -> None:
    assert layer_problems(DOC.read_text(encoding="utf-8")) == []


def test_every_other_contract_has_its_bullet_and_every_bullet_a_contract() -> None:
    assert contract_list_problems(DOC.read_text(encoding="utf-8")) == []


def test_the_doc_lists_every_contract_there_is() -> None:
    """The parse itself sees the whole list (so the checks above are not vacuous)."""
    text = DOC.read_text(encoding="utf-8")
    assert len(doc_layers(text)) == len(layers_contract()["layers"]) >= 2
    assert len(doc_contract_bullets(text)) == len(contracts()) - 1 >= 2


def _drop_line(text: str, starting: str) -> str:
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(starting)]
    assert len(kept) == len(lines) - 1, starting
    return "".join(kept)


def _swap_rows(text: str, first: str, second: str) -> str:
    lines = text.splitlines(keepends=True)
    a = next(i for i, line in enumerate(lines) if line.startswith(first))
    b = next(i for i, line in enumerate(lines) if line.startswith(second))
    lines[a], lines[b] = lines[b], lines[a]
    return "".join(lines)


@pytest.mark.parametrize(
    "doctor",
    [
        pytest.param(lambda t: _drop_line(t, "| 7. fuzz sessions"), id="layer-dropped"),
        pytest.param(lambda t: _swap_rows(t, "| 2. ", "| 1. "), id="rows-swapped"),
        pytest.param(
            lambda t: t.replace(", `invariants/conformance/` |", " |"), id="package-dropped"
        ),
    ],
)
def test_a_doctored_layer_table_fails(doctor: Any) -> None:
    text = DOC.read_text(encoding="utf-8")
    doctored = doctor(text)
    assert doctored != text
    assert layer_problems(doctored) != []


@pytest.mark.parametrize(
    "doctor",
    [
        pytest.param(
            lambda t: re.sub(r"\n- \*\*The plugin never imports a job\*\*.*?(?=\n- )", "", t,
                             flags=re.DOTALL),
            id="bullet-dropped",
        ),
        pytest.param(
            lambda t: t.replace("**No package-level import cycle**", "**No cycle at all**"),
            id="bullet-renamed",
        ),
        pytest.param(
            lambda t: t.replace("and\n  `.adapter_check` are", "are"), id="job-unnamed"
        ),
    ],
)
def test_a_doctored_contract_list_fails(doctor: Any) -> None:
    text = DOC.read_text(encoding="utf-8")
    doctored = doctor(text)
    assert doctored != text
    assert contract_list_problems(doctored) != []
