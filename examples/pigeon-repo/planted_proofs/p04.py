"""Proof of p04 (INV5): a hand-written step program of INV5's state machine: h0's node cut
off for 3 s, a post routed (monolith) from client to h0, then a graceful stop while its leg
is in flight. Run on the bug's factory (INV5 violated), on the clean factory (not
violated), and with no partition on a healthy FIFO network (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p04.py"""

import sys
from pathlib import Path

from pigeon.harness_adapter import bug_p04, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory, partitioned: bool) -> str | None:
    state = machine_class("INV5", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'block': False, 'crash': False,
                   'failure': False, 'hold_links': False, 'ignorable': False,
                   'partition': True, 'reject': False, 'remove': False,
                   'subscribe': False, 'timeout': False}, scenario=None,
                   schedule=('scripts',))
        state.safety()
        if partitioned:
            state.partition(duration_ms=3000, one_way=False, to='h0')
            state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='client', to='h0')
        state.safety()
        state.advance(ms=1, schedule=[], ties=[])
        state.safety()
        state.stop(graceful=True, racing=[], slow_ms=0, give_up_ms=None)
        state.safety()
        state.advance(ms=30000, schedule=[], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p04, True)
    clean = program(make, True)
    fifo = program(bug_p04, False)
    print(f"bug_p04, partition + stop: {'INV5 violated: ' + bug if bug else 'not violated'}")
    print(f"make, partition + stop: {'INV5 violated: ' + clean if clean else 'not violated'}")
    print(f"bug_p04, healthy FIFO network: {'INV5 violated: ' + fifo if fifo else 'not violated'}")
    if not (bug and not clean and not fifo):
        sys.exit("p04 not proven")
    print("p04 proven")
