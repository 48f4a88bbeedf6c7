"""Proof of p06 (INV7, an ordinary bug: no fault, FIFO): a hand-written step program of
INV7's state machine: two posts routed (monolith) to h2, one from client, one from peer,
each from its own node. Run on the bug's factory (INV7 violated: the second post reaches no
end) and on the clean factory (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p06.py"""

import sys
from pathlib import Path

from pigeon.harness_adapter import bug_p06, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory) -> str | None:
    state = machine_class("INV7", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'anonymous': False, 'crash': False,
                   'hold_links': False, 'partition': False, 'reject': False,
                   'remove': False, 'slow': False, 'timeout': False}, scenario=None,
                   schedule=('scripts',))
        state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='client', to='h2')
        state.safety()
        state.user(count=1, route=Route.MONOLITH, sender='peer', to='h2')
        state.safety()
        state.advance(ms=1000, schedule=[], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p06)
    clean = program(make)
    print(f"bug_p06, FIFO: {'INV7 violated: ' + bug if bug else 'not violated'}")
    print(f"make, FIFO: {'INV7 violated: ' + clean if clean else 'not violated'}")
    if not (bug and not clean):
        sys.exit("p06 not proven")
    print("p06 proven")
