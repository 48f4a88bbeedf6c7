"""The kit's `schedule_text()` on the aiomesh example: what a failure report appends, the
schedule read as FIFO with its exceptions, in the mesh's own task names."""

from __future__ import annotations

import sys
from pathlib import Path

from invariants.adapter import FirstChooser, MessageSpec, SeededChooser

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "aiomesh-repo" / "src"))

from aiomesh.harness_adapter import BUG_FACTORIES, make


class _SecondOnce:
    """FIFO, but the first time it may: the second option."""

    def __init__(self) -> None:
        self.armed = False

    def choose(self, options: int, why: str) -> int:
        if self.armed and options > 1:
            self.armed = False
            return 1
        return 0


def test_a_stop_run_before_the_post_of_its_instant_is_the_one_exception() -> None:
    chooser = _SecondOnce()
    adapter = BUG_FACTORIES["leg-registers-late"](chooser)
    for hub in ("a", "b"):
        adapter.create_hub(hub)
    adapter.advance(1)  # the hubs' pumps start, FIFO
    chooser.armed = True
    adapter.post("a", "b", MessageSpec("Order"))
    adapter.stop(graceful=True)
    adapter.advance(10)
    assert adapter.schedule_text() == "FIFO except:\n  at t=1 ms (step 3), ran stop before leg1"


def test_fifo_order_reads_fifo() -> None:
    for chooser in (FirstChooser(), SeededChooser(0)):
        adapter = make(chooser)
        adapter.create_hub("a")
        adapter.advance(1)
        assert adapter.schedule_text() == "FIFO"


def test_a_failure_on_the_virtual_loop_reports_its_schedule() -> None:
    from invariants.dynamic.runner import run_invariant
    from reference_impl.adapter import make_adapter

    found = run_invariant("INV1", BUG_FACTORIES["nack-rejected"], "ci")
    assert found.verdict == "violation", found.failure_text
    assert "Schedule of the failing run (virtual loop): FIFO" in (found.failure_text or "")
    # The control: a mesh with no loop of its own reports no schedule.
    from invariants.fuzzing.mutant_adapters import M9

    model = run_invariant("INV1", M9, "ci")
    assert model.verdict == "violation"
    assert "Schedule of the failing run" not in (model.failure_text or "")
    assert make_adapter  # the reference is the model M9 is a mutant of
