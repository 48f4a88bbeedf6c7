"""The same verdict every run: `check --format json` in fresh processes, compared.

    python benchmarks/verdict_determinism.py [--runs 3] [--repos tinymesh-repo,aiomesh-repo]
        [--prove]

Per example repository (all of `examples/` by default), `python -m harness check --format
json --quiet` (with `--no-prove` unless `--prove`) runs `--runs` times, each in a fresh
process with its own PYTHONHASHSEED and a fresh copy of the repository (no scan cache, no
example database), and the JSON documents are compared: verdicts, example counts, evidence
counts, counterexamples. The report holds no timing, so any difference is a verdict that
depends on the process. It prints one line per repository (`identical` or the paths that
differ) and exits 1 when any differs.

A script, not a test: `tests/examples/test_verdict_determinism.py` runs a small sample.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# What a copy leaves behind: caches and databases a run would otherwise reuse.
_CACHES = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis", ".harness-cache",
                                 ".benchmarks", ".import_linter_cache")


def check_json(repo: Path, hash_seed: int, *, prove: bool = False) -> dict[str, Any]:
    """`check --format json` in a fresh copy of `repo`, in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="verdicts-") as scratch:
        copy = Path(scratch) / repo.name
        shutil.copytree(repo, copy, ignore=_CACHES)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "HARNESS_", "HYPOTHESIS_")) and k != "CI"}
        env["PYTHONHASHSEED"] = str(hash_seed)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *(str(copy / d) for d in ("src",))])
        command = [sys.executable, "-m", "harness", "check", "--format", "json", "--quiet"]
        if not prove:
            command.append("--no-prove")
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=3600, check=False)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{repo.name}: check exited {done.returncode}: "
                               f"{done.stderr.strip()[-2000:]}")
        document: dict[str, Any] = json.loads(done.stdout.replace(str(copy), "<repo>"))
        return document


def differences(first: Any, other: Any, path: str = "") -> Iterator[str]:
    """The paths where two JSON values differ."""
    if isinstance(first, dict) and isinstance(other, dict):
        for key in sorted(set(first) | set(other)):
            yield from differences(first.get(key), other.get(key), f"{path}.{key}")
    elif isinstance(first, list) and isinstance(other, list) and len(first) == len(other):
        for index, (a, b) in enumerate(zip(first, other, strict=True)):
            yield from differences(a, b, f"{path}[{index}]")
    elif first != other:
        yield path or "."


def compare(repo: Path, runs: int, *, prove: bool = False) -> list[str]:
    """The paths where any run's document differs from the first run's."""
    documents = [check_json(repo, seed, prove=prove) for seed in range(runs)]
    return sorted({path for document in documents[1:]
                   for path in differences(documents[0], document)})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repos", default="", help="comma-separated names under examples/")
    parser.add_argument("--prove", action="store_true", help="run the kill matrix too")
    args = parser.parse_args(argv)
    names = [n for n in args.repos.split(",") if n] or sorted(
        p.name for p in EXAMPLES.iterdir() if (p / "pyproject.toml").exists())
    failed = False
    for name in names:
        differ = compare(EXAMPLES / name, args.runs, prove=args.prove)
        failed = failed or bool(differ)
        print(f"{name}: {args.runs} fresh runs: "
              + ("identical" if not differ else "differ at " + ", ".join(differ[:10])),
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
