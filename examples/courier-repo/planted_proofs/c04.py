"""c04 (ordinary, INV3): FIFO, healthy network; a blocked hub's queue passes its watermark."""
from _rig import FaultKind, Route, Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.inject(FaultKind.BLOCK_HUB, "beta", duration_ms=1000)
    for _ in range(70):
        r.post("client", "beta", route=Route.DIRECT)
    r.advance(3000)


prove("c04", "INV3", scenario)
