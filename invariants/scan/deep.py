"""Run a recursive tree walk, retrying on a big-stack thread when it recurses too deep.

libcst's visitors and code generator recurse once per tree level; some real files (a
757 KB dict of joined strings in the stdlib) go deeper than the default limit. Only those
files pay for the retry; if even that fails, RecursionError reaches the caller.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 60_000
_lock = threading.Lock()


def run_deep(work: Callable[[], T]) -> T:
    try:
        return work()
    except RecursionError:
        pass
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed back to the calling thread
            failure.append(exc)

    with _lock:
        previous_stack = threading.stack_size(DEEP_STACK_BYTES)
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        try:
            worker = threading.Thread(target=target, name="deep-walk")
            worker.start()
            worker.join()
        finally:
            sys.setrecursionlimit(previous_limit)
            threading.stack_size(previous_stack)
    if failure:
        raise failure[0]
    return outcome[0]
