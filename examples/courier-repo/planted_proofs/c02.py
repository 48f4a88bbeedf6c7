"""c02 (ordinary, INV2): FIFO, healthy network."""
from _rig import Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.subscribe("client", "nowhere", retries=3)
    r.advance(20_000)


prove("c02", "INV2", scenario)
