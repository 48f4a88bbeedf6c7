"""The planted bugs are switched off by default: `make` and `Settings()` carry none, and
each factory of PLANTED.json turns on its own switch only."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

pytest.importorskip("invariants")

from invariants.adapter import FirstChooser

from nodemesh.harness_adapter import make
from nodemesh.settings import Settings

PLANTED = json.loads((Path(__file__).resolve().parent.parent / "PLANTED.json").read_text())


def test_the_clean_mesh_has_no_switch_on() -> None:
    assert Settings().bugs == frozenset()
    assert make(FirstChooser()).settings.bugs == frozenset()


@pytest.mark.parametrize("record", PLANTED, ids=[r["name"] for r in PLANTED])
def test_each_factory_turns_on_its_own_switch(record: dict[str, str]) -> None:
    module, _, name = record["factory"].partition(":")
    adapter = getattr(importlib.import_module(module), name)(FirstChooser())
    assert adapter.settings.bugs == frozenset({record["name"]})
