"""Properties of analyze_source over generated input (Hypothesis; the active profile decides
derandomisation and the example database)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.rules import registered

CONFIG = ScanConfig()
# (source, analyse as a test file) for every invalid example that parses
EXAMPLES = [
    (source, rule.examples_are_tests)
    for rule in registered()
    for source, _ in rule.invalid
    if rule.id != "MESH000"
]


def all_findings(source: bytes, *, is_test: bool = False) -> list[Finding]:
    report = analyze_source("pkg/mod.py", source, CONFIG, is_test=is_test)
    return report.findings + tree_passes([report], CONFIG).findings


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(source: bytes) -> None:
    for finding in all_findings(source):
        assert finding.line >= 1 and finding.column >= 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(EXAMPLES), st.data())
def test_truncated_or_spliced_examples_never_raise(
    example: tuple[str, bool], data: st.DataObject
) -> None:
    source, is_test = example
    cut = data.draw(st.integers(min_value=0, max_value=len(source)))
    junk = data.draw(st.text(alphabet="()[]{}:'\"\\\n #@=", max_size=8))
    mangled = (source[:cut] + junk + source[cut:]).encode()
    lines = mangled.count(b"\n") + 1
    for finding in all_findings(mangled, is_test=is_test):
        assert 1 <= finding.line <= lines


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(EXAMPLES), st.integers(min_value=1, max_value=30))
def test_lines_added_above_shift_every_finding_by_as_many(
    example: tuple[str, bool], added: int
) -> None:
    source, is_test = example
    before = all_findings(source.encode(), is_test=is_test)
    assert before  # every invalid example reports something
    prefix = "# a comment\n\n" * (added // 2) + "\n" * (added % 2)
    after = all_findings((prefix + source).encode(), is_test=is_test)
    assert [(f.rule, f.line + added, f.column) for f in before] == [
        (f.rule, f.line, f.column) for f in after
    ]
