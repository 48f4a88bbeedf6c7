"""The repository holds source, not binaries: no tracked file over `MAX_BYTES` but the test
data that needs the size, and `.gitignore` keeps built artefacts out."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 200 * 1024
# Tracked files allowed over MAX_BYTES: test data that is only useful whole.
ALLOWED: frozenset[str] = frozenset({
    "tests/scan/data/sarif-schema-2.1.0.json",  # the SARIF schema the output is validated by
})
IGNORED_ARTEFACTS = ("x.whl", "x.tar.gz", "x.zip", "x.so", "x.egg", "x.tgz", "x.pyd", "x.dylib")


def oversized(sizes: Mapping[str, int], allowed: Iterable[str] = ALLOWED) -> list[str]:
    """The paths over MAX_BYTES not in `allowed`, sorted."""
    exempt = frozenset(allowed)
    return sorted(path for path, size in sizes.items() if size > MAX_BYTES and path not in exempt)


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def tracked_sizes() -> dict[str, int]:
    sizes: dict[str, int] = {}
    for path in _git("ls-files", "-z").split("\0"):
        file = ROOT / path
        if path and file.is_file():  # a file deleted in the work tree is not a size
            sizes[path] = file.stat().st_size
    return sizes


@pytest.fixture(scope="module")
def sizes() -> dict[str, int]:
    try:
        return tracked_sizes()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git work tree")


def test_no_tracked_file_is_over_the_limit(sizes: dict[str, int]) -> None:
    assert len(sizes) > 10  # the listing worked
    assert oversized(sizes) == []


def test_the_check_catches_a_large_file() -> None:
    big = {"dist/mesh_harness-1.0-py3-none-any.whl": MAX_BYTES + 1, "small.py": 10}
    assert oversized(big) == ["dist/mesh_harness-1.0-py3-none-any.whl"]
    assert oversized({"tests/scan/data/sarif-schema-2.1.0.json": MAX_BYTES * 2}) == []
    assert oversized({"tests/scan/data/other.json": MAX_BYTES + 1}) == [
        "tests/scan/data/other.json"
    ]
    assert oversized({"edge.bin": MAX_BYTES}) == []


def test_the_allow_list_names_tracked_files(sizes: dict[str, int]) -> None:
    """An entry for a file gone from the tree would exempt whatever later takes its name."""
    assert sorted(ALLOWED - set(sizes)) == []


def test_gitignore_keeps_built_artefacts_out() -> None:
    try:
        out = subprocess.run(
            ["git", "check-ignore", "--no-index", *IGNORED_ARTEFACTS],
            cwd=ROOT, capture_output=True, text=True,
        )
    except OSError:
        pytest.skip("git is not installed")
    if out.returncode > 1:
        pytest.skip("not a git work tree")
    assert sorted(out.stdout.split()) == sorted(IGNORED_ARTEFACTS)
