"""`[tool.harness.params]` and `--harness-param`: every `CheckParams` figure is a setting,
validated with one line naming the key, and the figures reach the checkers."""

from __future__ import annotations

import dataclasses

import pytest

from harness.params import params_from, parse_assignments
from invariants.checks import CheckParams
from invariants.scan.config import ConfigError

ORIGIN = "/r/pyproject.toml: [tool.harness.params]"


def documented_params() -> list[tuple[str, object]]:
    """(key, default) of every parameter, one per `CheckParams` field, in field order."""
    defaults = CheckParams()
    return [(f.name, getattr(defaults, f.name)) for f in dataclasses.fields(CheckParams)]


def test_every_field_is_a_documented_parameter_with_its_seed_default() -> None:
    names = [name for name, _ in documented_params()]
    assert names == [f for f in CheckParams.__dataclass_fields__]
    defaults = dict(documented_params())
    assert defaults["response_timeout_ms"] == 30_000 and defaults["delivery_retries"] == 6


def test_values_of_each_type_are_applied() -> None:
    params = params_from(
        {"response_timeout_ms": 5_000, "resendable_errors": ["CalleeRefused"],
         "watermarks": {"h0": 4}},
        ORIGIN,
    )
    assert params.response_timeout_ms == 5_000
    assert params.resendable_errors == frozenset({"CalleeRefused"})
    assert params.watermarks == {"h0": 4}
    assert params.delivery_retries == CheckParams().delivery_retries  # untouched: the default


@pytest.mark.parametrize(
    ("values", "line"),
    [
        ({"response_timeout": 5}, f"{ORIGIN} response_timeout: unknown parameter "
                                  "(did you mean 'response_timeout_ms'?)"),
        ({"delivery_retries": "six"}, f"{ORIGIN} delivery_retries: expected a non-negative "
                                      "integer, got 'six'"),
        ({"delivery_retries": -1}, f"{ORIGIN} delivery_retries: expected a non-negative "
                                   "integer, got -1"),
        ({"delivery_retries": True}, f"{ORIGIN} delivery_retries: expected a non-negative "
                                     "integer, got True"),
        ({"resendable_errors": "Refused"}, f"{ORIGIN} resendable_errors: expected an array "
                                           "of strings, got 'Refused'"),
        ({"watermarks": {"h0": "x"}}, f"{ORIGIN} watermarks: expected a table of "
                                      "non-negative integers, got {'h0': 'x'}"),
    ],
)
def test_a_bad_key_or_value_is_one_line(values: dict[str, object], line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        params_from(values, ORIGIN)
    assert str(caught.value) == line


def test_stage_numbers_may_be_negative_and_a_table_keeps_the_other_entries() -> None:
    params = params_from({"stop_stages": {"Active": -300}}, ORIGIN)
    assert params.stop_stages == {"Active": -300, "GrainDeactivation": 19_998}
    with pytest.raises(ConfigError, match="stop_stages: expected a table of integers"):
        params_from({"stop_stages": {"Active": "x"}}, ORIGIN)
    with pytest.raises(ConfigError, match="stop_budget_ms: expected a non-negative integer"):
        params_from({"stop_budget_ms": -1}, ORIGIN)


def test_assignments_read_toml_values_and_bare_words() -> None:
    table = parse_assignments(
        ["delivery_retries=3", "resendable_errors=['Refused']", "x = Word"], "--harness-param"
    )
    assert table == {"delivery_retries": 3, "resendable_errors": ["Refused"], "x": "Word"}
    with pytest.raises(ConfigError, match="--harness-param: expected KEY=VALUE, got 'oops'"):
        parse_assignments(["oops"], "--harness-param")


TABLE = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV4"]\n'


def _repo(pytester: pytest.Pytester, extra: str = "") -> None:
    pytester.makepyprojecttoml(TABLE + extra)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})


def test_the_figures_reach_the_checker(pytester: pytest.Pytester) -> None:
    # The reference re-sends a rejected call 6 times; held to a budget of 2, it must fail.
    _repo(pytester, "[tool.harness.params]\ndelivery_retries = 2\n")
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=2, failed=2)  # the file item and the tree item pass
    result.stdout.fnmatch_lines(["*INV4*violated*"])
    # The adapter-check item holds the mesh to the same figure: its grain program sees it.
    result.stdout.fnmatch_lines(["*grain: *delivery_retries*"])


def test_the_option_overrides_the_table(pytester: pytest.Pytester) -> None:
    _repo(pytester, "[tool.harness.params]\ndelivery_retries = 2\n")
    result = pytester.runpytest("-p", "harness", "--harness-param", "delivery_retries=6")
    result.assert_outcomes(passed=4)


def test_a_bad_parameter_stops_the_run_with_one_line(pytester: pytest.Pytester) -> None:
    pyproject = pytester.makepyprojecttoml(TABLE + "[tool.harness.params]\nretries = 2\n")
    result = pytester.runpytest("-p", "harness")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [e for e in result.stderr.lines if e.startswith("ERROR:")] == [
        f"ERROR: mesh-harness: {pyproject}: [tool.harness.params] retries: unknown parameter "
        "(did you mean 'delivery_retries'?)"
    ]


def test_the_docs_list_every_parameter() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "plugin.md").read_text(encoding="utf-8")
    section = text.split("## Check parameters", 1)[1]
    missing = [name for name, _ in documented_params() if f"| `{name}` |" not in section]
    assert missing == []
