"""The loop's async generator hooks: asyncio's, in a fixed order and quiet once it is gone.

`BaseEventLoop`'s firstiter hook keeps the async generators it sees in a
`weakref.WeakSet`, and `shutdown_asyncgens` closes them in that set's order, which follows
their hashes, that is their addresses: the same program would close its generators (and
run their `finally` blocks) in another order from run to run. The virtual loop keeps them
in first-iteration order instead.

Its finalizer hook schedules an abandoned generator's `aclose()` as a task, as asyncio's
does, unless the loop itself is garbage (an adapter's loop is dropped mid-run as a matter
of course, with generators suspended in its tasks): that task would never run, and on 3.13
its unawaited `aclose()` warns.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Iterator
from typing import Any

AnyAsyncGenerator = AsyncGenerator[Any, Any]


class AsyncGenerators:
    """A weak set in insertion order, with the part of the set API `BaseEventLoop` uses
    on its `_asyncgens`; a generator leaves it when it is garbage."""

    def __init__(self) -> None:
        # A dict keeps insertion order; its keys are weak, so the set holds no generator.
        self._live: weakref.WeakKeyDictionary[Any, None] = weakref.WeakKeyDictionary()

    def add(self, agen: Any) -> None:
        self._live[agen] = None

    def discard(self, agen: Any) -> None:
        self._live.pop(agen, None)

    def clear(self) -> None:
        self._live.clear()

    def __len__(self) -> int:
        return len(self._live)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._live))


class AsyncGenHooks(asyncio.BaseEventLoop):
    """asyncio's asyncgen hooks and `shutdown_asyncgens`, deterministic, and quiet for a
    generator finalized along with its loop."""

    def __init__(self) -> None:
        super().__init__()
        self._asyncgens = AsyncGenerators()
        # Set when the loop is garbage: the garbage collector clears weak references (and
        # so runs this) before it finalizes the generators that went with the loop.
        self._gone: list[bool] = []
        weakref.finalize(self, self._gone.append, True)

    def _asyncgen_finalizer_hook(self, agen: AnyAsyncGenerator) -> None:
        if self._gone:
            self._asyncgens.discard(agen)
            return
        super()._asyncgen_finalizer_hook(agen)  # type: ignore[misc]
