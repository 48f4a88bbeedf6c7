"""c08 (network, INV5): a graceful stop while a routed post to beta is in flight and beta's
links are held for 3 s."""
from _rig import FaultKind, Run, prove


def body(r: Run, hold: bool) -> None:
    r.hub("alpha", "beta", "gamma")
    r.advance(10)
    r.inject(FaultKind.SLOW_DESTINATION, "beta", duration_ms=1000)
    if hold:
        r.inject(FaultKind.HOLD_LINKS, "beta", duration_ms=3000)
    r.post("client", "beta")
    r.advance(1)
    r.stop(graceful=True)
    r.advance(15_000)


prove("c08", "INV5", lambda r: body(r, True), healthy=lambda r: body(r, False))
