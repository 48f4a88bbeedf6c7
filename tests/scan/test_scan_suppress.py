"""Inline suppressions: grammar, matching by line and rule, malformed and unused ones reported."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import scan_stand_in

from invariants.scan import suppress
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import MALFORMED_SUPPRESSION, UNUSED_SUPPRESSION, Problem
from invariants.scan.runner import scan
from invariants.scan.suppress import Suppression, parse_directive


def finding(rule: str, line: int, end_line: int | None = None) -> Finding:
    return Finding(rule, "m.py", line, 1, end_line or line, "msg", "", "")


@pytest.mark.parametrize(
    ("comment", "rules", "tag", "reason"),
    [
        ("# harness: allow[MESH005] MEMO: parse cache", ("MESH005",), "MEMO", "parse cache"),
        ("#harness:allow[mesh004] handle kept by the registry", ("MESH004",), None,
         "handle kept by the registry"),
        ("# harness: allow[MESH004, MESH005] PROC: per process", ("MESH004", "MESH005"), "PROC",
         "per process"),
        ("# noqa  # harness: allow[MESH002] legacy adapter", ("MESH002",), None, "legacy adapter"),
    ],
)
def test_valid_directives(
    comment: str, rules: tuple[str, ...], tag: str | None, reason: str
) -> None:
    assert parse_directive("m.py", 3, comment) == Suppression("m.py", 3, rules, tag, reason)


@pytest.mark.parametrize(
    ("comment", "why"),
    [
        ("# harness: allow[MESH004]", "a reason is required"),
        ("# harness: allow[MESH005] just because", "MESH005 needs a tag"),
        ("# harness: allow[MESH005] FOO: unknown tag", "MESH005 needs a tag"),
        ("# harness: allow[MESH005] MEMO:", "a reason is required"),
        ("# harness: allow[MESH042] reason", "unknown rule id 'MESH042'"),
        ("# harness: allow[] reason", "no rule id"),
        ("# harness: ignore everything", "expected 'harness: allow[RULE] reason'"),
    ],
)
def test_malformed_directives(comment: str, why: str) -> None:
    parsed = parse_directive("m.py", 3, comment)
    assert isinstance(parsed, Problem)
    assert parsed.kind == MALFORMED_SUPPRESSION and why in parsed.message


def test_plain_comments_are_not_directives() -> None:
    assert parse_directive("m.py", 1, "# an ordinary comment about harness use") is None


def test_extract_reads_comments_not_strings() -> None:
    source = (
        b'TEXT = "# harness: allow[MESH005] MEMO: inside a string"\n'
        b"CACHE = {}  # harness: allow[MESH005] MEMO: real one\n"
    )
    suppressions, problems = suppress.extract("m.py", source)
    assert [(s.line, s.reason) for s in suppressions] == [(2, "real one")]
    assert problems == []


def test_extract_survives_untokenizable_source() -> None:
    suppressions, _ = suppress.extract("m.py", b"def f(:\n  x = '''\n# harness: allow[MESH004] r\n")
    assert [s.line for s in suppressions] == [3]


def test_apply_matches_rule_and_line_only() -> None:
    items = [Suppression("m.py", 5, ("MESH004",), None, "r")]
    applied = suppress.apply(
        [finding("MESH004", 5), finding("MESH005", 5), finding("MESH004", 6)], items, ScanConfig()
    )
    assert [(f.rule, f.line) for f in applied.kept] == [("MESH005", 5), ("MESH004", 6)]
    assert applied.suppressed == 1 and applied.unused == []


def test_apply_accepts_the_last_line_of_a_multiline_finding() -> None:
    items = [Suppression("m.py", 9, ("MESH005",), "CONST", "r")]
    applied = suppress.apply([finding("MESH005", 7, end_line=9)], items, ScanConfig())
    assert applied.kept == [] and applied.suppressed == 1


def test_unused_suppressions_are_reported_for_enabled_rules_only() -> None:
    items = [Suppression("m.py", 2, ("MESH004", "MESH006"), None, "r")]
    config = dataclasses.replace(ScanConfig(), ignore=("MESH006",))
    applied = suppress.apply([], items, config)
    assert [(p.kind, p.line) for p in applied.unused] == [(UNUSED_SUPPRESSION, 2)]
    assert "MESH004" in applied.unused[0].message and "MESH006" not in applied.unused[0].message


def test_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scan_stand_in.install(monkeypatch)
    (tmp_path / "m.py").write_text(
        "A = 1  # flag:MESH005  # harness: allow[MESH005] CONST: read only\n"
        "B = 2  # flag:MESH005\n"
        "C = 3  # harness: allow[MESH004] nothing here\n"
        "D = 4  # flag:MESH005  # harness: allow[MESH005] no tag\n"
    )
    result = scan(["."], ScanConfig(), root=tmp_path, cache_dir=None)
    assert [(f.rule, f.line) for f in result.findings] == [("MESH005", 2), ("MESH005", 4)]
    assert [(p.kind, p.line) for p in result.errors] == [
        (UNUSED_SUPPRESSION, 3), (MALFORMED_SUPPRESSION, 4),
    ]
    assert result.stats.suppressed == 1
