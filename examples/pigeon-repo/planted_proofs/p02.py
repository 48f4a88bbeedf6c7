"""Proof of p02 (INV7): a hand-written step program of INV7's state machine: a post routed
(monolith) from peer (on h0's node) to h1's node, h0's node crashed for 100 ms and rebuilt,
then the same post again from the rebuilt node. Run on the bug's factory (INV7 violated:
the second post reaches no end), on the clean factory (not violated), and with no crash on
a healthy FIFO network (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p02.py"""

import sys
from pathlib import Path

from pigeon.harness_adapter import bug_p02, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory, crashed: bool) -> str | None:
    state = machine_class("INV7", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'anonymous': False, 'crash': True,
                   'hold_links': False, 'partition': False, 'reject': False,
                   'remove': False, 'slow': False, 'timeout': False}, scenario=None,
                   schedule=('scripts',))
        state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='peer', to='h1')
        state.safety()
        state.advance(ms=250, schedule=[], ties=[])
        state.safety()
        if crashed:
            state.crash(duration_ms=100, to='h0')
            state.safety()
        state.advance(ms=1000, schedule=[], ties=[])
        state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='peer', to='h1')
        state.safety()
        state.advance(ms=1000, schedule=[], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p02, True)
    clean = program(make, True)
    fifo = program(bug_p02, False)
    print(f"bug_p02, crash: {'INV7 violated: ' + bug if bug else 'not violated'}")
    print(f"make, crash: {'INV7 violated: ' + clean if clean else 'not violated'}")
    print(f"bug_p02, healthy FIFO network: {'INV7 violated: ' + fifo if fifo else 'not violated'}")
    if not (bug and not clean and not fifo):
        sys.exit("p02 not proven")
    print("p02 proven")
