"""Beyond one machine: Cosmic Ray's own session database and HTTP workers, fed by the harness.

The harness builds no scheduler. It writes a Cosmic Ray configuration whose test command is
`python -m harness prove --mutate ... --in-place` (judge the tree as Cosmic Ray mutated it
on disk, print one verdict line, exit 1 when a check kills it), marks the mutants it leaves
out as skipped in the session (the contract of Cosmic Ray's own `cr-filter-*` tools), and
reads the finished session back into the same report and score as a local run. Cosmic Ray
enumerates with the same operators in the same order, so (file, operator, occurrence) in
its database names the same mutant as here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invariants.mutants.score.engine import EngineMutant, enumerate_tree, matches
from invariants.mutants.score.evaluate import Verdict
from invariants.mutants.score.run import Result, ScoreRun, by_construction
from invariants.mutants.score.target import MeshTarget, TargetError
from invariants.mutants.score.triage import Triage

VERDICT_PREFIX = "harness-verdict: "
# What an in-place run a signal ended prints instead (on standard output, which Cosmic Ray
# records): its non-zero exit is no kill, and no result to count.
INTERRUPTED_PREFIX = "harness-interrupted: "


def verdict_line(verdict: Verdict) -> str:
    return VERDICT_PREFIX + json.dumps(verdict.to_json(), sort_keys=True)


def interrupted_line(signal_name: str) -> str:
    return f"{INTERRUPTED_PREFIX}{signal_name}"


def interrupted(output: str | None) -> bool:
    return any(line.startswith(INTERRUPTED_PREFIX) for line in (output or "").splitlines())


def parse_verdict(output: str | None) -> Verdict | None:
    for line in reversed((output or "").splitlines()):
        if line.startswith(VERDICT_PREFIX):
            try:
                return Verdict.from_json(json.loads(line[len(VERDICT_PREFIX):]))
            except (ValueError, TypeError):
                return None
    return None


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:  # another drive: absolute it stays
        return path.as_posix()


def whole_file_exclusions(target: MeshTarget, triage: Triage) -> set[str]:
    everything = (*target.exclusions, *triage.exclusions)
    return {
        path for path in target.files
        for e in everything
        if e.function == "*" and e.operator == "*" and matches(e.path, path)
    }


def config_text(
    target: MeshTarget,
    triage: Triage,
    root: Path,
    *,
    command: str,
    timeout: float,
    worker_urls: list[str],
) -> str:
    """A Cosmic Ray configuration (TOML) for the target, run from `root`."""
    skipped = whole_file_exclusions(target, triage)
    modules = [_relative(target.package_dir / p, root) for p in target.files if p not in skipped]
    lines = [
        "# Cosmic Ray session for the mesh-harness mutation score "
        "(python -m harness prove --mutate --cosmic-ray-config).",
        "# Run cosmic-ray from the directory holding this file's pyproject.toml.",
        "[cosmic-ray]",
        f"module-path = {json.dumps(modules)}",
        f"timeout = {timeout:g}",
        "excluded-modules = []",
        f"test-command = {json.dumps(command)}",
        "",
        "[cosmic-ray.distributor]",
        f"name = {json.dumps('http' if worker_urls else 'local')}",
    ]
    if worker_urls:
        lines += ["", "[cosmic-ray.distributor.http]", f"worker-urls = {json.dumps(worker_urls)}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Index:
    mutants: dict[tuple[str, str, int], EngineMutant]  # (path, operator, occurrence)
    everything: list[EngineMutant]


def _index(target: MeshTarget) -> _Index:
    everything = enumerate_tree(target.sources, target.files)
    return _Index({(m.path, m.operator, m.occurrence): m for m in everything}, everything)


def _spec_mutant(index: _Index, target: MeshTarget, root: Path, spec: Any) -> EngineMutant:
    path = Path(spec.module_path)
    absolute = (path if path.is_absolute() else root / path).resolve()
    try:
        relative = absolute.relative_to(target.package_dir.resolve()).as_posix()
    except ValueError:
        raise TargetError(f"session: {spec.module_path} is not in {target.package_dir}") from None
    found = index.mutants.get((relative, spec.operator_name, spec.occurrence))
    if found is None:
        raise TargetError(
            f"session: {spec.module_path} {spec.operator_name} #{spec.occurrence} is not a "
            "mutant of the current source (was the session made from another commit?)"
        )
    return found


def _open(session: Path) -> Any:
    from cosmic_ray.work_db import WorkDB, use_db

    if not session.exists():
        raise TargetError(f"{session}: no such session (make it with `cosmic-ray init`)")
    return use_db(str(session), mode=WorkDB.Mode.open)


def filter_session(session: Path, target: MeshTarget, triage: Triage, root: Path) -> int:
    """Mark the excluded and triaged-equivalent mutants of a Cosmic Ray session as skipped;
    how many were marked."""
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    index = _index(target)
    marked = 0
    with _open(session) as db:
        for item in db.pending_work_items:
            (spec,) = item.mutations
            mutant = _spec_mutant(index, target, root, spec)
            if (triage.excluded(mutant) or by_construction(target, mutant)
                    or triage.equivalent(mutant)):
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
                marked += 1
    return marked


def _verdict(result: Any) -> Verdict | None:
    """Our verdict line, else what Cosmic Ray recorded; None: not a result to count."""
    outcome = str(getattr(result.worker_outcome, "value", result.worker_outcome))
    if outcome == "abnormal":  # the worker could not be reached: run it again
        return None
    if outcome == "skipped":  # another filter's (cr-filter-pragma, cr-filter-git): not run
        return None
    if outcome in ("exception", "no-test"):
        return Verdict("incompetent", evidence=f"cosmic-ray: {outcome}")
    if result.output == "timeout":
        return Verdict("timeout", evidence="cosmic-ray's timeout")
    if interrupted(result.output):  # a signal ended the run, not a check: run it again
        return None
    parsed = parse_verdict(result.output)
    if parsed is not None:
        return parsed
    killed = str(getattr(result.test_outcome, "value", result.test_outcome)) == "killed"
    return Verdict("killed" if killed else "survived", evidence="no harness verdict line")


def read_session(
    session: Path, target: MeshTarget, triage: Triage, root: Path, profile: str
) -> ScoreRun:
    """A finished (or partly finished) Cosmic Ray session as a score run."""
    triage = triage.with_exclusions(target.exclusions)
    index = _index(target)
    results: list[Result] = []
    excluded = []
    with _open(session) as db:
        completed = db.completed_work_items
    for item, result in completed:
        (spec,) = item.mutations
        mutant = _spec_mutant(index, target, root, spec)
        rule = triage.excluded(mutant) or by_construction(target, mutant)
        if rule is not None:
            excluded.append((mutant, rule))
            continue
        same = triage.equivalent(mutant)
        if same is not None:
            results.append(Result(mutant, None, same))
            continue
        verdict = _verdict(result)
        if verdict is not None:
            results.append(Result(mutant, verdict, blind=triage.known_blind(mutant)))
    results.sort(key=lambda r: (r.mutant.path, r.mutant.line, r.mutant.id))
    return ScoreRun(target=target, profile=profile, results=results,
                    enumerated=len(index.everything), excluded=excluded,
                    stale=triage.stale(index.everything, target.files),
                    triage_file=triage.source)
