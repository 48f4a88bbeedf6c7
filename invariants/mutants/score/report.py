"""The mutation score as JSON and as text: totals, kills by check, survivors by file/function.

score = killed / (total - equivalent - incompetent). Timed-out mutants stay in the
denominator and are not kills: a check that never answers has not caught anything. Known
blind mutants (`[[blind]]`) are survivors like any other; they are listed apart from the
survivors nobody has looked at yet.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from invariants.mutants.score.engine import ENGINE, apply, unified_diff
from invariants.mutants.score.run import Result, ScoreRun, StaleEntry


def _of(run: ScoreRun, status: str) -> list[Result]:
    """The results of `status` among the mutants the score counts (not triaged equivalent)."""
    return [r for r in run.results if r.equivalent is None and r.verdict is not None
            and r.verdict.status == status]


def _survivors(run: ScoreRun, *, blind: bool) -> list[Result]:
    return [r for r in _of(run, "survived") if (r.blind is not None) == blind]


def diff_of(run: ScoreRun, result: Result) -> str:
    mutant = result.mutant
    before = run.target.sources[mutant.path]
    return unified_diff(mutant, before, apply(mutant, before), run.target.package)


def score(run: ScoreRun) -> float | None:
    equivalent = sum(r.equivalent is not None for r in run.results)
    denominator = len(run.results) - equivalent - len(_of(run, "incompetent"))
    return len(_of(run, "killed")) / denominator if denominator > 0 else None


def _mutant(run: ScoreRun, result: Result, *, diff: bool) -> dict[str, Any]:
    m = result.mutant
    data: dict[str, Any] = {"id": m.id, "path": m.path, "line": m.line, "function": m.function,
                            "operator": m.operator, "snippet": m.snippet,
                            "occurrence": m.rank}
    if result.verdict is not None:
        data["seconds"] = round(result.verdict.seconds, 3)
        if result.verdict.unreached:
            data["unreached"] = True
    if diff:
        data["diff"] = diff_of(run, result)
    return data


def killed_by(run: ScoreRun) -> Counter[str]:
    return Counter(f"{r.verdict.check} ({r.verdict.phase})" for r in _of(run, "killed")
                   if r.verdict is not None)


def _equivalent(run: ScoreRun, result: Result) -> dict[str, Any]:
    assert result.equivalent is not None
    data = {**_mutant(run, result, diff=False), "reason": result.equivalent.reason}
    if result.verdict is not None:  # verified (--verify-triage)
        data["verdict"] = result.verdict.status
    return data


def _stale(stale: StaleEntry) -> dict[str, Any]:
    data: dict[str, Any] = {**stale.entry.to_json(), "why": stale.why(), "mutant": None}
    if stale.killed is not None and stale.killed.verdict is not None:
        data.update(mutant=stale.killed.mutant.id, check=stale.killed.verdict.check,
                    phase=stale.killed.verdict.phase)
    return data


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
        "survived": [_mutant(run, r, diff=True) for r in _survivors(run, blind=False)],
        "blind": [
            {**_mutant(run, r, diff=True), "reason": r.blind.reason}
            for r in _survivors(run, blind=True) if r.blind is not None
        ],
        "equivalent": [_equivalent(run, r) for r in run.results if r.equivalent is not None],
        "timeouts": [_mutant(run, r, diff=True) for r in _of(run, "timeout")],
        "incompetent": [
            {**_mutant(run, r, diff=False), "reason": r.verdict.evidence}
            for r in _of(run, "incompetent") if r.verdict is not None
        ],
        "guided": run.guided,
        "step_budget": run.step_budget,
        "unreached": sum(1 for r in _of(run, "survived")
                         if r.verdict is not None and r.verdict.unreached),
        "verified_triage": run.verified_triage,
        "stale_triage": [_stale(s) for s in run.stale_entries()],
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
                unreached = (" (no check's run reaches it)"
                             if r.verdict is not None and r.verdict.unreached else "")
                lines.append(f"      {r.mutant.id} {path}:{r.mutant.line} "
                             f"{r.mutant.operator_short}{unreached}")
                if r.blind is not None:
                    lines.append(f"        known blind: {r.blind.reason}")
                lines += [f"        {d}" for d in diff_of(run, r).splitlines()[2:]]
    return lines


def _equivalent_text(data: dict[str, Any]) -> list[str]:
    verified = " (verified: each was run)" if data["verified_triage"] else ""
    lines = [f"equivalent (triaged){verified}: {len(data['equivalent'])}"]
    for e in data["equivalent"]:
        ran = f" [{e['verdict']}]" if "verdict" in e else ""
        lines.append(f"  {e['id']} {e['path']}:{e['line']}{ran} {e['reason']}")
    return lines


def stale_line(run: ScoreRun, stale: StaleEntry) -> str:
    entry = stale.entry
    where = f"{run.triage_file}: " if run.triage_file else ""
    return (f"stale triage entry: {where}{entry.name} {entry.path} {entry.function} "
            f"{entry.operator} {entry.snippet!r} occurrence {entry.occurrence}: {stale.why()}")


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
        ("judged by the checks whose runs reach each mutant's statement (coverage of the "
         f"unmutated mesh); survivors no check reaches: {data['unreached']}" if run.guided
         else "judged by every check (no coverage guidance)"),
    ]
    if run.step_budget is not None:
        lines.append(f"a mutant's step may take {run.step_budget:g} CPU seconds (from the "
                     "unmutated mesh's slowest step; a step past it is a hang, a kill)")
    lines += _survivor_text(run, _survivors(run, blind=False), "survived")
    if data["blind"]:
        lines += _survivor_text(run, _survivors(run, blind=True), "survivors, known blind")
    if data["timeouts"]:
        lines += _survivor_text(run, _of(run, "timeout"), "timed out")
    if incompetent:
        lines.append(f"incompetent: {incompetent}")
        lines += [f"  {i['id']} {i['path']}:{i['line']} {i['reason']}"
                  for i in data["incompetent"]]
    if equivalent:
        lines += _equivalent_text(data)
    lines += [stale_line(run, s) for s in run.stale_entries()]
    return "\n".join(lines) + "\n"
