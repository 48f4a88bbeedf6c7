"""Adapters over the reference mesh that end the run instead of raising an exception:
`SystemExit` or `KeyboardInterrupt` from the factory or from `post`, and the controls (an
ordinary exception, and a real SIGINT delivered while the adapter's `post` runs)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from invariants.adapter import Chooser, MeshAdapter
from reference_impl.adapter import make_adapter


class _Posting:
    """The reference adapter, with `post` replaced by `misbehave` (then the real post)."""

    def __init__(self, inner: MeshAdapter, misbehave: Any) -> None:
        self._inner = inner
        self._misbehave = misbehave
        self.capabilities = getattr(inner, "capabilities", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def post(self, *args: Any, **kwargs: Any) -> str:
        self._misbehave()
        return self._inner.post(*args, **kwargs)


def _exit() -> None:
    raise SystemExit(0)


def _interrupt() -> None:
    raise KeyboardInterrupt


def _error() -> None:
    raise ValueError("the post went wrong")


def _signal() -> None:
    """A real Ctrl-C, as the terminal sends it, arriving while the adapter works."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)  # the signal arrives during this; never reached in full


def factory_exit(chooser: Chooser) -> MeshAdapter:
    raise SystemExit(0)


def factory_interrupt(chooser: Chooser) -> MeshAdapter:
    raise KeyboardInterrupt


def step_exit(chooser: Chooser) -> MeshAdapter:
    return _Posting(make_adapter(chooser), _exit)  # type: ignore[return-value]


def step_interrupt(chooser: Chooser) -> MeshAdapter:
    return _Posting(make_adapter(chooser), _interrupt)  # type: ignore[return-value]


def step_error(chooser: Chooser) -> MeshAdapter:
    return _Posting(make_adapter(chooser), _error)  # type: ignore[return-value]


def step_signal(chooser: Chooser) -> MeshAdapter:
    return _Posting(make_adapter(chooser), _signal)  # type: ignore[return-value]
