"""A team rule's findings go where a built-in rule's go: the text, JSON and SARIF output,
suppressions, the baseline and the scan cache; a team rule that raises is that rule's error
for that file, with its traceback, and the scan goes on. Each with its control."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from team_rule_repo import Repo, forget_modules, make_repo

from harness.cli import main
from invariants.scan.config import load_config
from invariants.scan.problems import RULE_ERROR, STALE_BASELINE
from invariants.scan.runner import ScanResult, scan

__all__ = ["forget_modules"]
pytestmark = pytest.mark.usefixtures("forget_modules")
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.chdir(tmp_path)
    return make_repo(tmp_path)


def scanned(repo: Repo, cache: bool = False) -> ScanResult:
    cache_dir = repo.root / ".harness-cache" if cache else None
    return scan(["src"], load_config(repo.pyproject), root=repo.root, cache_dir=cache_dir)


def test_a_finding_is_reported_as_a_built_in_one_is(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--no-cache"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["src/mesh.py:2:5 TST001 forbidden() is forbidden here", "    forbidden()"]
    assert main(["scan", "--no-cache", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["line"], f["symbol"]) for f in document["findings"]] == [
        ("TST001", 2, "main")]
    # the control: the same tree without the rule's entry is clean
    repo.pyproject.write_text('[tool.harness]\npaths = ["src"]\n', encoding="utf-8")
    assert main(["scan", "--no-cache"]) == 0


def test_sarif_lists_the_rule_and_its_result(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--no-cache", "--format", "sarif"]) == 1
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert rules[-1] == {
        "id": "TST001", "name": "forbidden-call",
        "shortDescription": {"text": "A call of a forbidden name."},
        "defaultConfiguration": {"level": "error"}, "properties": {"tags": ["architecture"]},
    }
    [result] = run["results"]
    assert (result["ruleId"], result["ruleIndex"]) == ("TST001", len(rules) - 1)
    assert result["partialFingerprints"]["meshHarness/v1"]


def test_sarif_keeps_a_result_whose_rule_it_was_not_given(repo: Repo) -> None:
    from invariants.scan.sarif import to_sarif

    result = scanned(repo)
    document = json.loads(to_sarif(result.findings, result.errors, repo.root))
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    listed = document["runs"][0]["tool"]["driver"]["rules"]
    [sarif_result] = document["runs"][0]["results"]
    assert listed[sarif_result["ruleIndex"]]["id"] == "TST001"


def test_a_suppression_names_the_team_id(repo: Repo) -> None:
    mesh = repo.root / "src" / "mesh.py"
    mesh.write_text("def main():\n    forbidden()  # harness: allow[tst001] the migration\n")
    result = scanned(repo)
    assert (result.findings, result.errors, result.stats.suppressed) == ([], [], 1)
    # controls: a suppression of another id does not silence it, and an unknown id is malformed
    mesh.write_text("def main():\n    forbidden()  # harness: allow[MESH004] not this one\n")
    result = scanned(repo)
    assert [f.rule for f in result.findings] == ["TST001"]
    assert [p.kind for p in result.errors] == ["unused-suppression"]
    mesh.write_text("def main():\n    forbidden()  # harness: allow[TST002] a typo\n")
    result = scanned(repo)
    assert [p.message for p in result.errors] == ["malformed suppression: unknown rule id 'TST002'"]


def test_the_baseline_accepts_and_judges_its_findings(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--no-cache", "--baseline", "b.json", "--update-baseline"]) == 0
    entries = json.loads((repo.root / "b.json").read_text())["entries"]
    assert [(e["rule"], e["snippet"]) for e in entries] == [("TST001", "forbidden()")]
    capsys.readouterr()
    assert main(["scan", "--no-cache", "--baseline", "b.json"]) == 0  # accepted
    mesh = repo.root / "src" / "mesh.py"
    mesh.write_text(mesh.read_text() + "    forbidden()\n")
    assert main(["scan", "--no-cache", "--baseline", "b.json"]) == 1  # the control: a new one
    assert "src/mesh.py:4:5 TST001" in capsys.readouterr().out
    mesh.write_text("def main():\n    allowed()\n")
    assert main(["scan", "--no-cache", "--baseline", "b.json"]) == 1
    assert "error[stale-baseline] stale baseline entry: TST001 in main `forbidden()`" in (
        capsys.readouterr().out)


def test_a_baseline_entry_of_a_rule_no_longer_registered_is_stale_and_shrinks_away(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--no-cache", "--baseline", "b.json", "--update-baseline"]) == 0
    repo.pyproject.write_text('[tool.harness]\npaths = ["src"]\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["scan", "--no-cache", "--baseline", "b.json"]) == 1
    out = capsys.readouterr().out
    assert (f"src/mesh.py error[{STALE_BASELINE}] stale baseline entry: TST001 in main "
            "`forbidden()`: no such rule (neither built in nor in [tool.harness] rules)") in out
    assert main(["scan", "--no-cache", "--baseline", "b.json", "--update-baseline"]) == 0
    assert json.loads((repo.root / "b.json").read_text())["entries"] == []
    # the control: a built-in id no rule has is refused when the baseline is read
    (repo.root / "b.json").write_text(json.dumps({"version": 1, "entries": [
        {"rule": "MESH404", "path": "src/mesh.py", "symbol": "", "snippet": "x", "count": 1}]}))
    assert main(["scan", "--no-cache", "--baseline", "b.json"]) == 2
    assert "baseline entries[0]: unknown rule id 'MESH404'" in capsys.readouterr().err


def test_the_cache_serves_its_findings_and_an_edit_of_the_rule_invalidates_it(
    repo: Repo,
) -> None:
    first = scanned(repo, cache=True)
    again = scanned(repo, cache=True)
    assert (first.stats.cached, again.stats.cached) == (0, 1)
    assert again.findings == first.findings and [f.rule for f in again.findings] == ["TST001"]
    # an edit of the rule (its message) is a new rule: the cached result is not used
    source = (repo.root / repo.package / "rules.py").read_text()
    repo.write_rule(source.replace("is forbidden here", "is not allowed"))
    import sys

    sys.modules.pop(f"{repo.package}.rules")  # a new process would import the edit
    edited = scanned(repo, cache=True)
    assert edited.stats.cached == 0
    assert [f.message for f in edited.findings] == ["forbidden() is not allowed"]


RAISES = '''
from invariants.scan.api import FileContext, Rule


def check(ctx: FileContext) -> None:
    if "explode" in ctx.text:
        raise ZeroDivisionError("the rule's own bug")


EXPLODES = Rule("TST002", "explodes", "Raises on some files.", lambda ctx: True, check,
                ("x = 1\\n",), (("explode()\\n", (1,)),))
'''


def test_a_rule_that_raises_is_its_error_for_that_file_and_the_scan_goes_on(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write_rule(RAISES, "raises")
    repo.configure(repo.spec(), repo.spec("EXPLODES", "raises"))
    (repo.root / "src" / "bomb.py").write_text("def f():\n    explode()\n    forbidden()\n")
    result = scanned(repo)
    # the other rule still reported both files, and the raising rule only its error
    assert [(f.rule, f.path) for f in result.findings] == [
        ("TST001", "src/bomb.py"), ("TST001", "src/mesh.py")]
    [error] = result.errors
    assert (error.kind, error.path) == (RULE_ERROR, "src/bomb.py")
    head, *trace = error.message.splitlines()
    assert head == "TST002 failed on this file: ZeroDivisionError: the rule's own bug"
    assert trace[0] == "Traceback (most recent call last):"
    assert any(f"{repo.package}/raises.py" in line and "in check" in line for line in trace)
    assert trace[-1] == "ZeroDivisionError: the rule's own bug"
    assert main(["scan", "--no-cache"]) == 1
    assert "src/bomb.py error[rule-error] TST002 failed on this file" in capsys.readouterr().out
    # the control: the file it does not raise on has no error
    (repo.root / "src" / "bomb.py").unlink()
    assert scanned(repo).errors == []


TREE_RAISES = '''
from invariants.scan.api import FileContext, Rule, TreeResult


def check(ctx: FileContext) -> None:
    return None


def whole_tree(reports, config):
    if len(reports) > 1:
        raise KeyError("a file it did not expect")
    return TreeResult()


WHOLE = Rule("TST003", "whole-tree", "A whole-tree pass that raises.", lambda ctx: True,
             check, ("x = 1\\n",), (), tree_pass=whole_tree)
'''


def test_a_whole_tree_pass_that_raises_is_the_rules_error(repo: Repo) -> None:
    repo.write_rule(TREE_RAISES, "whole")
    repo.configure(repo.spec(), repo.spec("WHOLE", "whole"))
    (repo.root / "src" / "other.py").write_text("x = 1\n")
    result = scanned(repo)
    assert [f.rule for f in result.findings] == ["TST001"]
    [error] = result.errors
    assert (error.kind, error.path) == (RULE_ERROR, "")
    assert error.message.startswith("TST003 failed in its whole-tree pass: KeyError: ")
    assert "in whole_tree" in error.message
    (repo.root / "src" / "other.py").unlink()  # the control: one file, no error
    assert scanned(repo).errors == []


PICKY = '''
from invariants.scan.api import FileContext, Rule


def applies(ctx: FileContext) -> bool:
    if ctx.path.endswith("odd.py"):
        raise LookupError("no such layer")
    return True


def prefilter(ctx: FileContext) -> bool:
    if "strange" in ctx.text:
        raise UnicodeError("cannot read that")
    return False


PICKY = Rule("TST004", "picky", "Raises deciding whether it applies.", applies,
             lambda ctx: None, ("x = 1\\n",), (), prefilter=prefilter)
'''


def test_a_rule_whose_applies_or_prefilter_raises_is_its_error_too(repo: Repo) -> None:
    repo.write_rule(PICKY, "picky")
    repo.configure(repo.spec(), repo.spec("PICKY", "picky"))
    (repo.root / "src" / "odd.py").write_text("forbidden()\n")
    (repo.root / "src" / "strange.py").write_text("strange = forbidden()\n")
    result = scanned(repo)
    assert [f.path for f in result.findings] == ["src/mesh.py", "src/odd.py", "src/strange.py"]
    assert [(p.path, p.kind, p.message.splitlines()[0]) for p in result.errors] == [
        ("src/odd.py", RULE_ERROR, "TST004 failed on this file: LookupError: no such layer"),
        ("src/strange.py", RULE_ERROR,
         "TST004 failed on this file: UnicodeError: cannot read that"),
    ]
    assert all("in applies" in p.message or "in prefilter" in p.message for p in result.errors)
    (repo.root / "src" / "odd.py").unlink()  # the control: the files it does not raise on
    (repo.root / "src" / "strange.py").unlink()
    assert scanned(repo).errors == []
