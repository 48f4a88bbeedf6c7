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
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from invariants.scan.model import CallSite, EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.outcome import FileOutcome
from invariants.scan.problems import Problem
from invariants.scan.suppress import Suppression

CACHE_FORMAT = "mesh-harness-scan-cache/1"
DEFAULT_DIR = ".harness-cache"

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
    return digest.hexdigest()


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


class _Malformed(ValueError):
    pass


def _check(annotation: str, value: object) -> object:
    """`value` if it has the type `annotation` names (the few the scanner's data uses)."""
    if annotation == "str" and isinstance(value, str):
        return value
    if annotation == "bool" and isinstance(value, bool):
        return value
    if annotation == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if annotation == "int | None" and (value is None or _check("int", value) is value):
        return value
    if annotation == "str | None" and (value is None or isinstance(value, str)):
        return value
    if annotation == "tuple[str, ...]" and isinstance(value, list) and all(
        isinstance(item, str) for item in value
    ):
        return tuple(value)
    raise _Malformed(f"{annotation}: {value!r}")


def _decode(cls: Callable[..., T], data: object) -> T:
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not isinstance(data, dict) or set(data) != {f.name for f in fields}:
        raise _Malformed(f"{getattr(cls, '__name__', cls)}: wrong keys")
    return cls(**{f.name: _check(str(f.type), data[f.name]) for f in fields})


def _decode_list(cls: Callable[..., T], data: object) -> list[T]:
    if not isinstance(data, list):
        raise _Malformed("expected a list")
    return [_decode(cls, item) for item in data]


def outcome_to_json(outcome: FileOutcome) -> dict[str, Any]:
    report = outcome.report
    return {
        "report": {
            "path": report.path,
            "parsed": report.parsed,
            "findings": [dataclasses.asdict(item) for item in report.findings],
            "emit_sites": [dataclasses.asdict(item) for item in report.emit_sites],
            "calls": [dataclasses.asdict(item) for item in report.calls],
        },
        "suppressions": [dataclasses.asdict(item) for item in outcome.suppressions],
        "problems": [dataclasses.asdict(item) for item in outcome.problems],
    }


def outcome_from_json(data: object) -> FileOutcome:
    """The outcome `outcome_to_json` wrote; raises ValueError on any deviation."""
    if not isinstance(data, Mapping) or not isinstance(data.get("report"), Mapping):
        raise _Malformed("no report")
    raw = data["report"]
    if not isinstance(raw.get("path"), str) or not isinstance(raw.get("parsed"), bool):
        raise _Malformed("report path/parsed")
    report = FileReport(
        path=raw["path"],
        findings=_decode_list(Finding, raw.get("findings")),
        emit_sites=_decode_list(EmitSite, raw.get("emit_sites")),
        calls=_decode_list(CallSite, raw.get("calls")),
        parsed=raw["parsed"],
    )
    return FileOutcome(
        report=report,
        suppressions=_decode_list(Suppression, data.get("suppressions")),
        problems=_decode_list(Problem, data.get("problems")),
    )


# --- storage -------------------------------------------------------------------------------


class ResultCache:
    """A directory of JSON entries, one per key, shared safely by concurrent processes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _entry(self, key: str) -> Path:
        return self.directory / "v1" / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileOutcome | None:
        try:
            data = json.loads(self._entry(key).read_bytes())
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
