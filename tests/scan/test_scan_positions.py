"""Positions of reported nodes agree with libcst's own PositionProvider (the oracle)."""

from __future__ import annotations

import argparse
from pathlib import Path

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

import invariants.scan.cfg
from invariants.scan.positions import locate
from invariants.scan.rules.walk import shared_statements
from invariants.scan.statement_positions import statement_spans

SAMPLE = Path(invariants.scan.cfg.__file__).read_text()


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


def test_statement_spans_from_cpython_agree_with_the_position_provider() -> None:
    # A stdlib module with many module- and class-level statements, non-ASCII included.
    text = Path(argparse.__file__).read_text() + "\nNAME = 'é'; CACHE = {'ü': 1}\n"
    module = cst.parse_module(text)
    oracle = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    statements = [
        small
        for statement, _ in shared_statements(module.body)
        for small in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ())
    ]
    assert len(statements) > 25
    spans = statement_spans(module, text, statements)
    assert set(spans) == {id(s) for s in statements}
    for statement in statements:
        span, expected = spans[id(statement)], oracle[statement]
        assert (span.line, span.column - 1) == (expected.start.line, expected.start.column)
        assert (span.end_line, span.end_column - 1) == (expected.end.line, expected.end.column)


def test_statement_spans_leave_what_they_cannot_pair() -> None:
    module = cst.parse_module("def f():\n    x = g(1)\n")
    function = module.body[0]
    assert statement_spans(module, module.code, [function])[id(function)].line == 1
    inner = m.findall(module, m.Call())[0]  # inside a function body: not paired
    assert statement_spans(module, module.code, [inner]) == {}
