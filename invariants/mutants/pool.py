"""The worker pool of the kill matrix (`prove --jobs`) and the mutation score (`prove --mutate
--jobs`): work items run in forked processes, results come back as values.

`work(context, item)` for every item. With `jobs <= 1` every item runs here, in order.
Otherwise `jobs` workers are forked at the first submit: they inherit the imported harness,
the built mutants and the run's `context` (given once, at the fork, never pickled; only the
item and its value travel), start with the signals blocked, ignore SIGINT and die with their
parent (`interrupts.in_worker`); any exception here, an interrupt above all, stops the pool
before it propagates, so no worker outlives the run. Items are submitted in the order
given, and more work `done` returns after them: the first ones start first.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

from invariants import interrupts

Context = TypeVar("Context")
Item = TypeVar("Item")
Value = TypeVar("Value")

_CONTEXT: Any = None  # in a worker: the run's context, set once when it starts


def _start(context: object) -> None:
    global _CONTEXT
    interrupts.in_worker()  # the terminal's Ctrl-C is the parent's to act on
    _CONTEXT = context


def _call(work: Callable[[Any, Item], Value], item: Item) -> Value:
    return work(_CONTEXT, item)


def fan_out(
    context: Context,
    items: Sequence[Item],
    work: Callable[[Context, Item], Value],
    jobs: int,
    done: Callable[[Item, Value], Iterable[Item] | None],
    meanwhile: Callable[[], None] | None = None,
) -> None:
    """`done(item, work(context, item))` here as each item finishes: in order with one job,
    in the order they finish with more. What `done` returns is more work, queued after
    everything submitted so far (an item that waited for another's value). `work` must be
    a module-level function (it travels to the workers by name). `meanwhile()` runs here
    while the workers run (with one job, before the first item); what it changes after the
    fork the workers do not see."""
    if jobs <= 1:
        if meanwhile is not None:
            meanwhile()
        queue = deque(items)
        while queue:
            item = queue.popleft()
            queue.extend(done(item, work(context, item)) or ())
        return
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
        initializer=_start, initargs=(context,),
    )
    try:
        with interrupts.forking():  # the workers start at the first submit, all of them
            pending: dict[Future[Value], Item] = {
                pool.submit(_call, work, item): item for item in items
            }
        if meanwhile is not None:
            meanwhile()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                more = done(pending.pop(future), future.result())
                pending.update({pool.submit(_call, work, item): item for item in more or ()})
    except BaseException:  # an interrupt, above all: no worker outlives the run
        interrupts.stop_pool(pool)
        raise
    pool.shutdown(wait=True)
