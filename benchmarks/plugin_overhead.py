"""What the pytest plugin costs: auto-loaded but not asked, and a scan run cold versus warm.

Runs pytest in fresh interpreters on a generated repository (the sample tiny mesh plus
`--files` copies of its mesh module) and prints medians and ratios:

- `collect, plugin off` / `collect, auto-loaded`: `pytest --collect-only` with
  `-p no:harness` and without it (the plugin loaded, no harness items): the price every
  pytest run pays once mesh-harness is installed;
- `scan, cold cache` / `scan, warm cache`: `pytest -p harness --harness-invariants none`
  after deleting the scan cache, and again with it: what an unchanged file costs.

Usage: python3 benchmarks/plugin_overhead.py [--files 60] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# The sample repository the plugin tests use (a test helper, not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugin"))
sample_repo = importlib.import_module("sample_repo")


def _pytest(repo: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                   cwd=repo, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def _median(repeat: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60, help="extra mesh modules to scan")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = sample_repo.write(Path(scratch), fixed=True)
        mesh = (repo / "src" / "tinymesh" / "mesh.py").read_text()
        for index in range(args.files):
            (repo / "src" / "tinymesh" / f"mesh_{index}.py").write_text(mesh)
        cache = repo / ".harness-cache"

        off = _median(args.repeat, lambda: _pytest(repo, "--collect-only", "-p", "no:harness"))
        loaded = _median(args.repeat, lambda: _pytest(repo, "--collect-only"))

        def cold() -> float:
            shutil.rmtree(cache, ignore_errors=True)
            return _pytest(repo, "-p", "harness", "--harness-invariants", "none")

        cold_s = _median(args.repeat, cold)
        _pytest(repo, "-p", "harness", "--harness-invariants", "none")  # fill the cache
        warm_s = _median(args.repeat, lambda: _pytest(repo, "-p", "harness",
                                                      "--harness-invariants", "none"))
    files = args.files + 3
    print(f"collect, plugin off:   {off:6.2f} s")
    print(f"collect, auto-loaded:  {loaded:6.2f} s   ratio {loaded / off:.2f}")
    print(f"scan {files} files, cold cache: {cold_s:6.2f} s")
    print(f"scan {files} files, warm cache: {warm_s:6.2f} s   "
          f"ratio cold/warm {cold_s / warm_s:.2f}")


if __name__ == "__main__":
    main()
