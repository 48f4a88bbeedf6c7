"""Proof of p01 (INV1): a hand-written step program of INV1's state machine: an anonymous
post routed (monolith) from client's node to h2's, whose request datagram the network
duplicates (the third decision of the advance's schedule script: `duplicated datagram
n2→n3`). Run on the bug's factory (INV1 violated), on the clean factory (not violated), and
with the same program on a healthy FIFO network, no verdict but delivery (not violated).
Run from the repository root: PYTHONPATH=src python3 planted_proofs/p01.py"""

import sys
from pathlib import Path

from pigeon.harness_adapter import bug_p01, make

from harness.settings import for_command
from invariants.adapter import Route
from invariants.dynamic.plans import machine_class

params = for_command(pyproject=Path("pyproject.toml")).params


def program(factory, duplicated: bool) -> str | None:
    state = machine_class("INV1", factory, params=params)()
    try:
        state.init(watermarks=(4, 4, 4), swarm={'block': False, 'ignorable': False,
                   'reject': False, 'slow': False, 'stop': False, 'subscribe': False,
                   'timeout': False}, scenario=None, schedule=('scripts',))
        state.safety()
        state.advance(ms=250, schedule=[], ties=[])
        state.safety()
        state.anonymous(message_class='user', route=Route.MONOLITH, sender='client',
                        to='h2')
        state.safety()
        state.advance(ms=1000, schedule=[0, 0, 2] if duplicated else [], ties=[])
        state.safety()
        state.teardown()
    except Exception as exc:
        return str(exc).splitlines()[1] if "\n" in str(exc) else str(exc)
    return None


if __name__ == "__main__":
    bug = program(bug_p01, True)
    clean = program(make, True)
    fifo = program(bug_p01, False)
    print(f"bug_p01, duplicated datagram: {'INV1 violated: ' + bug if bug else 'not violated'}")
    print(f"make, duplicated datagram: {'INV1 violated: ' + clean if clean else 'not violated'}")
    print(f"bug_p01, healthy FIFO network: {'INV1 violated: ' + fifo if fifo else 'not violated'}")
    if not (bug and not clean and not fifo):
        sys.exit("p01 not proven")
    print("p01 proven")
