"""Properties of the product layer over generated inputs (Hypothesis, derandomised)."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from invariants.scan import baseline, suppress
from invariants.scan.cache import outcome_from_json, outcome_to_json
from invariants.scan.model import CallSite, EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import Problem
from invariants.scan.rules import RULES
from invariants.scan.sarif import fingerprints
from invariants.scan.suppress import Suppression

DETERMINISTIC = settings(derandomize=True, database=None, max_examples=100, deadline=None)

text = st.text(max_size=30)
lines = st.integers(min_value=1, max_value=10_000)
rules = st.sampled_from(sorted(RULES))
findings = st.builds(
    Finding, rules, st.sampled_from(["a.py", "pkg/b.py"]), lines, lines, lines, text,
    st.sampled_from(["", "f", "C.m"]), st.sampled_from(["x = {}", "x  =  {}", "y = []", ""]),
)
outcomes = st.builds(
    FileOutcome,
    st.builds(
        FileReport,
        text,
        st.lists(findings, max_size=4),
        st.lists(st.builds(EmitSite, text, lines, lines, text, st.booleans(),
                           st.none() | lines, text), max_size=3),
        st.lists(st.builds(CallSite, text, lines, text, text, st.booleans()), max_size=3),
        st.booleans(),
    ),
    st.lists(st.builds(Suppression, text, lines, st.tuples(rules, rules), st.none() | text, text),
             max_size=2),
    st.lists(st.builds(Problem, text, lines, text, text), max_size=2),
)


@DETERMINISTIC
@given(outcomes)
def test_cache_entries_round_trip(outcome: FileOutcome) -> None:
    stored = json.loads(json.dumps(outcome_to_json(outcome)))
    assert outcome_from_json(stored) == outcome


@DETERMINISTIC
@given(st.lists(findings, max_size=12), st.integers(min_value=0, max_value=500))
def test_baseline_of_findings_matches_them_after_any_shift(
    found: list[Finding], shift: int
) -> None:
    known = Counter(baseline.key_of(f) for f in found)
    moved = [
        Finding(f.rule, f.path, f.line + shift, f.column, f.end_line + shift, f.message,
                f.symbol, f.snippet)
        for f in found
    ]
    outcome = baseline.compare(moved, known, ScanConfig(), ["a.py", "pkg/b.py"])
    assert outcome.new == [] and outcome.stale == [] and outcome.remaining == known
    assert fingerprints(found) == fingerprints(moved)


@DETERMINISTIC
@given(st.lists(findings, min_size=1, max_size=12), st.data())
def test_baseline_never_grows_and_flags_exactly_the_extra(
    found: list[Finding], data: st.DataObject
) -> None:
    kept = data.draw(st.lists(st.sampled_from(found), max_size=len(found)))
    known = Counter(baseline.key_of(f) for f in kept)
    outcome = baseline.compare(found, known, ScanConfig(), ["a.py", "pkg/b.py"])
    assert len(outcome.new) == len(found) - outcome.baselined
    assert all(outcome.remaining[key] <= known[key] for key in outcome.remaining)
    assert sum((Counter(baseline.key_of(f) for f in found) - known).values()) == len(outcome.new)


@DETERMINISTIC
@given(
    st.lists(rules, min_size=1, max_size=3),
    st.sampled_from(["MEMO", "CONST", None]),
    # No ":" in the reason, so a reason can never be read as a tag.
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
                                   blacklist_characters=":"), max_size=20),
)
def test_directive_parsing_accepts_exactly_the_grammar(
    listed: list[str], tag: str | None, reason: str
) -> None:
    comment = f"# harness: allow[{', '.join(listed)}] " + (f"{tag}: " if tag else "") + reason
    parsed = suppress.parse_directive("m.py", 1, comment)
    if reason.strip() and ("MESH005" not in listed or tag is not None):
        assert parsed == Suppression("m.py", 1, tuple(listed), tag, reason.strip())
    else:
        assert isinstance(parsed, Problem) and parsed.kind == "malformed-suppression"
