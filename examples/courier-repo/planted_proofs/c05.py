"""c05 (ordinary, INV7): FIFO, healthy network; a routed post to a hub that does not exist."""
from _rig import Run, prove


def scenario(r: Run) -> None:
    r.hub("alpha", "beta", "gamma")
    r.post("client", "nowhere")
    r.advance(3000)


prove("c05", "INV7", scenario)
