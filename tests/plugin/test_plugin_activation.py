"""When harness items are collected, and what the plugin offers in every run.

The plugin auto-loads wherever mesh-harness is installed, so a run that does not ask for
the harness must see only its own tests (and may still use the fixtures); `--harness`,
an explicit `-p harness`, `addopts = "-p harness"` and the ini key `harness = true` each
turn the items on; `-p no:harness` turns the plugin off altogether.
"""

from __future__ import annotations

import pytest

TABLE = '[tool.harness]\npaths = ["src"]\ninvariants = ["INV1"]\n'
USER_ITEMS = ["tests/test_user.py::test_posted", "tests/test_user.py::test_seeded"]
HARNESS_ITEMS = [
    "src/mesh.py::harness-scan",
    "harness::scan",
    "harness::adapter-check[reference_impl.adapter:make_adapter]",
    "harness::INV1[reference_impl.adapter:make_adapter]",
]
USER_TEST = """\
import pytest
from invariants.adapter import MessageSpec
from invariants.trace import EventKind


def test_posted(mesh_adapter):
    mesh_adapter.create_hub("h0")
    delivery = mesh_adapter.post("client", "h0", MessageSpec("Request"))
    assert any(e.delivery_id == delivery for e in mesh_adapter.trace())


@pytest.mark.harness_seed(7)
def test_seeded(mesh_adapter):
    mesh_adapter.create_hub("h0")
    assert mesh_adapter.now_ms() == 0
"""


def _repo(pytester: pytest.Pytester, table: str = TABLE, ini: str = "") -> None:
    text = table + (f"\n[tool.pytest.ini_options]\n{ini}\n" if ini else "")
    pytester.makepyprojecttoml(text)
    pytester.makepyfile(**{"src/mesh": "VALUE = 1\n", "tests/test_user": USER_TEST})


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line and " " not in line]


def test_an_auto_loaded_plugin_collects_nothing_but_offers_its_fixture(
    pytester: pytest.Pytester,
) -> None:
    _repo(pytester)
    listed = pytester.runpytest("--collect-only", "-q")
    assert _collected(listed) == USER_ITEMS
    ran = pytester.runpytest()
    ran.assert_outcomes(passed=2)
    assert "= mesh-harness =" not in ran.stdout.str()  # no summary section either


@pytest.mark.parametrize(
    ("args", "ini"),
    [
        (["--harness"], ""),
        (["-p", "harness"], ""),
        ([], 'addopts = "-p harness"'),
        ([], "harness = true"),
    ],
    ids=["--harness", "-p harness", "addopts", "ini harness = true"],
)
def test_each_way_of_asking_collects_the_items(
    pytester: pytest.Pytester, args: list[str], ini: str
) -> None:
    _repo(pytester, ini=ini)
    listed = pytester.runpytest("--collect-only", "-q", *args)
    assert sorted(_collected(listed)) == sorted(
        ["tests/test_user.py::test_posted", "tests/test_user.py::test_seeded", *HARNESS_ITEMS]
    )
    listed.stdout.fnmatch_lines(["6 tests collected*"])


def test_no_harness_turns_the_plugin_off(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    result = pytester.runpytest("-p", "no:harness", "--collect-only", "-q")
    assert _collected(result) == USER_ITEMS
    off = pytester.runpytest("-p", "no:harness")
    off.assert_outcomes(errors=2)  # its fixture is gone too
    off.stdout.fnmatch_lines(["*fixture 'mesh_adapter' not found*"])
    refused = pytester.runpytest("-p", "no:harness", "--harness")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR


def test_markers_select_and_deselect_harness_items(pytester: pytest.Pytester) -> None:
    _repo(pytester)
    only_scan = pytester.runpytest("--harness", "--collect-only", "-q", "-m", "harness_scan")
    assert _collected(only_scan) == HARNESS_ITEMS[:2]
    without = pytester.runpytest("--harness", "--collect-only", "-q", "-m", "not harness")
    assert _collected(without) == USER_ITEMS
    by_name = pytester.runpytest("--harness", "--collect-only", "-q", "-k", "INV1")
    assert _collected(by_name) == HARNESS_ITEMS[3:]


def test_a_full_run_is_clean_under_strict_markers_and_warnings_as_errors(
    pytester: pytest.Pytester,
) -> None:
    _repo(pytester)
    result = pytester.runpytest("--harness", "--strict-markers", "-W", "error", "-p", "timeout",
                                "--timeout", "300")
    result.assert_outcomes(passed=6)
    assert "warnings summary" not in result.stdout.str()


def test_the_fixture_runs_a_test_on_every_configured_adapter(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(other_adapter=(
        "from reference_impl.adapter import ReferenceAdapter\n"
        "def make(chooser):\n"
        "    return ReferenceAdapter(chooser, default_watermark=25)\n"
    ))
    table = ('[tool.harness]\npaths = ["src"]\ninvariants = []\nadapter = '
             '["reference_impl.adapter:make_adapter", "other_adapter:make"]\n')
    _repo(pytester, table=table, ini='pythonpath = ["."]')
    result = pytester.runpytest("-v", "tests")
    result.stdout.fnmatch_lines([
        "*test_posted?reference_impl.adapter:make_adapter? PASSED*",
        "*test_posted?other_adapter:make? PASSED*",
    ])
    result.assert_outcomes(passed=4)


def test_p_harness_works_without_the_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Plugin autoload off: only `-p harness` itself can bring the plugin in.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    _repo(pytester)
    listed = pytester.runpytest("-p", "harness", "--collect-only", "-q")
    assert sorted(_collected(listed)) == sorted([*USER_ITEMS, *HARNESS_ITEMS])
    without = pytester.runpytest("--collect-only", "-q")
    assert _collected(without) == USER_ITEMS


CHOOSER_TEST = """\
import pytest
from invariants.adapter import FirstChooser, SeededChooser


def test_fifo_by_default(mesh_adapter):
    assert isinstance(mesh_adapter.chooser, FirstChooser)


@pytest.mark.harness_seed(7)
def test_seeded_by_the_marker(mesh_adapter):
    assert isinstance(mesh_adapter.chooser, SeededChooser)
    again = SeededChooser(7)
    assert [mesh_adapter.chooser.choose(10, "t") for _ in range(8)] == [
        again.choose(10, "t") for _ in range(8)
    ]
"""


def test_the_fixture_hands_each_test_a_fresh_mesh_with_its_chooser(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(chooser_adapter=(
        "class Recorder:\n"
        "    def __init__(self, chooser):\n"
        "        self.chooser = chooser\n"
        "def make(chooser):\n"
        "    return Recorder(chooser)\n"
    ))
    table = '[tool.harness]\nadapter = "chooser_adapter:make"\n'
    pytester.makepyprojecttoml(table + '\n[tool.pytest.ini_options]\npythonpath = ["."]\n')
    pytester.makepyfile(test_choosers=CHOOSER_TEST)
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=2)
