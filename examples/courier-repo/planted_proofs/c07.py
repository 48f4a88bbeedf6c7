"""c07 (network, INV2): peer (n1) subscribes to h1 (n2) 1 s into an 8 s cut of n2's outbound
traffic: every answer is held; the last attempt's lands after its route gave up, inside the
window the subscription waits after that attempt timed out. A step program of INV2's
machine; control: the bug on a healthy network."""
from _machine import Route, prove_program
from courier import harness_adapter


def body(state, cut: bool) -> None:
    state.init(watermarks=(4, 4, 4), swarm={}, scenario=None)
    state.user(sender='peer', to='h1', route=Route.MONOLITH, count=1)  # links up
    state.advance(ms=100, schedule=[], ties=[])
    if cut:
        state.partition(to='h1', duration_ms=8000, one_way=True)
    state.advance(ms=1000, schedule=[], ties=[])
    state.subscribe(subscriber='peer', to='h1')
    state.advance(ms=15_000, schedule=[], ties=[])


prove_program("c07", "INV2", lambda s: body(s, True),
              controls=[("bug, healthy FIFO network", harness_adapter.bug_c07,
                         lambda s: body(s, False), False)])
