"""harness-mutants.toml: equivalent mutants, known blind ones and exclusions, each with a
reason; an equivalent or blind entry names exactly one mutant."""

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
occurrence = 0
reason = "count never equals limit here"
'''
TWICE = "def over(count, limit):\n    return count > limit\n    return count > limit\n"
# The two mutants of TWICE under one reason; a group's member has an entry's keys but it.
def _member(occurrence: int) -> str:
    return (f'{{ path = "limits.py", function = "over", operator = "{OPERATOR}", '
            f'snippet = "return count > limit", occurrence = {occurrence} }}')


GROUP = f'''\
[[equivalent]]
reason = "count never equals limit here"
mutants = [
  {_member(0)},
  {_member(1)},
]
'''


def _mutant() -> EngineMutant:
    (mutant,) = enumerate_file("limits.py", SOURCE, [OPERATOR])
    return mutant


def test_an_equivalent_entry_matches_by_snippet_with_whitespace_ignored() -> None:
    triage = parse(Path("harness-mutants.toml"), ENTRY)
    assert triage.equivalent(_mutant()) is not None
    assert triage.stale([_mutant()]) == []


def test_an_entry_names_one_mutant_of_identical_lines_by_its_occurrence() -> None:
    first, second = enumerate_file("limits.py", TWICE, [OPERATOR])
    assert (first.rank, second.rank) == (0, 1) and first.occurrence < second.occurrence
    triage = parse(Path("t.toml"), ENTRY.replace("occurrence = 0", "occurrence = 1"))
    assert triage.equivalent(first) is None and triage.equivalent(second) is not None
    assert triage.stale([first, second]) == []
    # An occurrence the line does not have any more is a stale entry.
    assert [e.occurrence for e in triage.stale([first])] == [1]


def test_a_group_is_an_entry_for_each_of_its_mutants_with_its_reason() -> None:
    first, second = enumerate_file("limits.py", TWICE, [OPERATOR])
    grouped = parse(Path("t.toml"), GROUP)
    one_each = parse(Path("t.toml"), ENTRY + "\n" + ENTRY.replace("occurrence = 0",
                                                                  "occurrence = 1"))
    for mutant in (first, second):
        found, alone = grouped.equivalent(mutant), one_each.equivalent(mutant)
        assert found is not None and alone is not None
        assert (found.occurrence, found.reason) == (alone.occurrence, alone.reason)
    assert [e.name for e in grouped.entries] == ["[[equivalent]] #1 mutant 1",
                                                 "[[equivalent]] #1 mutant 2"]
    assert [e.to_json()["member"] for e in (*grouped.entries, *one_each.entries)] == [
        1, 2, None, None]
    # A member goes stale on its own, named by its group and its place in it.
    (stale,) = grouped.stale([first])
    assert (stale.name, stale.occurrence) == ("[[equivalent]] #1 mutant 2", 1)
    # The members as sub-tables, one key a line, are the same group.
    sub_tables = parse(Path("t.toml"), GROUP.split("mutants = [")[0] + "".join(
        f'[[equivalent.mutants]]\npath = "limits.py"\nfunction = "over"\n'
        f'operator = "{OPERATOR}"\nsnippet = "return count > limit"\noccurrence = {k}\n'
        for k in (0, 1)))
    assert sub_tables.entries == grouped.entries
    # The two shapes in one table.
    both = parse(Path("t.toml"), GROUP.replace("occurrence = 1", "occurrence = 2")
                 + "\n" + ENTRY.replace("occurrence = 0", "occurrence = 1"))
    assert [e.name for e in both.stale([first, second])] == ["[[equivalent]] #1 mutant 2"]


def test_a_blind_entry_is_not_equivalent_and_goes_stale_like_one() -> None:
    triage = parse(Path("t.toml"), ENTRY.replace("[[equivalent]]", "[[blind]]"))
    assert triage.equivalent(_mutant()) is None
    blind = triage.known_blind(_mutant())
    assert blind is not None and blind.name == "[[blind]] #1"
    gone = parse(Path("t.toml"), ENTRY.replace("[[equivalent]]", "[[blind]]")
                 .replace('"over"', '"under"'))
    assert [e.table for e in gone.stale([_mutant()])] == ["blind"]


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
        (ENTRY.replace("occurrence = 0\n", ""),
         "t.toml: [[equivalent]] #1: occurrence: missing (an entry names one mutant: add "
         "`occurrence = N`"),
        (ENTRY.replace("[[equivalent]]", "[[blind]]").replace("occurrence = 0\n", ""),
         "t.toml: [[blind]] #1: occurrence: missing"),
        (ENTRY.replace("occurrence = 0", 'occurrence = "0"'),
         "t.toml: [[equivalent]] #1: occurrence: expected an integer >= 0"),
        (ENTRY.replace("occurrence = 0", "occurrence = -1"),
         "t.toml: [[equivalent]] #1: occurrence: expected an integer >= 0"),
        (ENTRY + "\n" + ENTRY.replace("[[equivalent]]", "[[blind]]"),
         "t.toml: [[blind]] #1: occurrence: 0 names the mutant [[equivalent]] #1 names"),
        ('[[exclude]]\npath = "cli.py"\n', "t.toml: [[exclude]] #1: reason: missing"),
        (GROUP.replace('reason = "count never equals limit here"\n', ""),
         "t.toml: [[equivalent]] #1: reason: missing"),
        (GROUP.replace(", occurrence = 1 }", " }"),
         "t.toml: [[equivalent]] #1 mutant 2: occurrence: missing"),
        (GROUP.replace('"limits.py", function = "over"', '"limits.py"', 1),
         "t.toml: [[equivalent]] #1 mutant 1: function: missing"),
        (GROUP.replace(", occurrence = 1 }", ', occurrence = 1, reason = "r" }'),
         "t.toml: [[equivalent]] #1 mutant 2: reason: unknown key (known: function, "
         "occurrence, operator, path, snippet)"),
        (GROUP.replace("mutants = [", 'path = "limits.py"\nmutants = ['),
         "t.toml: [[equivalent]] #1: path: unknown key (known: mutants, reason)"),
        (GROUP.split("mutants = [")[0] + "mutants = []\n",
         "t.toml: [[equivalent]] #1: mutants: expected a non-empty array of tables"),
        (GROUP.split("mutants = [")[0] + 'mutants = ["limits.py"]\n',
         "t.toml: [[equivalent]] #1: mutants: expected a non-empty array of tables"),
        (GROUP.replace("occurrence = 1", "occurrence = 0"),
         "t.toml: [[equivalent]] #1 mutant 2: occurrence: 0 names the mutant "
         "[[equivalent]] #1 mutant 1 names"),
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
    assert triage.equivalents and all(e.reason for e in triage.entries)
    assert triage.stale(enumerate_tree(target.sources, target.files)) == []
