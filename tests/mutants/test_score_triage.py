"""harness-mutants.toml: equivalent mutants and exclusions, each with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from invariants.mutants.score.engine import EngineMutant, enumerate_file
from invariants.mutants.score.triage import TriageError, load, parse

SOURCE = "def over(count, limit):\n    return count > limit\n"
OPERATOR = "core/ReplaceComparisonOperator_Gt_GtE"
ENTRY = f'''\
[[equivalent]]
path = "limits.py"
function = "over"
operator = "{OPERATOR}"
snippet = "return   count > limit"
reason = "count never equals limit here"
'''


def _mutant() -> EngineMutant:
    (mutant,) = enumerate_file("limits.py", SOURCE, [OPERATOR])
    return mutant


def test_an_equivalent_entry_matches_by_snippet_with_whitespace_ignored() -> None:
    triage = parse(Path("harness-mutants.toml"), ENTRY)
    assert triage.equivalent(_mutant()) is not None
    assert triage.stale([_mutant()]) == []


def test_an_entry_that_matches_no_mutant_is_stale() -> None:
    triage = parse(Path("harness-mutants.toml"), ENTRY.replace('"over"', '"under"'))
    assert triage.equivalent(_mutant()) is None
    assert [e.function for e in triage.stale([_mutant()])] == ["under"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ENTRY.replace('reason = "count never equals limit here"\n', ""),
         "t.toml: [[equivalent]] #1: reason: missing"),
        (ENTRY.replace('"count never equals limit here"', '"  "'),
         "t.toml: [[equivalent]] #1: reason: expected a non-empty string"),
        (ENTRY + 'line = 3\n', "t.toml: [[equivalent]] #1: line: unknown key"),
        ('[[exclude]]\npath = "cli.py"\n', "t.toml: [[exclude]] #1: reason: missing"),
        ("[[survivor]]\n", "t.toml: survivor: unknown table"),
        ("equivalent = 3\n", "t.toml: equivalent: expected an array of tables"),
        ("[[equivalent]\n", "t.toml: invalid TOML"),
    ],
)
def test_a_bad_entry_is_one_line_naming_the_file_entry_and_key(text: str, message: str) -> None:
    with pytest.raises(TriageError) as raised:
        parse(Path("t.toml"), text)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_exclusions_are_globs_and_a_missing_file_is_an_empty_triage(tmp_path: Path) -> None:
    path = tmp_path / "harness-mutants.toml"
    assert load(path).exclusions == ()
    path.write_text('[[exclude]]\npath = "lim*.py"\nreason = "limits are display only"\n')
    triage = load(path)
    assert triage.excluded(_mutant()) is not None
    assert triage.exclusions[0].function == "*"


def test_the_repositorys_triage_of_the_reference_mesh_is_current() -> None:
    from invariants.mutants.matrix import reference_scan_config
    from invariants.mutants.score.engine import enumerate_tree
    from invariants.mutants.score.target import reference_target

    triage = load(Path(__file__).resolve().parents[2] / "harness-mutants.toml")
    target = reference_target(reference_scan_config())
    assert triage.equivalents and all(e.reason for e in triage.equivalents)
    assert triage.stale(enumerate_tree(target.sources, target.files)) == []
