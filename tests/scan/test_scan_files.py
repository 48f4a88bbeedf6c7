"""File discovery: excludes, test globs, relative posix paths, no symlink-loop walking."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from invariants.scan.files import _walk, discover, is_excluded, is_test_file, read_source
from invariants.scan.model import Finding, ScanConfig


def touch(path: Path, text: str = "x = 1\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_walk_honours_excludes_and_marks_tests(tmp_path: Path) -> None:
    for rel in (
        "src/app.py", "src/notes.txt", "src/test_app.py", "src/app_test.py", "tests/conftest.py",
        "build/gen.py", ".venv/lib/site.py", "src/__pycache__/app.py", "src/deep/x/y.py",
    ):
        touch(tmp_path / rel)
    found = discover(["."], ScanConfig(), tmp_path)
    assert [(f.path, f.is_test) for f in found.files] == [
        ("src/app.py", False),
        ("src/app_test.py", True),
        ("src/deep/x/y.py", False),
        ("src/test_app.py", True),
        ("tests/conftest.py", True),
    ]
    assert found.problems == []


def test_custom_globs(tmp_path: Path) -> None:
    for rel in ("src/a.py", "src/gen/b.py", "checks/c.py"):
        touch(tmp_path / rel)
    config = dataclasses.replace(
        ScanConfig(), exclude=("src/gen/*",), test_globs=("checks/*",)
    )
    found = discover(["."], config, tmp_path)
    assert [(f.path, f.is_test) for f in found.files] == [
        ("checks/c.py", True), ("src/a.py", False),
    ]


def test_glob_helpers() -> None:
    assert is_excluded("build", ["build/*"], directory=True)
    assert not is_excluded("builder", ["build/*"], directory=True)
    assert is_test_file("a/b/test_x.py", ["test_*.py"])
    assert not is_test_file("a/test_dir/x.py", ["test_*.py"])  # the name, not a parent


def test_named_paths_overlap_once_and_outside_root(tmp_path: Path) -> None:
    touch(tmp_path / "repo" / "a.py")
    touch(tmp_path / "other" / "b.py")
    root = tmp_path / "repo"
    found = discover([".", "a.py", str(tmp_path / "other")], ScanConfig(), root)
    assert [f.path for f in found.files] == ["../other/b.py", "a.py"]


def test_directory_symlinks_inside_the_tree_are_not_followed(tmp_path: Path) -> None:
    touch(tmp_path / "pkg" / "a.py")
    (tmp_path / "pkg" / "again").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "self").symlink_to("self")
    found = discover(["."], ScanConfig(), tmp_path)
    assert [f.path for f in found.files] == ["pkg/a.py"]
    # Explicitly naming the linked directory does enter it (once).
    named = discover(["pkg/again"], ScanConfig(), tmp_path)
    assert [f.path for f in named.files] == ["pkg/again/a.py"]


def test_a_directory_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    # (Permissions cannot stop root, so list a directory that vanished before the walk.)
    problems: list[Finding] = []
    added: list[Path] = []
    _walk(tmp_path / "gone", tmp_path, ScanConfig(), added.append, problems)
    assert added == []
    assert [(p.rule, p.path) for p in problems] == [("MESH000", "gone")]
    assert problems[0].message.startswith("cannot read directory:")


def test_a_named_fifo_is_scanned_and_reported_as_not_regular(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    found = discover(["pipe.py"], ScanConfig(), tmp_path)
    assert [f.path for f in found.files] == ["pipe.py"] and found.problems == []
    read = read_source(found.files[0], ScanConfig())
    assert read.source is None and read.problem is not None
    assert read.problem.message == "cannot read: not a regular file"
