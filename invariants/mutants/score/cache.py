"""Verdicts kept on disk by (mutant, source hash, harness version), so a rerun after a fix
runs only the mutants whose file or harness changed.

The source hash is of the mutated file alone: fixing one module reruns that module's
mutants and keeps the rest (`--no-cache` reruns everything). The harness version is the
package version plus a digest of the harness's own modules, so a changed checker, rule or
driver reruns every mutant. The profile, the checks and their figures are in the key too.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from invariants.mutants.score.engine import EngineMutant
from invariants.mutants.score.evaluate import Verdict

_HARNESS_PACKAGE = Path(__file__).resolve().parents[2]  # the `invariants` package


@lru_cache(maxsize=1)
def harness_version() -> str:
    try:
        version = metadata.version("mesh-harness")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    digest = hashlib.sha256()
    for path in sorted(_HARNESS_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_HARNESS_PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return f"{version}+{digest.hexdigest()[:12]}"


def key(mutant: EngineMutant, source: str, context: str) -> str:
    """`context`: the profile, checks and figures of the run, as one string."""
    parts = (repr(mutant.key), mutant.operator, str(mutant.occurrence),
             hashlib.sha256(source.encode()).hexdigest(), harness_version(), context)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class VerdictCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, entry: str) -> Path:
        return self.directory / entry[:2] / f"{entry}.json"

    def get(self, entry: str) -> Verdict | None:
        try:
            data = json.loads(self._path(entry).read_text(encoding="utf-8"))
            return Verdict.from_json(data)
        except (OSError, ValueError, TypeError):
            return None  # absent or unreadable: the mutant simply runs again

    def put(self, entry: str, verdict: Verdict) -> None:
        path = self._path(entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(verdict.to_json()), encoding="utf-8")
        scratch.replace(path)  # atomic: parallel runs never read half a file
