"""c03 (ordinary, INV5): FIFO, healthy network; two routed posts slowed by different
amounts are in flight when a graceful stop begins."""
from _rig import FaultKind, Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.inject(FaultKind.SLOW_DESTINATION, "beta", duration_ms=300)
    r.inject(FaultKind.SLOW_DESTINATION, "gamma", duration_ms=900)
    r.post("client", "beta")
    r.post("client", "gamma")
    r.advance(10)
    r.stop(graceful=True)
    r.advance(5000)


prove("c03", "INV5", scenario)
