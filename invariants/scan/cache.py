"""Per-file result cache keyed by a hash of everything the result depends on.

Key = sha256(cache format, rule-set fingerprint, configuration, path, test-ness, file bytes).
The rule-set fingerprint hashes the harness's own source files, so editing a rule invalidates
every entry without anyone bumping a version by hand. Entries are JSON (never pickle: a cache
directory must not be able to run code), written atomically; an entry that does not decode
into exactly the expected shape is ignored and rewritten, so the cache can never change a
result, only skip work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import platform
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from invariants.scan.model import (
    CallSite,
    Definition,
    EmitSite,
    FileReport,
    Finding,
    ScanConfig,
)
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import Problem
from invariants.scan.suppress import Suppression

# Bumped whenever the cached per-file facts or the key change shape (3: call targets,
# definitions; 4: rule options keyed in the configuration's `options`; 5: the report's
# "not analysed" problems).
CACHE_FORMAT = "mesh-harness-scan-cache/5"
DEFAULT_DIR = ".harness-cache"
USER_CACHE_NAME = "mesh-harness"

T = TypeVar("T")


@cache
def ruleset_fingerprint() -> str:
    """A hash of the parser's version and the whole `invariants` package's source: wider than
    the scanner itself, so a rule that imports a helper from elsewhere is covered too."""
    digest = hashlib.sha256()
    package = Path(__file__).parent.parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    with contextlib.suppress(PackageNotFoundError):  # libcst is a hard dependency
        digest.update(version("libcst").encode())
    # The call graph drops calls of the running interpreter's builtins, which vary by version.
    digest.update(platform.python_version().encode())
    return digest.hexdigest()


@cache  # one configuration per scan: hash it once, not once per file
def config_fingerprint(config: ScanConfig) -> str:
    # The dataclass repr lists every field in declaration order: stable and complete.
    return hashlib.sha256(repr(config).encode()).hexdigest()


def entry_key(path: str, is_test: bool, source: bytes, config: ScanConfig) -> str:
    digest = hashlib.sha256()
    for part in (CACHE_FORMAT, ruleset_fingerprint(), config_fingerprint(config), path):
        digest.update(part.encode())
        digest.update(b"\x00")
    digest.update(b"T" if is_test else b"P")
    digest.update(source)
    return digest.hexdigest()


# --- JSON round trip -----------------------------------------------------------------------
# Each record is stored as a row (a list of its field values in declaration order): compact,
# and quick to decode, which is most of the cost of a warm scan. Every value is type-checked.


class _Malformed(ValueError):
    pass


# The JSON types each field annotation admits (bool is not int here: `type(True) is bool`).
_ADMITTED: Mapping[str, tuple[type, ...]] = MappingProxyType(
    {
        "str": (str,),
        "int": (int,),
        "bool": (bool,),
        "int | None": (int, type(None)),
        "str | None": (str, type(None)),
        "tuple[str, ...]": (list,),
    }
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Layout:
    names: tuple[str, ...]  # field names, in declaration order
    signatures: frozenset[tuple[type, ...]]  # every admitted tuple of value types
    tuples: tuple[int, ...]  # positions of tuple[str, ...] fields (lists of strings in JSON)


@cache
def _layout(cls: Any) -> _Layout:
    fields = dataclasses.fields(cls)
    annotations = [str(f.type) for f in fields]
    return _Layout(
        names=tuple(f.name for f in fields),
        signatures=frozenset(itertools.product(*(_ADMITTED[a] for a in annotations))),
        tuples=tuple(i for i, a in enumerate(annotations) if a == "tuple[str, ...]"),
    )


def _rows(items: Sequence[Any]) -> list[list[object]]:
    if not items:
        return []
    names = _layout(items[0].__class__).names
    return [[getattr(item, name) for name in names] for item in items]


def _from_rows(cls: Callable[..., T], data: object) -> list[T]:
    layout = _layout(cls)
    if type(data) is not list:
        raise _Malformed("expected a list of rows")
    records: list[T] = []
    for row in data:
        # One C-level pass types the whole row: this is most of a warm scan's decoding.
        if type(row) is not list or tuple(map(type, row)) not in layout.signatures:
            raise _Malformed(f"a malformed {getattr(cls, '__name__', cls)} row: {row!r}")
        if layout.tuples:
            row = list(row)
            for index in layout.tuples:
                if not all(type(item) is str for item in row[index]):
                    raise _Malformed(f"expected a list of strings: {row[index]!r}")
                row[index] = tuple(row[index])
        records.append(cls(*row))
    return records


def outcome_to_json(outcome: FileOutcome) -> dict[str, Any]:
    report = outcome.report
    return {
        "path": report.path,
        "parsed": report.parsed,
        "findings": _rows(report.findings),
        "emit_sites": _rows(report.emit_sites),
        "calls": _rows(report.calls),
        "definitions": _rows(report.definitions),
        "report_problems": _rows(report.problems),
        "suppressions": _rows(outcome.suppressions),
        "problems": _rows(outcome.problems),
    }


def outcome_from_json(data: object) -> FileOutcome:
    """The outcome `outcome_to_json` wrote; raises ValueError on any deviation."""
    if not isinstance(data, Mapping) or set(data) != _OUTCOME_KEYS:
        raise _Malformed("not an outcome record")
    if not isinstance(data["path"], str) or not isinstance(data["parsed"], bool):
        raise _Malformed("report path/parsed")
    report = FileReport(
        path=data["path"],
        findings=_from_rows(Finding, data["findings"]),
        emit_sites=_from_rows(EmitSite, data["emit_sites"]),
        calls=_from_rows(CallSite, data["calls"]),
        parsed=data["parsed"],
        definitions=_from_rows(Definition, data["definitions"]),
        problems=_from_rows(Problem, data["report_problems"]),
    )
    return FileOutcome(
        report=report,
        suppressions=_from_rows(Suppression, data["suppressions"]),
        problems=_from_rows(Problem, data["problems"]),
    )


_OUTCOME_KEYS = frozenset(
    {"path", "parsed", "findings", "emit_sites", "calls", "definitions", "report_problems",
     "suppressions", "problems"}
)


# --- storage -------------------------------------------------------------------------------


def user_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where a scan that names no project keeps its cache: the user's cache directory
    (`$XDG_CACHE_HOME`, else `~/.cache`; `%LOCALAPPDATA%` on Windows, `~/Library/Caches`
    on macOS), `mesh-harness/scan` in it. None when there is no home to put it in."""
    env = os.environ if environ is None else environ
    try:
        if sys.platform == "win32" and env.get("LOCALAPPDATA"):
            base = Path(env["LOCALAPPDATA"])
        elif sys.platform == "darwin":
            base = Path.home() / "Library" / "Caches"
        elif env.get("XDG_CACHE_HOME", "").startswith("/"):  # relative: ignored, as XDG says
            base = Path(env["XDG_CACHE_HOME"])
        else:
            base = Path.home() / ".cache"
    except RuntimeError:  # no home directory can be determined
        return None
    return base / USER_CACHE_NAME / "scan"


def _read_regular(path: Path) -> bytes:
    """The bytes of `path` if it is a regular file; else an OSError. Opened without
    blocking and checked on the open file, so a FIFO (or a device) put where an entry
    belongs is skipped instead of hanging the scan on its read."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path}: not a regular file")
        return handle.read()


class ResultCache:
    """A directory of JSON entries, one per key, shared safely by concurrent processes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _entry(self, key: str) -> Path:
        return self.directory / "v1" / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileOutcome | None:
        try:
            data = json.loads(_read_regular(self._entry(key)))
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            outcome = outcome_from_json(data.get("outcome"))
        except (OSError, ValueError, TypeError, RecursionError):
            return None  # missing or corrupt: recompute, and `put` replaces it
        outcome.cached = True
        return outcome

    def put(self, key: str, outcome: FileOutcome) -> None:
        """Store an entry; a cache that cannot be written only costs speed."""
        target = self._entry(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by mesh-harness scan\n*\n", encoding="utf-8")
            body = json.dumps({"key": key, "outcome": outcome_to_json(outcome)})
            handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(body)
            os.replace(temporary, target)  # atomic: readers see the old entry or the new one
        except OSError:
            return
