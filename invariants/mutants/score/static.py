"""A mutant's scan at the cost of its one mutated module.

A mutant differs from the unmutated mesh in one module, and the scan's result cache answers
a file by its path, content and configuration. So the run scans the unmutated sources once
into a cache its workers share (under the build scratch, made before they fork), and each
mutant's scan parses only its mutated module; the whole-tree passes (MESH001's call graph)
still run over every file. The sources are scanned as the mesh's own package, never as the
renamed copy a mutant is imported from (whose every import names the copy), so the
unchanged files are the cache's hits.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from invariants.mutants.build import ensure_scratch
from invariants.mutants.matrix import StaticScan, scan_tree
from invariants.scan.model import ScanConfig


def shared_cache() -> Path:
    """The run's per-file scan cache: one directory for the process and its forked workers."""
    return ensure_scratch() / "scan-cache"


def scan_sources(sources: dict[str, str], config: ScanConfig) -> StaticScan:
    """Scan a package given as its modules' sources (relative path -> text): written to a
    directory of this process's own, never imported, answered from the shared cache where
    a module is unchanged."""
    tree = ensure_scratch() / f"pid{os.getpid()}" / "scanned"
    shutil.rmtree(tree, ignore_errors=True)
    for relative, source in sources.items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    try:
        return scan_tree(tree, config, shared_cache())
    finally:
        shutil.rmtree(tree, ignore_errors=True)
