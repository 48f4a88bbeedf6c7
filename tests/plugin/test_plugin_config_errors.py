"""A bad setting is one clear error line naming the key (or option), and no test runs.

Each case also has its control: the same repo with the setting corrected runs.
"""

from __future__ import annotations

import pytest

BASE = '[tool.harness]\npaths = ["src"]\n'
GOOD = BASE + "invariants = []\n"


def _repo(pytester: pytest.Pytester, table: str) -> None:
    pytester.makepyprojecttoml(table)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})


def _error_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stderr.lines if line.startswith("ERROR:")]


def _assert_one_error(result: pytest.RunResult, *fragments: str) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = _error_lines(result)
    assert len(errors) == 1, result.stderr.lines
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert "Traceback" not in result.stderr.str()
    return errors[0]


def test_the_control_repo_runs(pytester: pytest.Pytester) -> None:
    _repo(pytester, GOOD)
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=2)
    assert _error_lines(result) == []


@pytest.mark.parametrize(
    ("table_line", "fragments"),
    [
        ("guard_fuctions = ['may_answer']", ("[tool.harness] guard_fuctions: unknown key",)),
        ("adapter-spec = 'x:y'", ("[tool.harness] adapter-spec: unknown key",)),
        ("adapter = 'no_colon_here'", ("[tool.harness] adapter:", "'module:factory'")),
        ("adapter = 'not_a_module_anywhere:make'",
         ("[tool.harness] adapter:", "cannot import module 'not_a_module_anywhere'")),
        ("adapter = 'reference_impl.adapter:no_such_factory'",
         ("[tool.harness] adapter:", "has no attribute 'no_such_factory'")),
        ("invariants = ['INV9']", ("[tool.harness] invariants:", "unknown invariant 'INV9'")),
        ("profile = 'nightly'", ("Hypothesis profile 'nightly' is unknown",)),
        ("prove = 'yes'", ("[tool.harness] prove: expected true or false",)),
        ("select = ['MESH999']", ("[tool.harness] select: unknown rule id 'MESH999'",)),
        ("baseline = 'missing-baseline.json'", ("missing-baseline.json: baseline not found",)),
    ],
)
def test_a_bad_key_is_one_error_line(
    pytester: pytest.Pytester, table_line: str, fragments: tuple[str, ...]
) -> None:
    table = BASE if table_line.startswith("invariants") else GOOD
    _repo(pytester, table + table_line + "\n")
    line = _assert_one_error(pytester.runpytest("-p", "harness"), *fragments)
    assert line.startswith("ERROR: mesh-harness: ")


@pytest.mark.parametrize(
    ("option", "fragments"),
    [
        ("--harness-adapter=missing_mesh_module:make_adapter",
         ("--harness-adapter:", "cannot import module 'missing_mesh_module'")),
        ("--harness-invariants=INV1,INV0", ("--harness-invariants:", "unknown invariant 'INV0'")),
        ("--harness-select=MESH001,nope", ("--harness-select:", "unknown rule id 'nope'")),
        ("--harness-profile=warp", ("Hypothesis profile 'warp' is unknown",)),
    ],
)
def test_a_bad_option_is_one_error_line(
    pytester: pytest.Pytester, option: str, fragments: tuple[str, ...]
) -> None:
    _repo(pytester, GOOD)
    _assert_one_error(pytester.runpytest("-p", "harness", option), *fragments)


def test_a_profile_registered_in_a_conftest_is_accepted(pytester: pytest.Pytester) -> None:
    _repo(pytester, GOOD.replace("invariants = []", 'invariants = ["INV1"]'))
    pytester.makeconftest(
        "from hypothesis import settings\n"
        "settings.register_profile('tiny', max_examples=3, deadline=None, database=None)\n"
    )
    result = pytester.runpytest("-p", "harness", "--harness-profile=tiny")
    result.assert_outcomes(passed=4)


def test_a_bad_key_does_not_disturb_a_run_that_does_not_ask_for_the_harness(
    pytester: pytest.Pytester,
) -> None:
    _repo(pytester, "[tool.harness]\nguard_fuctions = ['may_answer']\n")
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert _error_lines(result) == []
