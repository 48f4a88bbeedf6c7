"""The mutation score as JSON and as text: totals, kills by check, survivors by file/function.

score = killed / (total - equivalent - incompetent). Timed-out mutants stay in the
denominator and are not kills: a check that never answers has not caught anything.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from invariants.mutants.score.engine import ENGINE, apply, unified_diff
from invariants.mutants.score.run import Result, ScoreRun


def _of(run: ScoreRun, status: str) -> list[Result]:
    return [r for r in run.results if r.verdict is not None and r.verdict.status == status]


def diff_of(run: ScoreRun, result: Result) -> str:
    mutant = result.mutant
    before = run.target.sources[mutant.path]
    return unified_diff(mutant, before, apply(mutant, before), run.target.package)


def score(run: ScoreRun) -> float | None:
    equivalent = sum(r.verdict is None for r in run.results)
    denominator = len(run.results) - equivalent - len(_of(run, "incompetent"))
    return len(_of(run, "killed")) / denominator if denominator > 0 else None


def _mutant(run: ScoreRun, result: Result, *, diff: bool) -> dict[str, Any]:
    m = result.mutant
    data: dict[str, Any] = {"id": m.id, "path": m.path, "line": m.line, "function": m.function,
                            "operator": m.operator, "snippet": m.snippet}
    if result.verdict is not None:
        data["seconds"] = round(result.verdict.seconds, 3)
    if diff:
        data["diff"] = diff_of(run, result)
    return data


def killed_by(run: ScoreRun) -> Counter[str]:
    return Counter(f"{r.verdict.check} ({r.verdict.phase})" for r in _of(run, "killed")
                   if r.verdict is not None)


def to_json(run: ScoreRun) -> dict[str, Any]:
    minutes = run.seconds / 60
    ran = sum(1 for r in run.results if r.verdict is not None and not r.cached)
    value = score(run)
    return {
        "engine": ENGINE,
        "mesh": run.target.package,
        "profile": run.profile,
        "sample": run.sample,
        "seed": run.seed,
        "enumerated": run.enumerated,
        "excluded": len(run.excluded),
        "total": len(run.results),
        "killed": len(_of(run, "killed")),
        "killed_by": dict(sorted(killed_by(run).items())),
        "kills": [
            {**_mutant(run, r, diff=False), "check": r.verdict.check, "phase": r.verdict.phase,
             "examples": r.verdict.examples}
            for r in _of(run, "killed") if r.verdict is not None
        ],
        "survived": [_mutant(run, r, diff=True) for r in _of(run, "survived")],
        "equivalent": [
            {**_mutant(run, r, diff=False), "reason": r.equivalent.reason}
            for r in run.results if r.equivalent is not None
        ],
        "timeouts": [_mutant(run, r, diff=True) for r in _of(run, "timeout")],
        "incompetent": [
            {**_mutant(run, r, diff=False), "reason": r.verdict.evidence}
            for r in _of(run, "incompetent") if r.verdict is not None
        ],
        "stale_triage": [e.to_json() for e in run.stale],
        "score": round(value, 4) if value is not None else None,
        "cached": sum(r.cached for r in run.results),
        "seconds": round(run.seconds, 2),
        "cpu_seconds": round(run.cpu_seconds, 2),
        "mutants_per_minute": round(ran / minutes, 1) if minutes > 0 else None,
    }


def _survivor_text(run: ScoreRun, results: list[Result], title: str) -> list[str]:
    lines = [f"{title}: {len(results)}"]
    grouped: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        grouped[r.mutant.path][r.mutant.function].append(r)
    for path in sorted(grouped):
        lines.append(f"  {path}")
        for function in sorted(grouped[path]):
            lines.append(f"    {function}")
            for r in sorted(grouped[path][function], key=lambda r: r.mutant.line):
                lines.append(f"      {r.mutant.id} {path}:{r.mutant.line} "
                             f"{r.mutant.operator_short}")
                lines += [f"        {d}" for d in diff_of(run, r).splitlines()[2:]]
    return lines


def to_text(run: ScoreRun) -> str:
    data = to_json(run)
    equivalent = len(data["equivalent"])
    incompetent = len(data["incompetent"])
    shown = f"{data['score']:.3f}" if data["score"] is not None else "n/a"
    sampled = f", sample {run.sample} seed {run.seed}" if run.sample is not None else ""
    lines = [
        f"mutation score of {data['mesh']} ({ENGINE}, {run.profile} profile{sampled}): {shown}"
        f" = {data['killed']} killed / ({data['total']} total - {equivalent} equivalent"
        f" - {incompetent} incompetent)",
        f"enumerated {data['enumerated']}, excluded {data['excluded']}, "
        f"cached {data['cached']}, {data['seconds']:.1f} s ({data['cpu_seconds']:.1f} s CPU)"
        + (f", {data['mutants_per_minute']} mutants/min" if data["mutants_per_minute"] else ""),
        "killed by: " + (", ".join(f"{k} {v}" for k, v in data["killed_by"].items()) or "-"),
    ]
    lines += _survivor_text(run, _of(run, "survived"), "survived")
    if data["timeouts"]:
        lines += _survivor_text(run, _of(run, "timeout"), "timed out")
    if incompetent:
        lines.append(f"incompetent: {incompetent}")
        lines += [f"  {i['id']} {i['path']}:{i['line']} {i['reason']}"
                  for i in data["incompetent"]]
    if equivalent:
        lines.append(f"equivalent (triaged): {equivalent}")
        lines += [f"  {e['id']} {e['path']}:{e['line']} {e['reason']}"
                  for e in data["equivalent"]]
    for entry in run.stale:
        lines.append(f"stale triage entry: {entry.path} {entry.function} {entry.operator} "
                     f"{entry.snippet!r} matches no mutant any more")
    return "\n".join(lines) + "\n"
