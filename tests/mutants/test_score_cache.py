"""Verdicts are cached by (mutant, source hash, harness version): a fix reruns what changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

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


@pytest.mark.slow
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


def test_a_cached_verdict_holds_under_a_budget_its_run_fits() -> None:
    """A verdict is judged under a step budget: a hang holds under that budget alone, any
    other while its slowest step fits (a verdict that ran no step, under any)."""
    slow = Verdict("survived", budget=2.0, slowest_step=0.4)
    assert slow.holds_under(2.0) and slow.holds_under(7.0) and slow.holds_under(0)
    assert not slow.holds_under(0.3)  # that step would hang now
    hung = Verdict("killed", "INV5", "seed", 1, "error: MeshHung: ...", budget=2.0, hung=True)
    assert hung.holds_under(2.0) and not hung.holds_under(3.0) and not hung.holds_under(0)
    assert Verdict("incompetent", evidence="SyntaxError").holds_under(0.5)


@pytest.mark.slow
def test_a_cached_hang_is_judged_again_under_another_budget(tmp_path: Path) -> None:
    """The cache is read before the unmutated mesh gives the run's budget: a hang cached
    under another budget waits for it, then runs again; a verdict whose steps fit any
    budget is taken at once."""
    from invariants.mutants.matrix import reference_scan_config
    from invariants.mutants.score.run import Options, context, run_score
    from invariants.mutants.score.target import reference_target
    from invariants.mutants.score.triage import Triage

    target = reference_target(reference_scan_config())
    options = Options(profile="ci", sample=2, seed=3, jobs=1)
    cache = VerdictCache(tmp_path)
    first = run_score(target, Triage(None), options, cache=cache)
    assert [r.cached for r in first.results] == [False, False]
    (one, two) = first.results
    assert one.verdict is not None and two.verdict is not None
    entry = key(one.mutant, target.sources[one.mutant.path], context(target, "ci"))
    cache.put(entry, replace(one.verdict, hung=True, budget=999.0))  # judged elsewhere
    # Two's steps fit any budget, whatever this machine measured for them the first time
    # (a loaded machine can take a step past the floor: then it waits for the budget too).
    fits = key(two.mutant, target.sources[two.mutant.path], context(target, "ci"))
    cache.put(fits, replace(two.verdict, hung=False, slowest_step=0.01))
    again = run_score(target, Triage(None), options, cache=cache)
    assert [r.cached for r in again.results] == [False, True]
    assert [r.verdict.status for r in again.results if r.verdict] == [
        one.verdict.status, two.verdict.status]
