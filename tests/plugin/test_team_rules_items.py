"""Team rules under `pytest -p harness`: their findings fail the scanned file's item, their
VALID/INVALID examples are items of their own (an invalid example the rule misses, or a
valid one it reports, fails its item), and a rule module that cannot be loaded is the same
one line from the plugin, `scan` and `check`."""

from __future__ import annotations

import sys

import pytest

from harness.cli import main

RULE = '''
from invariants.scan.api import FileContext, InvalidExample, Rule, last_part


def check(ctx: FileContext) -> None:
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is not None and last_part(name) == "forbidden":
            ctx.report("TST001", record.node, "forbidden() is forbidden here", record.symbol)


VALID: tuple[str, ...] = ("allowed()\\n",)
INVALID: tuple[InvalidExample, ...] = (("x = 1\\nforbidden()\\n", (2,)),)
FORBIDDEN = Rule("TST001", "forbidden-call", "A call of a forbidden name.",
                 lambda ctx: not ctx.is_test, check, VALID, INVALID)
'''


def _repo(pytester: pytest.Pytester, rule: str = RULE, mesh: str = "allowed()\n") -> str:
    """The repository, its rule package named after the test (one module per test)."""
    package = f"team_{pytester.path.name}"
    pytester.makepyprojecttoml(
        f'[tool.harness]\npaths = ["src"]\ninvariants = []\n'
        f'rules = ["{package}.rules:FORBIDDEN"]\n')
    pytester.makepyfile(**{"src/mesh": mesh, f"{package}/__init__": "",
                           f"{package}/rules": rule})
    return package


def test_the_examples_are_items_and_a_clean_tree_passes(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    result = pytester.runpytest("-p", "harness", "-rA")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines([
        "PASSED harness::rule-example[[]TST001-valid-0[]]",
        "PASSED harness::rule-example[[]TST001-invalid-0[]]",
    ])


def test_a_finding_fails_its_files_item(pytester: pytest.Pytester) -> None:
    _repo(pytester, mesh="def main():\n    forbidden()\n")
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "src/mesh.py:2:5 TST001 forbidden() is forbidden here",
        "  TST001: 1",  # the terminal summary
    ])


def test_an_invalid_example_the_rule_misses_fails_its_item(pytester: pytest.Pytester) -> None:
    _repo(pytester, RULE.replace('(("x = 1\\nforbidden()\\n", (2,)),)',
                                 '(("x = 1\\nallowed()\\n", (2,)),)'))
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*_ rule example TST001-invalid-0 _*",
        "TST001 invalid example 0: reported on lines [[][]], expected [[]2[]]",
        "   2 | allowed()",
        "FAILED harness::rule-example[[]TST001-invalid-0[]] - *",
    ])


def test_a_valid_example_the_rule_reports_fails_its_item(pytester: pytest.Pytester) -> None:
    _repo(pytester, RULE.replace('("allowed()\\n",)', '("forbidden()\\n",)'))
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "TST001 reports its valid example 0",
        "example.py:1:1 TST001 forbidden() is forbidden here",
    ])


def test_an_example_the_rule_raises_on_fails_with_the_traceback(
    pytester: pytest.Pytester,
) -> None:
    _repo(pytester, RULE.replace("    for record in ctx.calls:",
                                 "    if 'x = 1' in ctx.text:\n        raise ValueError('oops')\n"
                                 "    for record in ctx.calls:"))
    result = pytester.runpytest("-p", "harness")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "TST001 invalid example 0 could not be checked",
        "example.py error[[]rule-error[]] TST001 failed on this file: ValueError: oops",
        "Traceback (most recent call last):",
        "*rules.py*, in check",
    ])


@pytest.mark.parametrize(("rule", "problem"), [
    ("raise ImportError('no such helper')\n",
     "module '{package}.rules' raised while loading: ImportError: no such helper"),
    ("FORBIDDEN = 42\n", "is a int, not a rule record (invariants.scan.api.Rule)"),
    (RULE.replace('"TST001", "forbidden-call"', '"MESH042", "forbidden-call"'),
     "rule id 'MESH042' has the prefix MESH, which is the harness's own: choose a prefix "
     "of your team's (e.g. AIO001)"),
])
def test_a_bad_rule_module_is_the_same_line_from_every_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], rule: str, problem: str,
) -> None:
    package = _repo(pytester, rule)
    expected = (f"{pytester.path / 'pyproject.toml'}: [tool.harness] rules: "
                f"'{package}.rules:FORBIDDEN': {problem.format(package=package)}")
    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in plugin.stderr.lines if line.startswith("ERROR:")] == [
        f"ERROR: mesh-harness: {expected}"]
    capsys.readouterr()
    monkeypatch.chdir(pytester.path)
    for argv in (["scan", "--no-cache"], ["check", "--quiet", "--no-prove"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"mesh-harness {argv[0]}: error: {expected}"]
    # the control: the good module gets past the settings (a fresh process would import it)
    (pytester.path / package / "rules.py").write_text(RULE, encoding="utf-8")
    for name in [name for name in sys.modules if name.startswith(package)]:
        monkeypatch.delitem(sys.modules, name)
    assert main(["scan", "--no-cache"]) == 0
