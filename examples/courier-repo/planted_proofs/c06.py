"""c06 (network, INV4): a call to beta while beta's outbound traffic is cut off for 3 s."""
from _rig import FaultKind, Route, Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.advance(10)
    r.inject(FaultKind.ISOLATE_OUTBOUND, "beta", duration_ms=3000)
    r.post("client", "beta", route=Route.GRAIN)
    r.advance(10_000)


def healthy(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.advance(10)
    r.post("client", "beta", route=Route.GRAIN)
    r.advance(10_000)


prove("c06", "INV4", scenario, healthy=healthy)
