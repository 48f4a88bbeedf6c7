"""analyze_source on hostile input: a MESH000 finding with CPython's reason and position when
CPython rejects the file, a "not analysed" problem when only libcst (or its screens) would;
never an exception, never a crash of the process, never execution of the scanned code."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from invariants.scan import rules as registry
from invariants.scan.context import FileContext
from invariants.scan.engine import analyze_source
from invariants.scan.model import FileReport, ScanConfig

CONFIG = ScanConfig()


def analyze(source: bytes, *, config: ScanConfig = CONFIG) -> FileReport:
    return analyze_source("pkg/bad.py", source, config, is_test=False)


def only_error(report: FileReport) -> tuple[int, int, str]:
    assert not report.parsed
    [finding] = report.findings
    assert finding.rule == "MESH000" and finding.path == "pkg/bad.py"
    return finding.line, finding.column, finding.message


def only_not_analysed(report: FileReport) -> tuple[int, str]:
    assert not report.parsed and report.findings == []
    [problem] = report.problems
    assert problem.kind == "not-analysed" and problem.path == "pkg/bad.py"
    assert problem.message.startswith("not analysed: ")
    return problem.line, problem.message


def test_invalid_utf8_names_the_line() -> None:
    line, _, message = only_error(analyze(b"x = 1\ny = '\xff\xfe'\n"))
    assert line == 2 and "can't decode" in message


def test_nul_byte_is_refused_although_libcst_would_accept_it() -> None:
    line, column, message = only_error(analyze(b"x = 1\ny = 2\x00\n"))
    assert (line, column) == (2, 6) and "NUL" in message


def test_python2_print_statement_is_placed_by_cpython() -> None:
    line, _, message = only_error(analyze(b"import os\n\nprint 'hello'\n"))
    assert line == 3 and "print" in message


def test_seeded_binary_garbage() -> None:
    noise = random.Random(1234).randbytes(4096)
    _, _, message = only_error(analyze(noise))
    assert message


def test_bad_encoding_declaration() -> None:
    _, _, message = only_error(analyze(b"# -*- coding: no-such-codec -*-\nx = 1\n"))
    assert "encoding" in message


def test_declared_latin1_file_is_scanned() -> None:
    report = analyze("# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\nCACHE = {}\n".encode("latin-1"))
    assert report.parsed and [(f.rule, f.line) for f in report.findings] == [("MESH005", 3)]


def test_too_large_file() -> None:
    config = ScanConfig(max_file_bytes=100)
    _, message = only_not_analysed(analyze(b"x = 1\n" * 100, config=config))
    assert "max_file_bytes=100" in message
    assert analyze(b"x = 1\n" * 16, config=config).parsed  # negative control: 96 bytes


@pytest.mark.parametrize("opener", ["(", "[", "{", "f("])
def test_deep_bracket_nesting_does_not_reach_the_crashing_parser(opener: str) -> None:
    closer = {"(": ")", "[": "]", "{": "}", "f(": ")"}[opener]
    # 5000 levels segfault libcst's native parser; the screen stops it first.
    source = f"x = {opener * 5000}{closer * 5000}\n".encode()
    line, _, message = only_error(analyze(source))
    assert line == 1 and "nested" in message


def test_brackets_inside_strings_do_not_trip_the_screen() -> None:
    source = b"OPEN = '" + b"(" * 500 + b"'\n"
    report = analyze(source)
    assert report.parsed and report.findings == []


def test_huge_operator_chain_is_refused_instead_of_parsed_for_minutes() -> None:
    # CPython accepts it; MESH004 needs the tree of a file that starts a task
    source = b"task = create_task(run())\ny = " + b" + ".join([b"1"] * 2000) + b"\n"
    line, message = only_not_analysed(analyze(source))
    assert line == 2 and "operators" in message


def test_a_file_no_rule_needs_the_tree_of_is_not_handed_to_libcst() -> None:
    # The same chain without the task: no rule that reads libcst's tree can find anything
    # (MESH005 reads CPython's tree), so the screen and libcst are never reached.
    source = b"x = 1\ny = " + b" + ".join([b"1"] * 2000) + b"\n"
    report = analyze(source)
    assert report.parsed and not report.tree_built and report.problems == []


def test_deep_indentation() -> None:
    source = "".join("    " * i + "if x:\n" for i in range(120)) + "    " * 120 + "pass\n"
    _, _, message = only_error(analyze(source.encode()))
    assert "indentation" in message


def test_deep_tree_still_places_its_findings() -> None:
    # Thousands of joined literals nest deeper than libcst's recursive code generator
    # goes under the default limit; positions are still computed.
    joined = " ".join(['"chunk"'] * 2500)
    source = f"import os\n\nTOPICS = {{'a': ({joined})}}\n".encode()
    report = analyze(source)
    assert report.parsed
    assert [(f.rule, f.line, f.column) for f in report.findings] == [("MESH005", 3, 1)]


def test_scanned_code_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    source = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\nraise SystemExit(3)\n"
    ).encode()
    report = analyze(source)
    assert report.parsed and not marker.exists()


def test_good_file_after_bad_ones_is_unaffected() -> None:
    analyze(b"\x00\xff")
    report = analyze(b"CACHE = []\n")
    assert report.parsed and [f.rule for f in report.findings] == ["MESH005"]


def _exploding(exc: BaseException) -> Callable[[FileContext], None]:
    def check(ctx: FileContext) -> None:
        raise exc

    return check


@pytest.mark.parametrize(
    ("exc", "words"),
    [(RecursionError(), "nests too deeply"), (KeyError("x"), "failed: KeyError")],
)
def test_a_rule_that_breaks_costs_only_itself(
    monkeypatch: pytest.MonkeyPatch, exc: BaseException, words: str
) -> None:
    rules = tuple(
        dataclasses.replace(rule, check=_exploding(exc)) if rule.id == "MESH004" else rule
        for rule in registry.ALL_RULES
    )
    monkeypatch.setattr(registry, "ALL_RULES", rules)
    report = analyze(b"import asyncio\nasyncio.create_task(x())\nCACHE = {}\n")
    assert report.parsed
    assert [(f.rule, f.line) for f in report.findings] == [("MESH005", 3)]
    [problem] = report.problems
    assert problem.kind == "not-analysed" and "MESH004" in problem.message
    assert words in problem.message


@pytest.mark.parametrize(("style", "first"), [("trailing", 3), ("leading", 3)])
def test_operator_chain_over_many_lines_is_refused(style: str, first: int) -> None:
    if style == "trailing":
        body = "".join(f"    a{i} +\n" for i in range(2000)) + "    0\n"
    else:
        body = "    0\n" + "".join(f"    + a{i}\n" for i in range(2000))
    source = ("task = create_task(run())\nx = (\n" + body + ")\n").encode()
    line, message = only_not_analysed(analyze(source))
    assert line == first and "continued over" in message  # the first continued line


def test_many_ordinary_lines_with_operators_are_scanned() -> None:
    source = "".join(f"a{i} = b + c\n" for i in range(4000)) + "CACHE = {}\n"
    report = analyze(source.encode())
    assert report.parsed and [(f.rule, f.line) for f in report.findings] == [("MESH005", 4001)]


@pytest.mark.parametrize(
    ("chain", "reason"),
    [
        ("y" + "()" * 1200, "a chain of 1200"),  # one line, calls
        ("y" + "[0]" * 1200, "a chain of 1200"),  # one line, subscripts
        ("(y\n" + "    .a()\n" * 800 + ")", "a chain of 1600"),  # builder style, many lines
        ("y" + "()" * 20000, "RecursionError"),  # beyond CPython's own compiler: MESH000
        ("y" + ".a" * 20000, "RecursionError"),  # bare attributes, too deep for CPython
    ],
    ids=["calls", "subscripts", "builder", "deep", "attributes"],
)
def test_long_trailer_chain_is_refused_instead_of_parsed_for_minutes(
    chain: str, reason: str
) -> None:
    report = analyze(f"task = create_task(run())\nx = {chain}\n".encode())
    if report.findings:  # CPython itself refuses it
        line, _, message = only_error(report)
    else:
        line, message = only_not_analysed(report)
    assert line == 2 and reason in message


def test_ordinary_method_chains_are_scanned() -> None:
    source = "".join(f"r{i} = q.filter(x).order_by(y)[0].name()\n" for i in range(2000))
    report = analyze((source + "CACHE = {}\n").encode())
    assert report.parsed and [(f.rule, f.line) for f in report.findings] == [("MESH005", 2001)]
