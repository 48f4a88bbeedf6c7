"""The main job's run: every check against one mesh, as one `CheckResult`.

1. the static scan of the mesh's source (`subject`: the configured repository's paths and
   names, or the installed `reference_impl` package);
2. the adapter conformance check, then every dynamic invariant through each adapter;
3. the kill matrix, where the reference's pre-fix mutants apply: each against the checks
   that must kill it (skipped, with the reason, on another team's mesh).

With the kill matrix, the reference's invariant rows are the matrix's reference row, each
built from the outcome its cell carries, so no invariant runs twice. Either way each row
then takes what the other rows' runs saw of its invariant as a bystander: their evidence,
and a violation of it they recorded, replayed on its own machine (`merge`). Every dynamic run
uses one settings object, resolved here from the profile and the shared database. With
`jobs` above 1 the dynamic runs (the matrix's cells, or each adapter's invariants) go to
that many forked workers (`invariants.mutants.pool`); the result does not depend on it.
`harness.jobs.check.report` renders the result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hypothesis import settings as Settings

from harness.jobs.check.report import CheckResult
from harness.jobs.check.subject import KILL_MATRIX_SKIPPED, Subject, bundled_reference
from harness.rows.build import counts_of, row_of
from harness.rows.merge import Replay, merged
from harness.rows.row import InvariantRow
from harness.run_state import hypothesis_profile
from harness.scan_verdict import load_baseline, run_scan
from harness.shared_database import SharedDatabase
from invariants.adapter import AdapterFactory
from invariants.adapter_calls import AdapterExited
from invariants.checks import CHECKS
from invariants.checks.params import CheckParams
from invariants.conformance.programs import conformance
from invariants.dynamic.runner import Outcome, run_invariant, run_program
from invariants.dynamic.seed_programs import Program
from invariants.mutants.matrix import Matrix, prove
from invariants.mutants.pool import fan_out
from invariants.scan.model import ScanConfig

Progress = Callable[[str], None]


def run_check(
    profile: str = "ci",
    *,
    kill_matrix: bool = True,
    invariants: Sequence[str] | None = None,
    progress: Progress | None = None,
    shared_database: SharedDatabase | None = None,
    subject: Subject | None = None,
    jobs: int = 1,
) -> CheckResult:
    """The whole job on `subject` (default: the bundled reference under `profile`);
    `invariants` narrows the invariants run without the kill matrix. `shared_database` is
    replayed by every invariant run (None: no shared database). `jobs`: worker processes
    for the dynamic runs (1: all of them here)."""
    judged = subject or bundled_reference(profile)
    settings = hypothesis_profile(judged.profile, shared_database)
    say = progress or (lambda _line: None)
    result = _run_check(judged, settings, kill_matrix, invariants or judged.invariants, say,
                        jobs)
    result.shared_database = shared_database.spec if shared_database else None
    return result


def _run_check(
    subject: Subject, settings: Settings, kill_matrix: bool, invariants: Sequence[str],
    say: Progress, jobs: int,
) -> CheckResult:
    say(f"scanning {subject.root}")
    verdict = run_scan(list(subject.scan_paths), subject.scan_config, subject.root,
                       cache_dir=subject.cache_dir, baseline=load_baseline(subject.baseline))
    broken, programs = _conformance(subject, say)
    result = CheckResult(subject.profile, verdict, [], None, title=subject.title,
                         mesh=subject.mesh, adapters=tuple(subject.factories),
                         guard_names=_guards(subject.scan_config),
                         conformance=broken, conformance_programs=programs)
    if not kill_matrix or not subject.kill_matrix:
        if kill_matrix:
            result.kill_matrix_skipped = KILL_MATRIX_SKIPPED.format(mesh=subject.mesh)
        say(f"dynamic invariants on {subject.mesh}")
        rows = _invariants_alone(subject, settings, invariants, say, jobs)
        result.invariants = merged(rows, _replay(subject.factories, subject.params), say)
        for own, final in zip(rows, result.invariants, strict=True):
            if own.verdict != final.verdict:  # the other runs' cases, or what they saw
                say(f"  {final.check_id}: {final.verdict} with what the other runs gave it")
        return result
    say("kill matrix (the reference first, then each mutant against the checks it must fail)")
    result.matrix = prove(subject.profile, expected_only=True, progress=say,
                          seed_scenarios=subject.seed_scenarios, settings=settings, jobs=jobs)
    # The matrix runs the reference with the seeds' figures: its rows replay with them.
    result.invariants = merged(_invariants_of(result.matrix),
                               _replay(subject.factories, None), say)
    result.errors = list(result.matrix.errors)
    return result


@dataclass(frozen=True)
class _Alone:
    """What every invariant run of `_invariants_alone` shares: given to the workers once,
    when they are forked (the imported adapters with it), never pickled."""

    factories: Mapping[str, AdapterFactory]
    settings: Settings
    params: CheckParams | None
    seed_scenarios: bool


def _invariant_row(context: _Alone, item: tuple[str, str]) -> InvariantRow:
    """One adapter's run of one invariant, as its row (built where it ran: the mesh's
    exception stays here, its traceback travels as text)."""
    spec, check_id = item
    outcome = run_invariant(check_id, context.factories[spec], context.settings,
                            params=context.params, seed_scenarios=context.seed_scenarios)
    return row_of(outcome, spec if len(context.factories) > 1 else "")


def _invariants_alone(subject: Subject, settings: Settings, check_ids: Sequence[str],
                      say: Progress, jobs: int) -> list[InvariantRow]:
    context = _Alone(dict(subject.factories), settings, subject.params, subject.seed_scenarios)
    items = [(spec, check_id) for spec in subject.factories for check_id in check_ids]
    rows: dict[tuple[str, str], InvariantRow] = {}

    def finished(item: tuple[str, str], row: InvariantRow) -> None:
        say(f"  {item[1]} on {item[0]}: {row.verdict} on its own run ({row.seconds:.1f} s)")
        rows[item] = row

    fan_out(context, items, _invariant_row, jobs, finished)
    return [rows[item] for item in items]  # in the configured order, whatever finished first


def _replay(factories: Mapping[str, AdapterFactory], params: CheckParams | None) -> Replay:
    """How a row replays a program another row's run recorded: on the row's adapter (the
    only one where rows name none), with the figures the runs used."""

    def replay(adapter: str, check_id: str, program: Program, name: str) -> Outcome:
        factory = factories[adapter] if adapter else next(iter(factories.values()))
        return run_program(check_id, factory, program, params=params, name=name,
                           bystanders=False)

    return replay


def _invariants_of(matrix: Matrix) -> list[InvariantRow]:
    """The matrix's reference row, each cell with the outcome it was judged from."""
    rows = []
    for check, cell in matrix.reference.items():
        if check not in CHECKS:
            continue
        if cell.outcome is not None:
            rows.append(row_of(cell.outcome))
        else:  # a cell without its outcome: the cell is all there is
            rows.append(InvariantRow(check, not cell.killed, cell.examples, cell.seconds,
                                     cell.evidence, counts=counts_of(check, {})))
    return rows


def _guards(config: ScanConfig) -> tuple[str, ...]:
    names = config.options.get("guard_functions", ("may_answer",))
    return tuple(names) if isinstance(names, tuple) and names else ("may_answer",)


def _conformance(subject: Subject, say: Progress) -> tuple[list[str], int]:
    """Each adapter through the conformance programs: the broken conventions, one line
    each (an adapter that raises is one line here; its traceback shows in its rows)."""
    lines: list[str] = []
    programs = 0
    for spec, factory in subject.factories.items():
        say(f"adapter conformance: {spec}")
        try:
            _, results = conformance(factory, subject.params)
        except AdapterExited as exc:  # names the adapter and what it raised already
            lines.append(str(exc))
            continue
        except Exception as exc:  # the invariant runs show the traceback
            lines.append(f"{spec}: the adapter raised {type(exc).__name__}: {exc}")
            continue
        programs += len(results)
        lines += [f"{spec}: {b.line(r.program)}" for r in results for b in r.broken]
    return lines, programs
