"""`[tool.harness] invariants`: a team's own checkers, loaded from its repository and
registered beside INV1–INV7. Each way an entry can be wrong is one line naming the file,
the key and the entry; the good entry (the control of each) loads, registers and is
selected after the built-in invariants it leaves selected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.settings import Overrides, resolve
from invariants.checks import CHECK_IDS, CHECKS, check_ids
from invariants.checks import team as team_invariants
from invariants.scan.config import ConfigError

# A checker written by hand against the public API: no failure is ever answered.
CHECKER = '''
from invariants.checks.api import EventKind, Monitor, TraceEvent


class NoFailureAnswered(Monitor):
    check_id = "{check_id}"
    title = "no delivery is answered with a failure"
    obligations = {{"deliveries not answered with a failure": "nothing was handled"}}

    def observe(self, event: TraceEvent) -> None:
        if event.kind is EventKind.HANDLED:
            self.exercised("deliveries not answered with a failure")
        if event.kind is EventKind.FAILURE_EMITTED:
            self.flag(f"delivery {{event.answers}} was answered with a failure", event)
'''


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.package = "team_inv_" + re.sub(r"\W", "_", root.name)
        (root / self.package).mkdir()
        (root / self.package / "__init__.py").write_text("", encoding="utf-8")
        self.write(CHECKER.format(check_id="TEAM1"))

    def write(self, source: str, module: str = "invariants") -> None:
        (self.root / self.package / f"{module}.py").write_text(source, encoding="utf-8")

    def spec(self, attribute: str = "NoFailureAnswered", module: str = "invariants") -> str:
        return f"{self.package}.{module}:{attribute}"

    def settings(self, *entries: str) -> tuple[str, ...]:
        listed = ", ".join(f'"{entry}"' for entry in entries)
        pyproject = self.root / "pyproject.toml"
        pyproject.write_text(f"[tool.harness]\ninvariants = [{listed}]\n", encoding="utf-8")
        return resolve(pyproject, self.root, Overrides()).invariants

    def refused(self, *entries: str) -> str:
        with pytest.raises(ConfigError) as caught:
            self.settings(*entries)
        line = str(caught.value)
        assert "\n" not in line
        prefix = f"{self.root / 'pyproject.toml'}: [tool.harness] invariants: "
        assert line.startswith(prefix), line
        return line.removeprefix(prefix)


@pytest.fixture
def repo(tmp_path: Path, team_registry: None) -> Repo:
    """A repository whose checkers are forgotten afterwards (`team_registry`)."""
    return Repo(tmp_path)


def test_a_spec_alone_adds_the_team_invariant_to_every_built_in_one(repo: Repo) -> None:
    assert repo.settings(repo.spec()) == (*CHECK_IDS, "TEAM1")
    assert CHECKS["TEAM1"].title == "no delivery is answered with a failure"
    assert check_ids(["team1"], "--invariants") == ("TEAM1",)  # an id like any other now


def test_ids_select_the_built_in_ones_and_none_selects_none(repo: Repo) -> None:
    assert repo.settings("INV2", repo.spec(), "inv1") == ("INV2", "INV1", "TEAM1")
    assert repo.settings("none", repo.spec()) == ("TEAM1",)
    assert repo.settings(repo.spec(), repo.spec()) == (*CHECK_IDS, "TEAM1")  # loaded once


def test_the_command_line_may_name_a_team_invariant_by_its_id(repo: Repo) -> None:
    pyproject = repo.root / "pyproject.toml"
    pyproject.write_text(f'[tool.harness]\ninvariants = ["{repo.spec()}"]\n', encoding="utf-8")
    chosen = resolve(pyproject, repo.root, Overrides(invariants=("team1", "inv3")))
    assert chosen.invariants == ("TEAM1", "INV3")
    with pytest.raises(ConfigError, match=r"^--harness-invariants: unknown invariant 'TEAM2'"):
        resolve(pyproject, repo.root, Overrides(invariants=("team2",)))


def test_a_module_that_does_not_import(repo: Repo) -> None:
    line = repo.refused(repo.spec(module="nowhere"))
    assert line.startswith(f"'{repo.spec(module='nowhere')}': cannot import module "
                           f"'{repo.package}.nowhere'")


def test_a_module_that_raises_while_loading(repo: Repo) -> None:
    repo.write("raise RuntimeError('no config for the invariants')\n", "broken")
    assert repo.refused(repo.spec(module="broken")) == (
        f"'{repo.spec(module='broken')}': module '{repo.package}.broken' raised while "
        "loading: RuntimeError: no config for the invariants")


def test_a_missing_attribute(repo: Repo) -> None:
    assert repo.refused(repo.spec("Nothing")) == (
        f"'{repo.spec('Nothing')}': module '{repo.package}.invariants' has no attribute "
        "'Nothing'")


def test_not_a_checker(repo: Repo) -> None:
    repo.write(CHECKER.format(check_id="TEAM1") + "\nRULES = ['a list']\n")
    assert repo.refused(repo.spec("RULES")) == (
        f"'{repo.spec('RULES')}': is a list, not an invariant (a Monitor subclass, e.g. one "
        "made by invariants.checks.api.invariant(...))")


@pytest.mark.parametrize(("check_id", "problem"), [
    ("team1", "invariant id 'team1' must be upper-case letters, then digits (e.g. LEASE1)"),
    ("INV9", "invariant id 'INV9' has the prefix INV, which is the harness's own"),
])
def test_an_id_that_is_not_the_teams(repo: Repo, check_id: str, problem: str) -> None:
    repo.write(CHECKER.format(check_id=check_id))
    assert repo.refused(repo.spec()).startswith(f"'{repo.spec()}': {problem}")


def test_no_title_and_no_obligations(repo: Repo) -> None:
    repo.write(CHECKER.format(check_id="TEAM1") + "\nclass Untitled(NoFailureAnswered):\n"
               "    title = ''\n\n\nclass Unbound(NoFailureAnswered):\n    obligations = {}\n")
    assert "invariant TEAM1 has no title" in repo.refused(repo.spec("Untitled"))
    assert "invariant TEAM1 names no obligations" in repo.refused(repo.spec("Unbound"))


def test_two_checkers_with_one_id(repo: Repo) -> None:
    repo.write(CHECKER.format(check_id="TEAM1"), "again")
    assert repo.refused(repo.spec(), repo.spec(module="again")) == (
        f"'{repo.spec(module='again')}': duplicate invariant id 'TEAM1' "
        f"(also '{repo.spec()}')")


def test_a_fuzzing_session_hands_its_team_invariants_to_the_workers(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from invariants.fuzzing.config import ENV_TEAM_INVARIANTS, FuzzConfig, FuzzConfigError

    monkeypatch.syspath_prepend(str(repo.root))  # a worker's PYTHONPATH has the repository
    config = FuzzConfig(invariants=("INV1", "TEAM1"), team_invariants=(repo.spec(),))
    environ = config.to_environ()
    assert environ[ENV_TEAM_INVARIANTS] == repo.spec()
    CHECKS.pop("TEAM1")  # a worker process starts without it
    worker = FuzzConfig.from_environ(environ)
    assert worker.invariants == ("INV1", "TEAM1") and "TEAM1" in CHECKS
    # the control: without the specs a worker does not know the id
    CHECKS.pop("TEAM1")
    team_invariants._SPECS.clear()
    with pytest.raises(FuzzConfigError, match="unknown invariant 'TEAM1'"):
        FuzzConfig.from_environ({k: v for k, v in environ.items() if k != ENV_TEAM_INVARIANTS})
