"""Bad input never crashes a scan: each kind becomes a MESH000 finding (or, too large to
analyse, a scan error) and the rest is scanned.

These run the real engine: parsing is its job, reading and walking are the runner's.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from invariants.scan.model import ScanConfig
from invariants.scan.runner import scan

BAD = {
    "invalid_utf8.py": b"name = '\xff\xfe'\n",
    "nul_bytes.py": b"x = 1\n\x00\ny = 2\n",
    "python2.py": b"print 'hello'\n",
    "binary.py": bytes(range(256)) * 3,  # under the 1000-byte limit used below
}


def make_tree(root: Path) -> None:
    (root / "pkg").mkdir()
    for name, content in BAD.items():
        (root / "pkg" / name).write_bytes(content)
    (root / "pkg" / "huge.py").write_bytes(b"x = 1\n" * 400)
    (root / "pkg" / "loop.py").symlink_to("loop.py")  # a file symlink to itself
    (root / "pkg" / "sub").mkdir()
    (root / "pkg" / "sub" / "up").symlink_to("..", target_is_directory=True)  # directory loop
    (root / "pkg" / "good.py").write_text("def f() -> int:\n    return 1\n")
    (root / "pkg" / "sub" / "also_good.py").write_text("VALUE = (1, 2)\n")


def test_every_bad_input_kind_is_reported_and_the_rest_scanned(tmp_path: Path) -> None:
    make_tree(tmp_path)
    config = dataclasses.replace(ScanConfig(), max_file_bytes=1000)
    result = scan(["pkg"], config, root=tmp_path, jobs=1, cache_dir=None)

    parse_errors = {f.path: f.message for f in result.findings if f.rule == "MESH000"}
    expected_bad = {f"pkg/{name}" for name in BAD} | {"pkg/loop.py"}
    assert set(parse_errors) == expected_bad
    # too large to analyse is no parse error: a scan error says it was not analysed
    skipped = [e for e in result.errors if e.path == "pkg/huge.py"]
    assert [e.kind for e in skipped] == ["not-analysed"] and "max_file_bytes" in skipped[0].message
    expected_bad |= {"pkg/huge.py"}
    assert "NUL byte" in parse_errors["pkg/nul_bytes.py"]
    assert "symbolic links" in parse_errors["pkg/loop.py"]
    # The good files were parsed; the directory loop was not followed (no pkg/sub/up/... paths).
    assert result.scanned_paths == sorted(
        [*expected_bad, "pkg/good.py", "pkg/sub/also_good.py"]
    )
    assert result.stats.parsed == 2
    assert all(not path.startswith("pkg/sub/up") for path in result.scanned_paths)


def test_huge_file_within_limit_is_parsed(tmp_path: Path) -> None:
    # Negative control for the size limit: the same file under the default limit parses.
    make_tree(tmp_path)
    result = scan(["pkg/huge.py"], ScanConfig(), root=tmp_path, jobs=1, cache_dir=None)
    assert result.findings == []
    assert result.stats.parsed == 1


def test_bad_inputs_with_two_jobs_and_cache(tmp_path: Path) -> None:
    make_tree(tmp_path)
    config = dataclasses.replace(ScanConfig(), max_file_bytes=1000)
    cache = tmp_path / "cache"
    one = scan(["pkg"], config, root=tmp_path, jobs=1, cache_dir=cache)
    two = scan(["pkg"], config, root=tmp_path, jobs=2, cache_dir=cache)
    assert one.findings == two.findings
    assert two.stats.cached > 0


def test_a_module_that_writes_on_import_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed.txt"
    (tmp_path / "pkg").mkdir()
    body = (
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "if __name__ == '__main__':\n"
        f"    Path({str(marker)!r}).write_text('ran as main')\n"
    )
    (tmp_path / "pkg" / "side_effect.py").write_text(body)
    (tmp_path / "pkg" / "conftest.py").write_text(body)
    result = scan(["pkg"], ScanConfig(), root=tmp_path, jobs=2, cache_dir=tmp_path / "c")
    assert result.stats.parsed == 2
    assert not marker.exists()
    # Control: the module really does write the marker when executed.
    exec(compile(body, "side_effect.py", "exec"), {"__name__": "side_effect"})
    assert marker.read_text() == "ran"


def test_missing_path_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = scan(["ok.py", "missing_dir"], ScanConfig(), root=tmp_path, cache_dir=None)
    assert [(f.rule, f.path) for f in result.findings] == [("MESH000", "missing_dir")]
    assert result.stats.parsed == 1


@pytest.mark.timeout(60)
def test_a_fifo_is_reported_not_read(tmp_path: Path) -> None:
    # Opening a FIFO for reading blocks until a writer comes: it must never be opened.
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "ok.py").write_text("x = 1\n")
    result = scan(["."], ScanConfig(), root=tmp_path, cache_dir=None)
    assert [(f.rule, f.path, f.message) for f in result.findings] == [
        ("MESH000", "pipe.py", "cannot read: not a regular file")
    ]
    assert result.stats.parsed == 1


def test_pathological_nesting_costs_only_its_file(tmp_path: Path) -> None:
    # libcst's native parser overflows its stack (a segfault, not an exception) on input
    # nested this deep. Whether the engine screens a shape first or the crash happens inside
    # a worker process, the file is a MESH000 finding and the scan goes on.
    depth = 20_000
    (tmp_path / "deep_brackets.py").write_text("x = " + "(" * depth + "1" + ")" * depth + "\n")
    (tmp_path / "deep_not.py").write_text("x = (" + "not " * depth + "y)\n")
    (tmp_path / "fine.py").write_text("y = 2\n")
    result = scan(["."], ScanConfig(), root=tmp_path, jobs=1, cache_dir=None)
    assert [(f.rule, f.path) for f in result.findings] == [
        ("MESH000", "deep_brackets.py"), ("MESH000", "deep_not.py"),
    ]
    assert result.stats.parsed == 1
