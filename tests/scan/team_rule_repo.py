"""A repository with a static rule of its own (`[tool.harness] rules`), for the team-rule
tests: a package of rule modules at its root, its mesh under `src/`.

Each repository's rule package has a name of its own (from the test's temporary
directory), so two tests never share a module through `sys.modules`; `forget_modules`
drops what a test imported.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# TST001: a call of a forbidden name (`team_forbidden_calls`), written as a team writes
# one, against the public API alone.
RULE = '''
from invariants.scan.api import FileContext, InvalidExample, Names, Rule, last_part

CALLS = Names("team_forbidden_calls", ("forbidden",))


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test


def check(ctx: FileContext) -> None:
    names = CALLS.of(ctx.config)
    for record in ctx.calls:
        name = ctx.name_of(record.node.func)
        if name is not None and last_part(name) in names:
            ctx.report("TST001", record.node, f"{name}() is forbidden here", record.symbol)


VALID: tuple[str, ...] = ("allowed()\\n",)
INVALID: tuple[InvalidExample, ...] = (("x = 1\\nforbidden()\\n", (2,)),)

FORBIDDEN = Rule("TST001", "forbidden-call", "A call of a forbidden name.", applies, check,
                 VALID, INVALID, options=(CALLS,))
'''

MESH = "def main():\n    forbidden()\n    allowed()\n"


@dataclass(frozen=True)
class Repo:
    root: Path
    package: str  # the rule package's name

    @property
    def pyproject(self) -> Path:
        return self.root / "pyproject.toml"

    def spec(self, attribute: str = "FORBIDDEN", module: str = "rules") -> str:
        return f"{self.package}.{module}:{attribute}"

    def write_rule(self, source: str, module: str = "rules") -> Path:
        path = self.root / self.package / f"{module}.py"
        path.write_text(source, encoding="utf-8")
        return path

    def configure(self, *specs: str, extra: str = "") -> Path:
        listed = ", ".join(f'"{spec}"' for spec in specs)
        self.pyproject.write_text(
            f'[tool.harness]\npaths = ["src"]\nrules = [{listed}]\n{extra}', encoding="utf-8")
        return self.pyproject


def make_repo(tmp_path: Path, rule: str = RULE, mesh: str = MESH) -> Repo:
    package = "team_" + re.sub(r"\W", "_", tmp_path.name)
    repo = Repo(tmp_path, package)
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("", encoding="utf-8")
    repo.write_rule(rule)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mesh.py").write_text(mesh, encoding="utf-8")
    repo.configure(repo.spec())
    return repo


@pytest.fixture
def forget_modules() -> Iterator[None]:
    """Drop the modules a test imported (its repository's rule package) afterwards."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("team_"):
            del sys.modules[name]
