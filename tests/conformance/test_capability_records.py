"""One record per capability (`invariants.adapter.CAPABILITIES`) says what declaring it
enables; the code that gates on it lives in the layers above. Each record is held here to
what that code really gates, both ways: everything a record names is gated on its
capability, and nothing gated on a capability is missing from its record."""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

from invariants.adapter import (
    CAPABILITIES,
    DEFAULT_CAPABILITIES,
    Capability,
)
from invariants.checks import CHECKS
from invariants.conformance.programs import PROGRAMS
from invariants.dynamic.plans import FAMILIES, FAMILY_NEEDS, ROUTE_NEEDS

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("invariants", "reference_impl", "harness")
DOC = ROOT / "docs" / "adapter.md"

RECORDS = {info.capability: info for info in CAPABILITIES}
ids = [capability.value for capability in Capability]


def test_one_record_per_capability_in_its_order() -> None:
    assert [info.capability for info in CAPABILITIES] == list(Capability)
    assert {c for c, info in RECORDS.items() if info.default} == DEFAULT_CAPABILITIES


@pytest.mark.parametrize("capability", list(Capability), ids=ids)
def test_the_families_routes_and_programs_it_gates(capability: Capability) -> None:
    info = RECORDS[capability]
    assert set(info.families) <= set(FAMILIES)
    assert sorted(info.families) == sorted(f for f, c in FAMILY_NEEDS.items() if c is capability)
    assert sorted(info.routes) == sorted(r for r, c in ROUTE_NEEDS.items() if c is capability)
    assert list(info.programs) == [p.name for p in PROGRAMS if p.needs is capability]


@pytest.mark.parametrize("capability", list(Capability), ids=ids)
def test_the_checks_and_obligations_it_gates(capability: Capability) -> None:
    info = RECORDS[capability]
    assert list(info.checks) == [i for i, cls in CHECKS.items() if capability in cls.needs]
    gated = [(i, name) for i, cls in CHECKS.items()
             for name, need in cls.obligation_needs.items() if need is capability]
    waived = [(i, name) for i, cls in CHECKS.items()
              for name, (by, _) in cls.obligation_waived_by.items() if by is capability]
    assert sorted(info.obligations) == sorted(gated)
    assert sorted(info.waives) == sorted(waived)
    for check_id, name in (*info.obligations, *info.waives):
        assert name in CHECKS[check_id].obligations, (check_id, name)


def _readers() -> dict[Capability, set[str]]:
    """Capability -> the functions that name it (`Capability.X` inside a function body),
    qualified by module; the tables at module and class level are read above."""
    found: dict[Capability, set[str]] = defaultdict(set)

    def visit(node: ast.AST, module: str, scope: list[str], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inside = in_function or not isinstance(child, ast.ClassDef)
                visit(child, module, [*scope, child.name], inside)
                continue
            if (in_function and isinstance(child, ast.Attribute)
                    and isinstance(child.value, ast.Name) and child.value.id == "Capability"
                    and child.attr in Capability.__members__):
                found[Capability[child.attr]].add(".".join([module, *scope]))
            visit(child, module, scope, in_function)

    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            if module == "invariants.adapter":
                continue
            visit(ast.parse(path.read_text(encoding="utf-8")), module, [], False)
    return found


def test_every_function_that_reads_a_capability_is_in_its_record() -> None:
    readers = _readers()
    for info in CAPABILITIES:
        assert sorted(info.read_by) == sorted(readers.get(info.capability, ())), (
            info.capability)
        for name in info.read_by:  # each still resolves to code
            assert _resolve(name) is not None, name


def _resolve(name: str) -> object:
    """The object a qualified name names: its longest importable prefix, then attributes."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for part in parts[end:]:
            target = getattr(target, part)
        return target
    raise AssertionError(f"{name}: no such module")


def _doc_rows() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("## Capabilities\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.MULTILINE)
    return dict(rows)


def test_the_doc_lists_every_capability_with_what_it_gates() -> None:
    rows = _doc_rows()
    assert sorted(rows) == sorted(info.capability.value for info in CAPABILITIES)
    for info in CAPABILITIES:
        row = rows[info.capability.value]
        for check_id in {*info.checks, *(c for c, _ in (*info.obligations, *info.waives))}:
            assert check_id in row, (info.capability, check_id)
        for _, obligation in (*info.obligations, *info.waives):
            assert f'"{obligation}"' in row, (info.capability, obligation)


def test_the_doc_names_the_families_the_state_machines_leave_out() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Capabilities\n", 1)[1]
    left_out = re.search(r"leave out the rule families \(([^)]*)\)", section)
    assert left_out is not None
    named = re.findall(r"`(\w+)`", left_out.group(1))
    assert sorted(named) == sorted(f for info in CAPABILITIES for f in info.families)


def test_the_doc_runs_each_adapter_check_program_for_its_capability() -> None:
    text = DOC.read_text(encoding="utf-8")
    runs_for = dict(re.findall(r"^\| `([\w-]+)` \| (every adapter|`\w+`) \|", text, re.M))
    expected = {program: f"`{info.capability.value}`"
                for info in CAPABILITIES for program in info.programs}
    assert runs_for == {p.name: expected.get(p.name, "every adapter") for p in PROGRAMS}
