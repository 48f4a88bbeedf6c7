"""Everything a harness run needs, checked once before any item runs.

`prepare` resolves the adapters, the Hypothesis profile (replaying the shared database,
if one is named) and the baseline up front, so a bad value is one error line at start-up
rather than a failure in every item. The scan is run
at most once per process (`verdict`), on first use: collection only lists the files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hypothesis import settings as Settings
from hypothesis.errors import InvalidArgument

from harness.scan_verdict import ScanVerdict, load_baseline, run_scan
from harness.settings import HarnessSettings
from harness.shared_database import SharedDatabase, ensure_reachable
from invariants.adapter import AdapterFactory
from invariants.adapter_spec import load_factory
from invariants.dynamic.profiles import PROFILES, with_shared_database
from invariants.scan.config import ConfigError
from invariants.scan.files import Discovery, discover

if TYPE_CHECKING:
    from invariants.mutants.matrix import StaticScan


def hypothesis_profile(name: str, shared: SharedDatabase | None = None) -> Settings:
    """A profile of `invariants.dynamic.profiles`, or one registered with Hypothesis by the user,
    replaying `shared` (the run's shared database, wherever it was named) when given."""
    if name in PROFILES:
        base = PROFILES[name]
    else:
        try:
            base = Settings.get_profile(name)
        except InvalidArgument:
            known = ", ".join(sorted(PROFILES))
            raise ConfigError(
                f"Hypothesis profile {name!r} is unknown (known: {known}, or one registered "
                "with hypothesis.settings.register_profile in a conftest.py)"
            ) from None
    if shared is None:
        return base
    try:
        return with_shared_database(base, shared.spec, shared.origin)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


@dataclass
class HarnessRun:
    settings: HarnessSettings
    factories: dict[str, AdapterFactory]  # by spec, in the configured order
    profile: Settings
    baseline: Counter[tuple[str, str, str, str]] | None
    _verdict: ScanVerdict | None = field(default=None, repr=False)
    _reference_scan: StaticScan | None = field(default=None, repr=False)

    def discovery(self) -> Discovery:
        """The files the scan will read, without analysing them (for collection)."""
        return discover(self.settings.paths, self.settings.scan, self.settings.root)

    def verdict(self) -> ScanVerdict:
        if self._verdict is None:
            self._verdict = run_scan(
                self.settings.paths,
                self.settings.scan,
                self.settings.root,
                cache_dir=self.settings.cache_dir,
                baseline=self.baseline,
            )
        return self._verdict

    def reference_scan(self) -> StaticScan:
        """The reference mesh's own scan (with its repository's names, as the kill matrix
        scans it), which a mutant's findings are compared with."""
        if self._reference_scan is None:
            from invariants.mutants.build import tree_sources  # prove mode only
            from invariants.mutants.matrix import reference_scan_config, scan_sources

            # Into the shared per-file cache, which each mutant's scan then reads.
            self._reference_scan = scan_sources(tree_sources(), reference_scan_config())
        return self._reference_scan


def prepare(settings: HarnessSettings) -> HarnessRun:
    """Raises `ConfigError`, `AdapterSpecError` or `BaselineError`, each one line."""
    factories = {
        spec: load_factory(spec, settings.adapter_origin) for spec in settings.adapters
    }
    replays = bool(settings.invariants) or settings.prove
    if settings.shared_database is not None and replays:
        ensure_reachable(settings.shared_database)
    return HarnessRun(
        settings=settings,
        factories=factories,
        profile=hypothesis_profile(settings.profile, settings.shared_database),
        baseline=load_baseline(settings.baseline),
    )
