"""Proof of p03 (INV4): the step program `check` shrank, on the bug's factory (INV4
violated), on the clean factory (not violated), and with no partition on a healthy FIFO
network (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p03.py"""

from pathlib import Path

from pigeon.harness_adapter import bug_p03, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory, partitioned: bool) -> str | None:
    state = machine_class("INV4", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'block': False, 'crash': False,
                   'hold_links': False, 'partition': True, 'remove': False, 'slow': False,
                   'stop': False}, scenario=None, schedule=('scripts',))
        state.safety()
        if partitioned:
            state.partition(duration_ms=3000, one_way=False, to='h0')
            state.safety()
        state.user(count=1, route=Route.GRAIN, sender='client', to='h0')
        state.safety()
        state.advance(ms=30000, schedule=[], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p03, True)
    clean = program(make, True)
    fifo = program(bug_p03, False)
    print(f"bug_p03, partition: {'INV4 violated: ' + bug if bug else 'not violated'}")
    print(f"make, partition: {'INV4 violated: ' + clean if clean else 'not violated'}")
    print(f"bug_p03, healthy FIFO network: {'INV4 violated: ' + fifo if fifo else 'not violated'}")
    assert bug and not clean and not fifo
    print("p03 proven")
