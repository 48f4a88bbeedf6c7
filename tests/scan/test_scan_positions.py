"""Positions of reported nodes agree with libcst's own PositionProvider (the oracle)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

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

