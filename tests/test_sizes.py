"""benchmarks/sizes_report.py, the guide to the library's longest functions and classes: it
counts a piece's lines right and lists real pieces of the library. It sets no limit: a
piece is split by what it does, not to meet a number."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
_PATH = ROOT / "benchmarks" / "sizes_report.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sizes_report_benchmark", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


sizes = _load()

SOURCE = '''\
def short() -> None:
    pass


class Outer:
    """Two lines
    of docstring."""

    def method(self) -> None:
        x = 1
        y = 2

    class Inner:
        pass
'''


def test_a_piece_spans_its_def_line_to_its_last_line_nested_ones_named_by_their_owner() -> None:
    found = {(p.kind, p.name): (p.line, p.lines) for p in sizes.pieces(SOURCE, "x.py")}
    assert found == {
        ("function", "short"): (1, 2),
        ("class", "Outer"): (5, 10),
        ("function", "Outer.method"): (9, 3),
        ("class", "Outer.Inner"): (13, 2),
    }


def test_longest_ranks_by_length_within_a_kind() -> None:
    found = sizes.pieces(SOURCE, "x.py")
    assert [p.name for p in sizes.longest(found, "function", 5)] == ["Outer.method", "short"]
    assert [p.name for p in sizes.longest(found, "class", 1)] == ["Outer"]


def _opens(where: str, name: str) -> bool:
    """`path:line` is the `def` or `class` line of `name` (its last dotted part)."""
    path, line = where.split(":")
    opening = (ROOT / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
    words = opening.replace("(", " ").replace(":", " ").split()
    return words[:1] in (["def"], ["class"], ["async"]) and name.rsplit(".", 1)[-1] in words


def test_the_report_on_the_library_lists_real_pieces(capsys: pytest.CaptureFixture[str]) -> None:
    assert sizes.main(["--top", "3"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line[:5].strip().isdigit()]
    assert len(rows) == 6  # three functions, three classes
    for lines, where, name in rows:
        assert _opens(where, name), (where, name)
        assert int(lines) > 1


def test_control_a_row_that_names_the_wrong_line_or_piece_is_told_apart() -> None:
    [piece] = [p for p in sizes.library_pieces(ROOT, ["benchmarks"]) if p.name == "main"
               and p.path.endswith("sizes_report.py")]
    assert _opens(f"{piece.path}:{piece.line}", "main")
    assert not _opens(f"{piece.path}:{piece.line + 1}", "main")
    assert not _opens(f"{piece.path}:{piece.line}", "report")


def test_a_package_that_is_not_a_directory_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exited:
        sizes.main(["no_such_package"])
    assert exited.value.code == 2
