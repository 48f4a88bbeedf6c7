"""c01 (ordinary, INV1): FIFO, healthy network."""
from _rig import Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.post("client", "beta", identity=None)
    r.advance(100)


prove("c01", "INV1", scenario)
