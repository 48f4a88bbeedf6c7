"""Positions of reported nodes agree with libcst's own PositionProvider (the oracle).

`invariants.scan.positions` subclasses libcst's private `CodegenState` (PositionProvider
costs several times the parse); pyproject.toml pins libcst to the minor versions this file
has passed on, and the checks run on standard-library modules as well as on shapes chosen
for their line endings."""

from __future__ import annotations

import random
import sysconfig
import tomllib
from importlib.metadata import version
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider
from packaging.requirements import Requirement

import invariants.scan.rules.mesh001.cfg
from invariants.scan.positions import locate

SAMPLE = Path(invariants.scan.rules.mesh001.cfg.__file__).read_text()


def _nodes(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.Call, cst.BaseSmallStatement, cst.Attribute, cst.If)):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def test_every_call_statement_and_attribute_matches_the_position_provider() -> None:
    module = cst.parse_module(SAMPLE)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    oracle = wrapper.resolve(PositionProvider)
    nodes = _nodes(module)
    assert len(nodes) > 200
    spans = locate(module, nodes)
    for node in nodes:
        expected = oracle[node]
        span = spans[id(node)]
        assert (span.line, span.column - 1) == (expected.start.line, expected.start.column)
        assert (span.end_line, span.end_column - 1) == (expected.end.line, expected.end.column)


def test_a_subset_stops_early_and_still_agrees() -> None:
    module = cst.parse_module(SAMPLE)
    oracle = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    first_three = _nodes(module)[:3]
    spans = locate(module, first_three)
    assert len(spans) == 3
    for node in first_three:
        assert spans[id(node)].line == oracle[node].start.line


def test_nothing_wanted_costs_nothing() -> None:
    assert locate(cst.parse_module(SAMPLE), []) == {}



def _agree(source: str) -> int:
    """Assert every collected node's span equals PositionProvider's; return their count."""
    module = cst.parse_module(source)
    oracle = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = _nodes(module)
    spans = locate(module, nodes)
    for node in nodes:
        expected, span = oracle[node], spans[id(node)]
        assert (span.line, span.column - 1) == (expected.start.line, expected.start.column)
        assert (span.end_line, span.end_column - 1) == (expected.end.line, expected.end.column)
    return len(nodes)


def _stdlib_sample(count: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if 2_000 < p.stat().st_size < 40_000)
    return random.Random(7).sample(files, count)


@pytest.mark.parametrize("path", _stdlib_sample(8), ids=lambda p: p.name)
def test_positions_agree_on_stdlib_modules(path: Path) -> None:
    assert _agree(path.read_text(encoding="utf-8", errors="replace")) > 20


LINE_ENDINGS = {
    "crlf": "x = 1\r\nCACHE = f(\r\n    2)\r\n",
    "lone-cr-after-comment": "#\rCACHE = dict()\n",
    "lone-cr": "a = 1\rb = f(\r  2)\r",
    "triple-quoted": 's = """\n\n"""; t = g()\n',
    "continuation": "x = (\n  1,\n)  # c\n\ny = h(x)\n",
}


@pytest.mark.parametrize("source", LINE_ENDINGS.values(), ids=list(LINE_ENDINGS))
def test_positions_agree_across_line_endings(source: str) -> None:
    assert _agree(source) >= 2


def test_installed_libcst_is_in_the_pinned_range() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    [pin] = [Requirement(d) for d in dependencies if Requirement(d).name == "libcst"]
    assert pin.specifier.contains(version("libcst")), (pin, version("libcst"))
    assert not pin.specifier.contains("99.0")  # negative control: the range has an upper end
