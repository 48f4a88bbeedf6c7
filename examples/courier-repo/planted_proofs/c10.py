"""c10 (network, INV7): a routed post to a removed beta while beta's outbound traffic is cut
off for 3 s: beta's NotFound lands after the caller's timeout."""
from _rig import FaultKind, Run, prove


def body(r: Run, cut: bool) -> None:
    r.hub("alpha", "beta", "gamma")
    r.advance(10)
    r.post("client", "beta", "WarmUp")  # the links between the nodes are up
    r.advance(100)
    r.inject(FaultKind.REMOVE_TARGET, "beta")
    if cut:
        r.inject(FaultKind.ISOLATE_OUTBOUND, "beta", duration_ms=3000)
    r.post("client", "beta")
    r.advance(10_000)


prove("c10", "INV7", lambda r: body(r, True), healthy=lambda r: body(r, False))
