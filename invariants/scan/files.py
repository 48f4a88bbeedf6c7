"""Find the Python files to scan and read them safely.

Directory symlinks inside a scanned tree are never followed, so a symlink loop cannot make the
walk run forever; a symlinked *file* is read through its link, and a broken or looping one is
reported as MESH000. Reading never raises: unreadable, non-regular (FIFO, device), oversized
and binary files become MESH000 findings. Paths are reported relative to the scan root, in
posix form.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from invariants.scan.model import Finding, ScanConfig
from invariants.scan.problems import NOT_ANALYSED, Problem


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file chosen for scanning."""

    path: str  # posix, relative to the scan root (the reported path)
    location: str  # where to read it from (absolute)
    is_test: bool


@dataclass(slots=True)
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    # Named paths that do not exist and directories that cannot be listed: reported as
    # MESH000, so a typo or a permission problem is not a silent no-op.
    problems: list[Finding] = field(default_factory=list)


def relative_posix(location: Path, root: Path) -> str:
    """`location` relative to `root` in posix form (with `..` when it lies outside)."""
    return PurePosixPath(Path(os.path.relpath(location, root))).as_posix()


def is_excluded(rel: str, patterns: Iterable[str], *, directory: bool = False) -> bool:
    # A directory is tested as "dir/" so that "build/*" prunes build/ itself.
    probe = rel + "/" if directory else rel
    return any(fnmatchcase(probe, pattern) for pattern in patterns)


def is_test_file(rel: str, globs: Iterable[str]) -> bool:
    """A glob without "/" matches the file name; one with "/" matches the relative path."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatchcase(rel if "/" in glob else name, glob) for glob in globs)


def _parse_error(rel: str, message: str) -> Finding:
    return Finding("MESH000", rel, 1, 1, 1, message, "", "")


def discover(paths: Sequence[str], config: ScanConfig, root: Path) -> Discovery:
    """Every .py file under `paths` (relative to `root`) not excluded, each once, sorted."""
    found: dict[str, SourceFile] = {}
    result = Discovery()
    root = root.absolute()

    def add(location: Path) -> None:
        rel = relative_posix(location, root)
        if rel not in found and not is_excluded(rel, config.exclude):
            found[rel] = SourceFile(rel, str(location), is_test_file(rel, config.test_globs))

    for named in paths:
        start = Path(named) if Path(named).is_absolute() else root / named
        start = Path(os.path.normpath(start))
        if start.is_dir():  # an explicitly named directory is entered even through a link
            _walk(start, root, config, add, result.problems)
        elif start.suffix == ".py" and (start.exists() or start.is_symlink()):
            add(start)  # read through a link; a looping link becomes MESH000 when read
        elif start.is_file():
            continue  # a named non-Python file: nothing to scan
        else:
            rel = relative_posix(start, root)
            result.problems.append(_parse_error(rel, "cannot read: no such file or directory"))
    result.files = [found[key] for key in sorted(found)]
    return result


def _walk(
    start: Path,
    root: Path,
    config: ScanConfig,
    add: Callable[[Path], None],
    problems: list[Finding],
) -> None:
    def unreadable(error: OSError) -> None:
        where = relative_posix(Path(error.filename or start), root)
        problems.append(_parse_error(where, f"cannot read directory: {error.strerror or error}"))

    # os.walk with followlinks=False lists a directory symlink but never descends into it.
    for directory, dirnames, filenames in os.walk(start, onerror=unreadable, followlinks=False):
        here = Path(directory)
        kept = []
        for name in sorted(dirnames):
            rel = relative_posix(here / name, root)
            linked = (here / name).is_symlink()
            if not linked and not is_excluded(rel, config.exclude, directory=True):
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.endswith(".py"):
                add(here / name)


@dataclass(frozen=True, slots=True)
class ReadResult:
    source: bytes | None  # None when the file could not be used
    problem: Finding | None = None
    # A file CPython may well accept, not read because of the scan's own limit.
    skipped: Problem | None = None


def read_source(file: SourceFile, config: ScanConfig) -> ReadResult:
    """The file's bytes, or a MESH000 finding saying why it cannot be scanned. Never raises."""
    try:
        # A FIFO or device named *.py would block or never end: read regular files only.
        if not stat.S_ISREG(os.stat(file.location).st_mode):
            return ReadResult(None, _parse_error(file.path, "cannot read: not a regular file"))
        with open(file.location, "rb") as handle:
            # Read one byte past the limit: enough to know the file is too large.
            data = handle.read(config.max_file_bytes + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return ReadResult(None, _parse_error(file.path, f"cannot read: {reason}"))
    if len(data) > config.max_file_bytes:  # libcst's tree costs ~300 bytes per source byte
        message = f"not analysed: file larger than max_file_bytes ({config.max_file_bytes})"
        return ReadResult(None, skipped=Problem(file.path, 0, NOT_ANALYSED, message))
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return ReadResult(
            None,
            Finding(
                "MESH000", file.path, line, 1, line,
                f"binary content: NUL byte at offset {nul}: not parsed", "", "",
            ),
        )
    return ReadResult(data)
