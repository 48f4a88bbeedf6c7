"""What `check` judges: the repository it runs in, or the bundled reference mesh.

In a repository whose pyproject.toml has a `[tool.harness]` table, `check` judges that
repository: its scan paths and names, its adapters, invariants, profile and params. Where
no table is found it judges the bundled reference mesh, as it always has. The kill matrix
of the pre-fix mutants belongs to the reference: it runs when every adapter judged is the
reference's, and is skipped with the reason otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.settings import HarnessSettings
from invariants.adapter import AdapterFactory
from invariants.adapter_spec import REFERENCE_ADAPTER, load_factory
from invariants.checks import CHECK_IDS, DEFAULT_PARAMS, CheckParams
from invariants.mutants.build import reference_root
from invariants.mutants.matrix import reference_scan_config
from invariants.scan.model import ScanConfig

KILL_MATRIX_SKIPPED = (
    "the pre-fix mutants are mutants of the bundled reference mesh, not of {mesh}; "
    "`python -m harness prove --mutate` measures a mutation score on your mesh's source"
)


@dataclass(frozen=True)
class Subject:
    title: str  # the report's first line says which mesh it judged
    mesh: str  # "the reference mesh", or the adapter spec(s)
    root: Path
    scan_paths: tuple[str, ...]
    scan_config: ScanConfig
    cache_dir: Path | None
    baseline: Path | None
    factories: Mapping[str, AdapterFactory]  # by adapter spec, in the configured order
    invariants: tuple[str, ...]
    profile: str
    params: CheckParams
    kill_matrix: bool  # the reference's mutants apply to what is judged
    seed_scenarios: bool = True  # False (`--search-only`): the drawn rules alone


def bundled_reference(profile: str = "ci") -> Subject:
    from reference_impl.adapter import make_adapter  # the mesh under test, only when run

    root = reference_root()
    return Subject(
        title=f"the bundled reference mesh ({root})",
        mesh="the reference mesh",
        root=root,
        scan_paths=(".",),
        # The names the kill matrix scans the reference with; no cache: an installed
        # package directory may be read-only, and the scan is quick.
        scan_config=reference_scan_config(),
        cache_dir=None,
        baseline=None,
        factories={REFERENCE_ADAPTER: make_adapter},
        invariants=CHECK_IDS,
        profile=profile,
        params=DEFAULT_PARAMS,
        kill_matrix=True,
    )


def subject_for(settings: HarnessSettings, profile: str | None = None) -> Subject:
    """The configured repository where `settings` come from a `[tool.harness]` table,
    else the bundled reference; `profile` (the `--profile` option) wins over both."""
    if not settings.configured:
        return bundled_reference(profile or "ci")
    factories = {spec: load_factory(spec, settings.adapter_origin) for spec in settings.adapters}
    only_reference = set(settings.adapters) == {REFERENCE_ADAPTER}
    # The kill matrix judges the checks on the reference's own mutants: it belongs to the
    # repository that scans the reference mesh (this one), not to every repo that leaves
    # `adapter` at its default.
    scans_reference = any(
        (settings.root / path).resolve() == reference_root().resolve()
        for path in settings.paths
    )
    mesh = "the reference mesh" if only_reference else ", ".join(settings.adapters)
    return Subject(
        title=f"the repository at {settings.root} (its [tool.harness])",
        mesh=mesh,
        root=settings.root,
        scan_paths=settings.paths,
        scan_config=settings.scan,
        cache_dir=settings.cache_dir,
        baseline=settings.baseline,
        factories=factories,
        invariants=settings.invariants,
        profile=profile or settings.profile,
        params=settings.params,
        kill_matrix=only_reference and scans_reference,
    )
