"""The public rule API (`invariants.scan.api`): its helpers answer as the built-in rules'
analyses do, each shown on a case it must answer yes and one it must answer no; a team rule
written with the call graph finds what it should through a whole scan; every public name
is documented in docs/team-rules.md."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from team_rule_repo import Repo, forget_modules, make_repo

from invariants.scan import api
from invariants.scan.config import load_config
from invariants.scan.runner import scan

__all__ = ["forget_modules"]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "team-rules.md"


def context(source: str) -> api.FileContext:
    ctx = api.FileContext("m.py", source, api.ScanConfig(), False)
    ctx.attach(cst.parse_module(source))
    return ctx


def call(ctx: api.FileContext, name: str, occurrence: int = 0) -> api.CallRecord:
    found = [r for r in ctx.calls if ctx.name_of(r.node.func) == name]
    return found[occurrence]


CHECKED = """
def f(order, other):
    if not order.is_valid():
        return
    commit(order)
    if other.is_valid() or urgent():
        commit(other)
    commit(order) if order.is_valid() else None
"""


def test_checked_before_names_what_a_check_proved_on_every_path() -> None:
    ctx = context(CHECKED)
    first = api.checked_before(ctx, call(ctx, "commit"), ["is_valid"])
    assert list(first) == ["order"]
    assert isinstance(first["order"], cst.Call)
    # the controls: a check joined by `or` proves nothing; other check names prove nothing
    assert "other" not in api.checked_before(ctx, call(ctx, "commit", 1), ["is_valid"])
    assert api.checked_before(ctx, call(ctx, "commit"), ["is_ready"]) == {}


DOMINATED = """
def f(x):
    open_gate()
    if x:
        note()
    else:
        other()
    close_gate()
    for item in x:
        step()
    after()
"""


def test_dominates_says_whether_one_statement_runs_on_every_path_to_another() -> None:
    ctx = context(DOMINATED)
    function = ctx.module.body[0]
    assert isinstance(function, cst.FunctionDef)

    def statement(name: str) -> cst.CSTNode:
        found = call(ctx, name).statement
        assert found is not None
        return found

    assert api.dominates(ctx, function, statement("open_gate"), statement("close_gate"))
    assert api.dominates(ctx, function, statement("open_gate"), statement("step"))
    assert api.dominates(ctx, function, statement("note"), statement("note"))
    assert api.dominates(ctx, function, statement("close_gate"), statement("after"))
    # the controls: one branch does not run on every path, nor a loop body (it may not run)
    assert not api.dominates(ctx, function, statement("note"), statement("close_gate"))
    assert not api.dominates(ctx, function, statement("step"), statement("after"))
    with pytest.raises(ValueError, match="not a statement of f"):
        api.dominates(ctx, function, ctx.module, statement("note"))


REACHES = '''
from invariants.scan.api import FileContext, Rule, TreeResult, Finding, call_graph, function_id


def check(ctx: FileContext) -> None:
    return None


def whole_tree(reports, config):
    graph = call_graph(reports)
    handlers = [f for f in graph.functions if f.endswith(".handle")]
    blocking = {f for f in graph.functions if f.endswith(":block")}
    found = []
    for handler in sorted(handlers):
        if graph.reachable([handler]) & blocking:
            module, _, qualname = handler.partition(":")
            path = module.replace(".", "/") + ".py"
            found.append(Finding("TST010", path, 1, 1, 1, f"{qualname} reaches block()",
                                 qualname))
    return TreeResult(found)


REACHES_BLOCK = Rule("TST010", "handler-reaches-block", "A handler reaches block().",
                     lambda ctx: True, check, ("x = 1\\n",), (), tree_pass=whole_tree)
'''

TREE = {
    "src/hub.py": "from helpers import wait\n\nclass Hub:\n    def handle(self):\n"
                  "        wait()\n",
    "src/quiet.py": "class Quiet:\n    def handle(self):\n        return 1\n",
    "src/helpers.py": "def wait():\n    block()\n\ndef block():\n    pass\n",
}


@pytest.mark.usefixtures("forget_modules")
def test_a_team_rule_with_the_call_graph_finds_what_reaches_across_files(
    tmp_path: Path,
) -> None:
    repo: Repo = make_repo(tmp_path)
    repo.write_rule(REACHES, "reaches")
    repo.configure(repo.spec("REACHES_BLOCK", "reaches"))
    for name, source in TREE.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    result = scan(["src"], load_config(repo.pyproject), root=tmp_path, cache_dir=None)
    assert [(f.rule, f.message) for f in result.findings] == [
        ("TST010", "Hub.handle reaches block()")]  # not Quiet.handle: the control
    assert result.errors == []
    graph = api.CallGraph([])  # with no report there is no call
    assert graph.functions == frozenset() and graph.callers("m:f") == frozenset()


def test_call_graph_answers_callers_and_callees() -> None:
    from invariants.scan.engine import analyze_source

    config = api.ScanConfig()
    reports = [analyze_source(name.removeprefix("src/"), source.encode(), config,
                              is_test=False) for name, source in TREE.items()]
    graph = api.call_graph(reports)
    assert graph.callees("hub:Hub.handle") == {"helpers:wait"}
    assert graph.callers("helpers:block") == {"helpers:wait"}
    assert graph.reachable(["hub:Hub.handle"]) == {"helpers:wait", "helpers:block"}
    assert graph.reachable(["quiet:Quiet.handle"]) == frozenset()  # the control
    assert api.function_id("pkg/router.py", "Router.nack") == "pkg.router:Router.nack"


def test_every_public_name_is_documented() -> None:
    page = DOCS.read_text(encoding="utf-8")
    missing = [name for name in api.__all__ if f"`{name}`" not in page]
    assert missing == []
    assert "`not_a_name_of_the_api`" not in page  # the control: the check can miss a name
    assert all(hasattr(api, name) for name in api.__all__)
