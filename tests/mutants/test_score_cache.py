"""Verdicts are cached by (mutant, source hash, harness version): a fix reruns what changed."""

from __future__ import annotations

from pathlib import Path

from invariants.mutants.score.cache import VerdictCache, harness_version, key
from invariants.mutants.score.engine import enumerate_file
from invariants.mutants.score.evaluate import Verdict

SOURCE = "def over(count, limit):\n    return count > limit\n"


def test_the_key_follows_the_mutant_its_file_and_the_run() -> None:
    (mutant,) = enumerate_file("limits.py", SOURCE, ["core/ReplaceComparisonOperator_Gt_GtE"])
    base = key(mutant, SOURCE, "ci|INV1")
    assert key(mutant, SOURCE, "ci|INV1") == base
    assert key(mutant, SOURCE + "\n# fixed elsewhere in the file\n", "ci|INV1") != base
    assert key(mutant, SOURCE, "dev|INV1") != base  # another profile, another verdict
    assert key(mutant, SOURCE, "ci|INV1,INV2") != base
    assert harness_version().startswith("0.") and "+" in harness_version()


def test_a_verdict_round_trips_and_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)
    verdict = Verdict("killed", "INV3", "search", 14, "INV3: over the watermark", 2.5)
    cache.put("ab" * 32, verdict)
    assert cache.get("ab" * 32) == verdict
    assert cache.get("cd" * 32) is None
    next(tmp_path.rglob("*.json")).write_text("{not json")
    assert cache.get("ab" * 32) is None  # run again rather than trust it


def test_the_run_context_is_the_same_in_every_process() -> None:
    import os
    import subprocess
    import sys

    code = ("from invariants.mutants.matrix import reference_scan_config as c\n"
            "from invariants.mutants.score.run import context\n"
            "from invariants.mutants.score.target import reference_target as t\n"
            "print(context(t(c()), 'ci'))")
    seen = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, timeout=120,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "3")
    }
    assert len(seen) == 1  # frozensets in the figures must not reorder the cache key
