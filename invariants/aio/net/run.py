"""`run(main(), network=net)`: `invariants.aio.run` on a fresh virtual loop carrying `net`."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from invariants.adapter import Chooser
from invariants.aio.loop import DEFAULT_STEP_BUDGET, DEFAULT_TIME_LIMIT, VirtualLoop
from invariants.aio.net.network import Network
from invariants.aio.run import RunResult, _close
from invariants.aio.schedule import Legality, Schedule

_T = TypeVar("_T")


def run(
    main: Coroutine[Any, Any, _T],
    *,
    network: Network,
    chooser: Chooser | None = None,
    legality: Legality | str = Legality.PRODUCTION,
    replay: Schedule | None = None,
    step_budget: int | None = DEFAULT_STEP_BUDGET,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> RunResult[_T]:
    """Run `main` to completion on a new `VirtualLoop` with `network` attached, as
    `invariants.aio.run` does (the same errors, the same cleanup)."""
    try:
        loop = VirtualLoop(chooser, legality=legality, replay=replay, step_budget=step_budget,
                           time_limit=time_limit)
        network.attach(loop)
    except (TypeError, ValueError):
        main.close()
        raise
    try:
        result = loop.run_until_complete(main)
        loop.check_replay_finished()
        return RunResult(result, loop.schedule, loop.now_us, loop.steps)
    finally:
        _close(loop)
