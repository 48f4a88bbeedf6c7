"""Which mesh is mutated, how its isolated copies are imported, and what is left out.

A target is one package: its directory, its import name, the module and factory of its
adapter inside it, every module's source (the copy a mutant is built from) and the files
whose mutants count. The default is the bundled reference mesh; `from_paths` makes one from
an adopter's `mutate_paths` and adapter spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from invariants.checks import CHECK_IDS, DEFAULT_PARAMS, CheckParams
from invariants.mutants.build import REFERENCE_PACKAGE, reference_root
from invariants.mutants.score.triage import Exclusion
from invariants.scan.model import ScanConfig
from invariants.user_errors import UserError

# What the bundled reference mesh leaves out, and why (docs/mutation-score.md lists them).
REFERENCE_EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion("__main__.py", "the `python -m reference_impl trace` front end: it prints "
              "scenario traces and is never behind the adapter"),
    Exclusion("scenarios.py", "the benchmark and demonstration scenarios: the benchmarks "
              "and `python -m reference_impl` run them, the adapter never does"),
    Exclusion("figures.py", "figures read off a finished trace for the scenarios' summaries "
              "(benchmark output); no check reads them"),
)


class TargetError(UserError, ValueError):
    """The mesh to mutate cannot be found or imported as one package: one line."""


@dataclass(frozen=True)
class MeshTarget:
    package_dir: Path
    package: str  # the import name the copies are renamed from
    adapter_module: str  # relative to the package ("adapter")
    factory: str  # attribute of the adapter module ("make_adapter")
    sources: dict[str, str]  # every module of the package, by relative posix path
    files: tuple[str, ...]  # the modules whose mutants count
    scan_config: ScanConfig
    checks: tuple[str, ...] = CHECK_IDS
    params: CheckParams = DEFAULT_PARAMS
    exclusions: tuple[Exclusion, ...] = field(default=())
    # adapter-check's programs judge every mutant too (a test of one check turns them off)
    conformance: bool = True
    # and the static scan (off when only some invariants are scored: `prove --mutate --check`)
    scan: bool = True


def package_sources(package_dir: Path) -> dict[str, str]:
    return {
        path.relative_to(package_dir).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(package_dir.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def reference_target(scan_config: ScanConfig) -> MeshTarget:
    root = reference_root()
    sources = package_sources(root)
    return MeshTarget(
        package_dir=root, package=REFERENCE_PACKAGE, adapter_module="adapter",
        factory="make_adapter", sources=sources, files=tuple(sources),
        scan_config=scan_config, exclusions=REFERENCE_EXCLUSIONS,
    )


def _package_of(path: Path, origin: str) -> Path:
    """The top-level package directory holding `path` (a module or a package directory)."""
    here = path if path.is_dir() else path.parent
    if not (here / "__init__.py").exists():
        raise TargetError(f"{origin}: {path}: not inside a package (no __init__.py)")
    while (here.parent / "__init__.py").exists():
        here = here.parent
    return here


def from_paths(
    paths: Sequence[Path],
    adapter_spec: str,
    scan_config: ScanConfig,
    *,
    checks: tuple[str, ...] = CHECK_IDS,
    params: CheckParams = DEFAULT_PARAMS,
    origin: str = "mutate_paths",
) -> MeshTarget:
    """The package holding every path in `paths` (files or directories), imported through
    `adapter_spec` (`package.module:factory`, inside that same package)."""
    module, _, factory = adapter_spec.partition(":")
    if not factory:
        raise TargetError(f"{origin}: adapter {adapter_spec!r} is not 'module:factory'")
    packages = set()
    for path in paths:
        if not path.exists():
            raise TargetError(f"{origin}: {path}: no such file or directory")
        packages.add(_package_of(path, origin))
    if len(packages) != 1:
        shown = ", ".join(sorted(p.name for p in packages)) or "none"
        raise TargetError(f"{origin}: the paths must lie in one package, got {shown}")
    package_dir = packages.pop()
    top, _, relative = module.partition(".")
    if top != package_dir.name:
        raise TargetError(
            f"{origin}: the adapter {adapter_spec!r} is not in the mutated package "
            f"{package_dir.name!r}; a mutant is imported through an adapter of its own copy"
        )
    sources = package_sources(package_dir)
    files: set[str] = set()
    for path in paths:
        chosen = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        files |= {
            p.absolute().relative_to(package_dir.absolute()).as_posix()
            for p in chosen if "__pycache__" not in p.parts
        }
    return MeshTarget(
        package_dir=package_dir, package=package_dir.name, adapter_module=relative,
        factory=factory, sources=sources, files=tuple(sorted(files)),
        scan_config=scan_config, checks=checks, params=params,
    )
