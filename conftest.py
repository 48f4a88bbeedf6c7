"""Project-wide pytest configuration."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def team_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test that registers a team's invariants leaves no trace of them: the checker
    registry as it was, and no module imported from the test's directory left behind."""
    from invariants.checks import CHECKS, team

    monkeypatch.setattr(team, "_SPECS", dict(team._SPECS))
    monkeypatch.setattr(team, "_MODULES", dict(team._MODULES))
    saved = dict(CHECKS)
    yield
    CHECKS.clear()
    CHECKS.update(saved)
    root = str(tmp_path)
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]
