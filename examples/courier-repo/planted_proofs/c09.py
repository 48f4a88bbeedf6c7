"""c09 (network, INV7): an anonymous routed post from peer (n1) to h1 (n2) while n2 cannot
send for 3 s: the callee's word that it rejected the post lands after the router's response
timeout. A step program of INV7's machine; control: the bug on a healthy network."""
from _machine import Route, prove_program
from courier import harness_adapter


def body(state, cut: bool) -> None:
    state.init(watermarks=(4, 4, 4), swarm={}, scenario=None)
    state.user(sender='peer', to='h1', route=Route.MONOLITH, count=1)  # links up
    state.advance(ms=100, schedule=[], ties=[])
    if cut:
        state.partition(to='h1', duration_ms=3000, one_way=True)
    state.anonymous(sender='peer', to='h1', route=Route.MONOLITH, message_class='user')
    state.advance(ms=10_000, schedule=[], ties=[])


prove_program("c09", "INV7", lambda s: body(s, True), steps=("partition",),
              controls=[("bug, healthy FIFO network", harness_adapter.bug_c09,
                         lambda s: body(s, False), False)])
