"""What each invariant's run saw of the others, merged into their rows (`merged`).

Every run judges, besides its own invariant, every other check the adapter admits, as a
bystander (`invariants.dynamic.judge`): the cases it gave their obligations, and the first
violation of each with the step program that led to it. Rows stay per invariant; per
adapter, each row then takes what the other rows' runs saw of it:

- their cases are added to its counts (`borrowed`) before "not exercised" is decided: an
  obligation exercised only by another invariant's driving is exercised;
- a row that passed (or was not exercised) whose invariant another run saw violated
  replays that run's program on its own machine (`run_program`): where it fails again the
  row fails with the replay, its text saying whose plan found it; where the replay passes,
  the row fails all the same with the recorded violation and program, saying so. The
  monitor that saw it is the row's own checker, fed that run's trace: the mesh broke the
  invariant; the replay passing means the same steps did not drive the mesh the same way
  twice (state kept across examples, real time or threads), which a deterministic mesh
  under the harness must not do either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from harness.rows.build import row_of, unexercised_line
from harness.rows.counterexample import Counterexample
from harness.rows.row import InvariantRow
from invariants.dynamic.runner import Bystander, Outcome, program_text
from invariants.dynamic.seed_programs import Program

# (adapter label, check id, program, name for its text) -> the program's outcome
Replay = Callable[[str, str, Program, str], Outcome]
Progress = Callable[[str], None]


def merged(rows: Sequence[InvariantRow], replay: Replay, say: Progress) -> list[InvariantRow]:
    """`rows` with what the other rows' runs (on the same adapter) saw of each."""
    return [_merged(row, rows, replay, say) for row in rows]


def _merged(row: InvariantRow, rows: Sequence[InvariantRow], replay: Replay,
            say: Progress) -> InvariantRow:
    if row.verdict == "not applicable":  # no run judged it: the adapter lacks what it needs
        return row
    seen = {
        other.check_id: other.bystanders[row.check_id]
        for other in rows
        if other.adapter == row.adapter and other.check_id != row.check_id
        and row.check_id in other.bystanders
    }
    row = _with_borrowed(row, seen)
    if row.verdict not in ("pass", "not exercised"):  # its own run's failure stands
        return row
    found = [(by, sighting) for by, sighting in seen.items() if sighting.violation]
    return _found_by(row, found, replay, say) if found else row


def _with_borrowed(row: InvariantRow, seen: Mapping[str, Bystander]) -> InvariantRow:
    """The other runs' cases added to the row's counts; "not exercised" decided again."""
    borrowed = {
        by: {name: count for name, count in bystander.evidence.items() if count}
        for by, bystander in seen.items()
    }
    borrowed = {by: counts for by, counts in borrowed.items() if counts}
    if not borrowed:
        return row
    counts = {name: own + sum(b.get(name, 0) for b in borrowed.values())
              for name, own in row.counts.items()}
    row = replace(row, counts=counts, borrowed=borrowed)
    if row.verdict != "not exercised":
        return row
    unexercised = {name: cause for name, cause in row.unexercised.items() if not counts[name]}
    if unexercised:
        return replace(row, unexercised=unexercised, evidence=unexercised_line(unexercised))
    return replace(row, passed=True, verdict="pass", unexercised={}, evidence="")


def _found_by(row: InvariantRow, found: Sequence[tuple[str, Bystander]], replay: Replay,
              say: Progress) -> InvariantRow:
    """The row failed by the first recorded violation whose program fails again on the
    row's own machine; by the first recorded one, as recorded, when none does."""
    check = row.check_id
    for by, sighting in found:
        assert sighting.program is not None  # recorded with every violation
        say(f"  {check}: replaying the violation {by}'s run saw")
        outcome = replay(row.adapter, check, sighting.program, f"recorded in the {by} run")
        if outcome.verdict == "violation":
            return _replayed(row, by, outcome)
    return _unreplayed(row, *found[0])


def _note(check: str, by: str) -> str:
    return (f"Found while driving {by}'s plan: {by}'s run judged {check} as a bystander "
            f"and recorded the program below")


def _replayed(row: InvariantRow, by: str, outcome: Outcome) -> InvariantRow:
    lines = (outcome.failure_text or "").splitlines()
    text = "\n".join([*lines[:1], _note(row.check_id, by) + "; replayed on "
                      f"{row.check_id}'s own machine, it fails again:", *lines[1:]])
    failed = row_of(replace(outcome, examples=row.examples, seconds=row.seconds,
                            failure_text=text), row.adapter)
    example = failed.counterexample
    return replace(failed, counts=row.counts, borrowed=row.borrowed,
                   bystanders=row.bystanders,
                   counterexample=example and replace(example, found_by=by))


def _unreplayed(row: InvariantRow, by: str, sighting: Bystander) -> InvariantRow:
    check = row.check_id
    program = sighting.program or ()
    shown = program_text(f"{check}Machine", program)
    violated = (sighting.violation or "").splitlines()
    failure = "\n".join([
        _note(check, by) + f"; replayed on {check}'s own machine, it passed: the violation "
        "needed that run's exact course (the mesh did not behave the same way twice under "
        "the same steps), so it is shown as recorded, without a diagram:",
        *violated[1:], f"Recorded in {by}'s run:", shown,
    ])
    example = Counterexample(row.examples, len(program), None, shown, None, None, None,
                             found_by=by, replayed=False)
    return replace(row, passed=False, verdict="violation", unexercised={},
                   evidence=violated[1].strip() if len(violated) > 1 else "",
                   failure=failure, counterexample=example)
