"""A configured adapter factory that returns no adapter (None, a dict, a coroutine) is one
line naming the factory and what it returned, the same from `pytest -p harness`, `check`,
`adapter-check` and the `mesh_adapter_factory` fixture; exit 2 (4 for pytest's usage
error). The controls: a factory returning an adapter gets past the settings, and one that
raises is reported as the adapter's error, as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.cli import main

MESH = '''\
from reference_impl.adapter import make_adapter


def make_none(chooser):
    return None


def make_dict(chooser):
    return {"hub": chooser}


async def make_async(chooser):
    return make_adapter(chooser)


def make_good(chooser):
    return make_adapter(chooser)


def make_raising(chooser):
    raise RuntimeError("the mesh failed to start")
'''
COMMANDS = {
    "check": ["check", "--quiet", "--no-prove", "--invariants", "INV1"],
    "adapter-check": ["adapter-check"],
}
RETURNED = {
    "make_none": "returned None, not a mesh adapter",
    "make_dict": "returned a dict, not a mesh adapter",
    "make_async": "returned a coroutine, not a mesh adapter (an `async def` factory? it "
                  "must build the adapter and return it)",
}


def _repo(pytester: pytest.Pytester, factory: str) -> Path:
    pytester.makepyfile(badmesh=MESH)
    pytester.makepyprojecttoml(
        f'[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n'
        f'adapter = "badmesh:{factory}"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n"})
    return pytester.path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.fixture
def fresh_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "badmesh", raising=False)


@pytest.mark.parametrize("factory", list(RETURNED))
def test_a_factory_returning_no_adapter_is_one_line_everywhere(
    factory: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fresh_module: None,
) -> None:
    repo = _repo(pytester, factory)
    line = (f"{repo / 'pyproject.toml'}: [tool.harness] adapter: factory "
            f"'badmesh:{factory}' {RETURNED[factory]}")
    plugin = pytester.runpytest("-p", "harness")
    assert plugin.ret == pytest.ExitCode.USAGE_ERROR
    assert [e for e in plugin.stderr.lines if e.strip()] == [f"ERROR: mesh-harness: {line}"]
    capsys.readouterr()  # what the in-process pytest run printed
    monkeypatch.chdir(repo)
    for name, argv in COMMANDS.items():
        code, err = _cli(argv, capsys)
        assert (code, err) == (2, [f"mesh-harness {name}: error: {line}"])


def test_the_fixture_says_the_same_line(pytester: pytest.Pytester) -> None:
    repo = _repo(pytester, "make_dict")
    pytester.makepyfile(test_uses="def test_it(mesh_adapter):\n    pass\n")
    result = pytester.runpytest("test_uses.py")
    result.assert_outcomes(errors=1)  # the fixture's setup fails
    line = (f"{repo / 'pyproject.toml'}: [tool.harness] adapter: factory 'badmesh:make_dict' "
            f"returned a dict, not a mesh adapter")
    assert result.stdout.lines.count(line) == 1, result.stdout.str()
    assert "create_hub" not in result.stdout.str()


def test_control_a_factory_returning_an_adapter_gets_past_the_settings(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fresh_module: None,
) -> None:
    repo = _repo(pytester, "make_good")
    monkeypatch.chdir(repo)
    code, err = _cli(COMMANDS["adapter-check"], capsys)
    assert code == 0, err


def test_control_a_factory_that_raises_is_the_adapters_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fresh_module: None,
) -> None:
    repo = _repo(pytester, "make_raising")
    monkeypatch.chdir(repo)
    assert main(COMMANDS["adapter-check"]) == 1
    out = capsys.readouterr().out
    assert "the adapter raised RuntimeError: the mesh failed to start" in out
