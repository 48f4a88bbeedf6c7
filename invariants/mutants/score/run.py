"""A mutation-score run: enumerate, triage, sample, serve from the cache, fan out, collect.

Sampling is seeded (`random.Random(seed)` over the mutants sorted by id), so `--sample 40
--seed 1` is the same forty mutants on every machine. With `jobs > 1` mutants run in forked
worker processes (`invariants.mutants.pool`), each importing its own isolated copies;
verdicts come back as values.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from invariants.checks import team
from invariants.mutants.executed_lines import sound_for
from invariants.mutants.pool import fan_out
from invariants.mutants.score.baseline import measure
from invariants.mutants.score.cache import VerdictCache, key
from invariants.mutants.score.engine import EngineMutant, enumerate_tree, postponed
from invariants.mutants.score.evaluate import Baseline, Verdict, evaluate, judged_by
from invariants.mutants.score.target import MeshTarget
from invariants.mutants.score.triage import BLIND, Entry, Exclusion, Triage
from invariants.step_budget import MUTANT_STEP_FLOOR, fixed_mutant_budget

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Result:
    mutant: EngineMutant
    verdict: Verdict | None  # None: triaged equivalent, not run
    equivalent: Entry | None = None  # triaged equivalent: out of the score's denominator
    cached: bool = False
    blind: Entry | None = None  # known blind: run, and a survivor like any other

    @property
    def killed(self) -> bool:
        return self.verdict is not None and self.verdict.status == "killed"


@dataclass(frozen=True)
class StaleEntry:
    """A triage entry that is no longer true: it names no mutant the engine makes now
    (`killed` None), or the mutant it names is killed by a check."""

    entry: Entry
    killed: Result | None = None

    def why(self) -> str:
        if self.killed is None or self.killed.verdict is None:
            return "matches no mutant any more"
        mutant, verdict = self.killed.mutant, self.killed.verdict
        named = (f"names {mutant.id} ({mutant.path}:{mutant.line}), which "
                 f"{verdict.check} ({verdict.phase}) kills")
        if self.entry.table == BLIND:
            return f"{named} now: no longer blind, delete the entry"
        return f"{named}: not equivalent"


@dataclass
class ScoreRun:
    target: MeshTarget
    profile: str
    results: list[Result]
    enumerated: int  # every mutant the engine made of the target's files
    excluded: list[tuple[EngineMutant, Exclusion]] = field(default_factory=list)
    stale: list[Entry] = field(default_factory=list)  # entries that match no mutant
    sample: int | None = None
    seed: int | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process and its reaped workers: the load-free figure
    verified_triage: bool = False  # the triaged-equivalent mutants were run too
    triage_file: Path | None = None
    guided: bool = False  # each mutant judged only by the checks that reach it
    step_budget: float | None = None  # CPU seconds a mutant's step may take (None: none ran)

    def stale_entries(self) -> list[StaleEntry]:
        """Every stale entry: those that match no mutant, then those naming a killed one."""
        killed = [StaleEntry(entry, r) for r in self.results
                  for entry in (r.equivalent, r.blind) if entry is not None and r.killed]
        return [*(StaleEntry(e) for e in self.stale), *killed]


@dataclass(frozen=True)
class Options:
    profile: str = "ci"
    sample: int | None = None
    seed: int = 0
    jobs: int = 1
    timeout: float | None = 60.0
    operators: Sequence[str] | None = None  # default: every core operator
    verify_triage: bool = False  # run the triaged-equivalent mutants too
    only_triaged: bool = False  # run (and sample from) the triaged mutants only
    # Judge each mutant only by the checks that reach its statement, where the profile makes
    # that sound (`reach.sound_for`); None: when at least `GUIDED_FROM` mutants are to run.
    guided: bool | None = None


# Coverage makes measuring the unmutated mesh about 2.4 times as slow (reference: 57 s
# against 23 s), once per run; skipping the checks that cannot tell a mutant apart repays
# that only over many mutants (docs/mutation-score.md has the figures).
GUIDED_FROM = 200


def guided(options: Options, pending: int) -> bool:
    wanted = pending >= GUIDED_FROM if options.guided is None else options.guided
    return wanted and sound_for(options.profile)


ANNOTATIONS = Exclusion(
    "*", "inside a type annotation of a module with `from __future__ import annotations`: "
    "never evaluated, so equivalent by construction", "*", "*",
)


STAR_MARKERS = Exclusion(
    "*", "an unpacking `*` or `**` (a signature's, a call's, a display's), not arithmetic: "
    "Cosmic Ray's binary-operator replacers rewrite it into code that does not parse",
    "*", "core/ReplaceBinaryOperator_*",
)


def by_construction(target: MeshTarget, mutant: EngineMutant) -> Exclusion | None:
    """Mutants that are no mutants: in a postponed annotation, or an unpacking `*`."""
    if mutant.star_marker:
        return STAR_MARKERS
    if mutant.annotation and postponed(target.sources[mutant.path]):
        return ANNOTATIONS
    return None


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def choose(mutants: Sequence[EngineMutant], sample: int | None, seed: int) -> list[EngineMutant]:
    ordered = sorted(mutants, key=lambda m: m.id)
    if sample is None or sample >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, sample), key=lambda m: (m.path, m.line))


def _stable(value: object) -> str:
    """A dataclass as text that is the same in every process: a frozenset's repr follows the
    per-process string hash order, so sets are written sorted."""

    def plain(item: object) -> object:
        return sorted(map(str, item)) if isinstance(item, set | frozenset) else repr(item)

    return json.dumps(dataclasses.asdict(value), sort_keys=True, default=plain)  # type: ignore[call-overload]


def context(target: MeshTarget, profile: str) -> str:
    """What else a verdict depends on: the profile, the checks (a team's own, with their
    code), their figures, the rules (where the scan judges)."""
    rules = _stable(target.scan_config) if target.scan else "no scan"
    return (f"{profile}|{','.join(judged_by(target))}|{team.fingerprint(target.checks)}|"
            f"{_stable(target.params)}|{rules}")


@dataclass(frozen=True)
class _Run:
    """What every mutant's evaluation shares: given to each worker once, at the fork."""

    target: MeshTarget
    baseline: Baseline
    profile: str
    timeout: float | None


def _work(run: _Run, mutant: EngineMutant) -> Verdict:
    return evaluate(run.target, run.baseline, mutant, profile=run.profile, timeout=run.timeout)


class _Meter:
    """The progress line: done/total, the last verdict, mutants per minute, time left."""

    def __init__(self, total: int, say: Progress) -> None:
        self.total, self.say, self.done = total, say, 0
        self.started = time.perf_counter()

    def tick(self, mutant: EngineMutant, verdict: Verdict, cached: bool) -> None:
        self.done += 1
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        rate = self.done / elapsed * 60
        left = (self.total - self.done) / rate if rate else 0.0
        how = f"by {verdict.check} ({verdict.phase})" if verdict.check else ""
        self.say(f"[{self.done}/{self.total}] {mutant.id} {mutant.path}:{mutant.line} "
                 f"{verdict.status} {how}{' (cached)' if cached else ''}"
                 f" · {rate:.1f}/min · ~{left:.1f} min left")


def _split(
    target: MeshTarget, triage: Triage, everything: list[EngineMutant]
) -> tuple[list[EngineMutant], list[tuple[EngineMutant, Exclusion]]]:
    """The mutants the run keeps, and those its exclusions leave out (with the rule)."""
    excluded: list[tuple[EngineMutant, Exclusion]] = []
    kept: list[EngineMutant] = []
    for mutant in everything:
        rule = triage.excluded(mutant) or by_construction(target, mutant)
        if rule is None:
            kept.append(mutant)
        else:
            excluded.append((mutant, rule))
    return kept, excluded


def _triaged(triage: Triage, mutant: EngineMutant) -> bool:
    return triage.equivalent(mutant) is not None or triage.known_blind(mutant) is not None


def run_score(
    target: MeshTarget,
    triage: Triage,
    options: Options,
    *,
    cache: VerdictCache | None = None,
    progress: Progress | None = None,
) -> ScoreRun:
    started, cpu = time.perf_counter(), _cpu()  # reporting only
    say = progress or (lambda _line: None)
    triage = triage.with_exclusions(target.exclusions)
    everything = enumerate_tree(target.sources, target.files, options.operators)
    kept, excluded = _split(target, triage, everything)
    if options.only_triaged:
        kept = [m for m in kept if _triaged(triage, m)]
    chosen = choose(kept, options.sample, options.seed)
    say(f"{len(everything)} mutant(s) of {target.package} ({len(excluded)} excluded), "
        f"running {len(chosen)}")
    results: dict[str, Result] = {}
    run_context = context(target, options.profile)
    keys = {m.id: key(m, target.sources[m.path], run_context) for m in chosen}
    pending, budgeted = _from_cache(chosen, triage, options, cache, keys, results)
    meter = _Meter(len(chosen) - sum(r.verdict is None for r in results.values()), say)
    for result in results.values():
        if result.verdict is not None:
            meter.tick(result.mutant, result.verdict, cached=True)
    is_guided = bool(pending or budgeted) and guided(options, len(pending) + len(budgeted))
    step_budget = None
    if pending or budgeted:
        say("measuring the unmutated mesh (every check, once)")
        baseline = measure(target, options.profile, guided=is_guided)
        step_budget = baseline.step_budget
        for mutant, hit in budgeted:  # now that the run's budget is known
            if step_budget is not None and hit.holds_under(step_budget):
                results[mutant.id] = Result(mutant, hit, triage.equivalent(mutant),
                                            cached=True, blind=triage.known_blind(mutant))
                meter.tick(mutant, hit, cached=True)
            else:
                pending.append(mutant)
        for mutant, verdict in _run(pending, target, baseline, options, meter):
            results[mutant.id] = Result(mutant, verdict, triage.equivalent(mutant),
                                        blind=triage.known_blind(mutant))
            if cache is not None:
                cache.put(keys[mutant.id], verdict)
    ordered = [results[m.id] for m in chosen]
    return ScoreRun(
        target=target, profile=options.profile, results=ordered, enumerated=len(everything),
        excluded=excluded, stale=triage.stale(everything, target.files), sample=options.sample,
        seed=options.seed if options.sample is not None else None,
        seconds=time.perf_counter() - started, cpu_seconds=_cpu() - cpu,
        verified_triage=options.verify_triage, triage_file=triage.source,
        guided=is_guided, step_budget=step_budget,
    )


def _from_cache(
    chosen: Sequence[EngineMutant], triage: Triage, options: Options,
    cache: VerdictCache | None, keys: dict[str, str], results: dict[str, Result],
) -> tuple[list[EngineMutant], list[tuple[EngineMutant, Verdict]]]:
    """Fill `results` with the triaged equivalents (unless verified) and the cached verdicts
    that hold under any step budget the run may derive; the mutants to run, and the cached
    verdicts that hold only under some (a step past the least budget, or a hang), to be
    taken once the unmutated mesh has given the run's budget."""
    pending: list[EngineMutant] = []
    budgeted: list[tuple[EngineMutant, Verdict]] = []
    fixed = fixed_mutant_budget()
    for mutant in chosen:
        same, blind = triage.equivalent(mutant), triage.known_blind(mutant)
        if same is not None and not options.verify_triage:
            results[mutant.id] = Result(mutant, None, same)
            continue
        hit = cache.get(keys[mutant.id]) if cache is not None else None
        if hit is not None and _holds_under_any(hit, fixed):
            results[mutant.id] = Result(mutant, hit, same, cached=True, blind=blind)
        elif hit is not None:
            budgeted.append((mutant, hit))
        else:
            pending.append(mutant)
    return pending, budgeted


def _holds_under_any(hit: Verdict, fixed: float | None) -> bool:
    """Whether a cached verdict holds under every budget the run may use: the variable's
    (`fixed`), or any derived one (a hang never: it holds under its own budget alone)."""
    if fixed is not None:
        return hit.holds_under(fixed)
    return not hit.hung and hit.holds_under(MUTANT_STEP_FLOOR)


def _run(
    pending: list[EngineMutant], target: MeshTarget, baseline: Baseline, options: Options,
    meter: _Meter,
) -> list[tuple[EngineMutant, Verdict]]:
    done: list[tuple[EngineMutant, Verdict]] = []

    def finished(mutant: EngineMutant, verdict: Verdict) -> None:
        meter.tick(mutant, verdict, cached=False)
        done.append((mutant, verdict))

    fan_out(_Run(target, baseline, options.profile, options.timeout), pending, _work,
            options.jobs, finished)
    return done
