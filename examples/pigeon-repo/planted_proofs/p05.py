"""Proof of p05 (INV7): a hand-written step program of INV7's state machine: h0's node cut
off for 3 s, a post routed (monolith) from client to h0, then 30 s. Run on the bug's factory
(INV7 violated: the post reaches no end), on the clean factory (not violated), and with no
partition on a healthy FIFO network (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p05.py"""

import sys
from pathlib import Path

from pigeon.harness_adapter import bug_p05, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory, partitioned: bool) -> str | None:
    state = machine_class("INV7", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'anonymous': False, 'crash': False,
                   'hold_links': False, 'partition': True, 'reject': False,
                   'remove': False, 'slow': False, 'timeout': False}, scenario=None,
                   schedule=('scripts',))
        state.safety()
        if partitioned:
            state.partition(duration_ms=3000, one_way=False, to='h0')
            state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='client', to='h0')
        state.safety()
        state.advance(ms=30000, schedule=[], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p05, True)
    clean = program(make, True)
    fifo = program(bug_p05, False)
    print(f"bug_p05, partition: {'INV7 violated: ' + bug if bug else 'not violated'}")
    print(f"make, partition: {'INV7 violated: ' + clean if clean else 'not violated'}")
    print(f"bug_p05, healthy FIFO network: {'INV7 violated: ' + fifo if fifo else 'not violated'}")
    if not (bug and not clean and not fifo):
        sys.exit("p05 not proven")
    print("p05 proven")
