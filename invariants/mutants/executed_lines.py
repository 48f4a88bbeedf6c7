"""The lines of a mesh's package a run executes, measured with coverage.py: what both kinds
of coverage-guided judging read (the kill matrix's, `invariants.mutants.guide`, and the
mutation score's, `invariants.mutants.score.reach`).

A run is a function of the mesh's code alone only under a derandomized profile without a
database (`sound_for`); no other profile may be guided.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hypothesis import settings as Settings

from invariants.user_errors import UserError

Lines = Mapping[str, frozenset[int]]  # relative posix path -> executed line numbers


class CoverageMissing(UserError, ImportError):
    """coverage.py is not installed (the `mutate` extra brings it)."""


def sound_for(profile: str | Settings) -> bool:
    """Whether a check's run under `profile` (a profile's name, or settings) depends on
    the mesh's code alone."""
    chosen = Settings.get_profile(profile) if isinstance(profile, str) else profile
    return bool(chosen.derandomize) and chosen.database is None


class Recorder:
    """coverage.py measuring one package (by its import name, imported or not yet), context
    by context."""

    def __init__(self, package: str) -> None:
        try:
            import coverage
        except ImportError as exc:
            raise CoverageMissing(
                "coverage-guided judging needs coverage.py: pip install "
                f"'mesh-harness[mutate]' ({exc})"
            ) from None
        self._coverage = coverage.Coverage(
            data_file=None, source_pkgs=[package], config_file=False, branch=False,
        )
        # A check that runs none of a module is no news, and must not print.
        self._coverage.set_option("run:disable_warnings", [
            "module-not-imported", "module-not-measured", "no-data-collected",
        ])

    @contextmanager
    def measuring(self) -> Iterator[Callable[[str], object]]:
        """Measure while the block runs; the block names each phase with the callable."""
        self._coverage.start()
        try:
            yield self._coverage.switch_context
        finally:
            self._coverage.stop()

    def executed(self, package_dir: Path) -> dict[str, Lines]:
        """What was measured, per context, by path relative to `package_dir` (the
        package's directory)."""
        root = package_dir.resolve()
        data = self._coverage.get_data()
        lines: dict[str, dict[str, set[int]]] = {}
        for measured in data.measured_files():
            relative = Path(measured).resolve().relative_to(root).as_posix()
            for line, contexts in data.contexts_by_lineno(measured).items():
                for context in contexts:
                    lines.setdefault(context, {}).setdefault(relative, set()).add(line)
        return {context: {path: frozenset(found) for path, found in files.items()}
                for context, files in lines.items()}
