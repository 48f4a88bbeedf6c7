"""Wall-clock reads under the harness: the mesh's code reads the virtual clock.

While a virtual loop runs on a thread (its window: see `invariants.aio.outside`), a read of
`time.monotonic`, `time.perf_counter`, `time.time` (and their `_ns` forms) or
`datetime.now`/`utcnow`/`today` made there by the mesh's code returns the loop's virtual
time, so a rate limiter or a deadline loop behaves as it does in production:

- `monotonic()` and `perf_counter()` read `loop.time()`, the clock asyncio's own timers
  use (on a stock loop `loop.time()` *is* `time.monotonic()`);
- `time()` reads `WALL_EPOCH + loop.time()`, and `datetime.now()`, `utcnow()`, `today()`
  and `date.today()` the date that makes.

Every read is a function of virtual time alone, so runs read alike. The standard library,
the harness and Hypothesis (`outside.is_harness_module`) keep real time: a caller is judged
by its module, so `threading`'s and `queue`'s timeouts, log records, the step budget and
Hypothesis' deadlines are unaffected. Other threads, and this one outside the window, read
real time. A `time.sleep` of more than 0 in the window is a `FencedCall` (3.11 and 3.12
raise no audit event for it).

How: at the first window the `time` module's functions are swapped for shims (and put
back when the last window closes); names the mesh bound before (`from time import
monotonic`, `from datetime import datetime`, `import datetime`) are swapped in the
modules that hold them, found by identity once per newly imported module. Outside a window
every shim is one truth test and the real call.
"""

from __future__ import annotations

import datetime as _datetime
import sys
import threading
import time as _time
import types
from collections.abc import Callable
from datetime import tzinfo
from typing import Any

from invariants.aio import outside

# What time.time() reads at virtual t=0: 2024-01-01T00:00:00Z, fixed so every run reads
# the same dates.
WALL_EPOCH = 1_704_067_200

_US = 1_000_000
_RUNNING = outside.RUNNING
_get_ident = threading.get_ident
_getframe = sys._getframe

_real_monotonic = _time.monotonic
_real_monotonic_ns = _time.monotonic_ns
_real_perf_counter = _time.perf_counter
_real_perf_counter_ns = _time.perf_counter_ns
_real_time = _time.time
_real_time_ns = _time.time_ns
_real_sleep = _time.sleep
_RealDatetime = _datetime.datetime

# Module name -> whether its clock reads stay real (the standard library, the harness).
_real_callers: dict[str, bool] = {}


def reads_real_time(module: object) -> bool:
    """Whether code of the module named `module` keeps the real clock under the harness."""
    if not isinstance(module, str):
        return False
    known = _real_callers.get(module)
    if known is None:
        top = module.partition(".")[0]
        known = _real_callers[module] = (
            top in sys.stdlib_module_names or outside.is_harness_module(top)
        )
    return known


def _virtual_seconds(depth: int) -> float | None:
    """The virtual clock in seconds for the caller `depth` frames above the shim that
    calls this, or None when it reads real time."""
    window = _RUNNING.get(_get_ident())
    if window is None or window.clock is None:
        return None
    if reads_real_time(_getframe(depth + 1).f_globals.get("__name__")):
        return None
    return window.clock()


def _micros(seconds: float) -> int:
    return round(seconds * _US)  # the virtual clock counts whole microseconds


def monotonic() -> float:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return seconds
    return _real_monotonic()


def monotonic_ns() -> int:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return _micros(seconds) * 1000
    return _real_monotonic_ns()


def perf_counter() -> float:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return seconds
    return _real_perf_counter()


def perf_counter_ns() -> int:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return _micros(seconds) * 1000
    return _real_perf_counter_ns()


def time() -> float:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return (WALL_EPOCH * _US + _micros(seconds)) / _US
    return _real_time()


def time_ns() -> int:
    if _RUNNING:
        seconds = _virtual_seconds(1)
        if seconds is not None:
            return (WALL_EPOCH * _US + _micros(seconds)) * 1000
    return _real_time_ns()


def sleep(seconds: float) -> None:
    if _RUNNING and seconds > 0:
        window = _RUNNING.get(_get_ident())
        if window is not None:
            site = outside.call_site(_getframe(1))
            raise outside.refuse(
                window.loop, "time.sleep",
                f"time.sleep({seconds!r}) from {site} is fenced: {outside.WATCHED['time.sleep']}",
            )
    _real_sleep(seconds)


class _VirtualDatetimeType(type):
    """Instances of the real `datetime` are instances of `VirtualDatetime` too, so a mesh
    module's `isinstance(x, datetime)` means what it did."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _RealDatetime)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, _RealDatetime)


class VirtualDatetime(_RealDatetime, metaclass=_VirtualDatetimeType):
    """`datetime.datetime` as the mesh's modules see it under the harness: `now()` and
    `utcnow()` read the virtual clock in a window (`today()` does through `time.time`);
    everything it makes is a real `datetime`."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _RealDatetime:  # type: ignore[misc]
        return _RealDatetime(*args, **kwargs)

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _RealDatetime:  # type: ignore[override]
        seconds = _virtual_seconds(1) if _RUNNING else None
        if seconds is None:
            return _RealDatetime.now(tz)
        return _RealDatetime.fromtimestamp(WALL_EPOCH + seconds, tz)

    @classmethod
    def utcnow(cls) -> _RealDatetime:  # type: ignore[override]
        seconds = _virtual_seconds(1) if _RUNNING else None
        if seconds is None:
            return _RealDatetime.utcnow()
        utc = _RealDatetime.fromtimestamp(WALL_EPOCH + seconds, _datetime.UTC)
        return utc.replace(tzinfo=None)


class _DatetimeModule(types.ModuleType):
    """The `datetime` module as a mesh module that ran `import datetime` sees it under the
    harness: its `datetime` is `VirtualDatetime`, the rest the real module's."""

    datetime = VirtualDatetime

    def __getattr__(self, name: str) -> Any:
        return getattr(_datetime, name)


_DATETIME_MODULE = _DatetimeModule("datetime", _datetime.__doc__)

# The `time` module's functions swapped during a window.
_TIME_SHIMS: dict[str, Callable[..., Any]] = {
    "monotonic": monotonic, "monotonic_ns": monotonic_ns,
    "perf_counter": perf_counter, "perf_counter_ns": perf_counter_ns,
    "time": time, "time_ns": time_ns, "sleep": sleep,
}
_TIME_REAL: dict[str, Callable[..., Any]] = {name: getattr(_time, name) for name in _TIME_SHIMS}
_TIME_NAMESPACE = vars(_time)
# id(real object) -> (real object, shim), for names bound in the mesh's modules.
_BOUND: dict[int, tuple[object, object]] = {
    **{id(_TIME_REAL[name]): (_TIME_REAL[name], shim) for name, shim in _TIME_SHIMS.items()},
    id(_RealDatetime): (_RealDatetime, VirtualDatetime),
    id(_datetime): (_datetime, _DATETIME_MODULE),
}

_lock = threading.Lock()
_windows = 0
_scanned: set[str] = set()
_modules_seen = 0
# (module namespace, name, real object, shim): each a name a mesh module bound.
_bindings: list[tuple[dict[str, Any], str, object, object]] = []


def opened() -> None:
    """A window opened: the first one swaps the shims in."""
    global _windows
    with _lock:
        _windows += 1
        if _windows == 1:
            _swap(in_=True)


def closed() -> None:
    """A window closed: the last one puts the real functions back."""
    global _windows
    with _lock:
        _windows -= 1
        if _windows == 0:
            _swap(in_=False)


def _swap(*, in_: bool) -> None:
    _TIME_NAMESPACE.update(_TIME_SHIMS if in_ else _TIME_REAL)
    if in_ and len(sys.modules) != _modules_seen:
        _scan()
    for namespace, bound, real, stand_in in _bindings:
        old, new = (real, stand_in) if in_ else (stand_in, real)
        if namespace.get(bound) is old:
            namespace[bound] = new


def _scan() -> None:
    """Find the names the mesh's modules (neither the standard library nor the harness)
    bound to a real clock function, `datetime` or its class, in modules not seen yet."""
    global _modules_seen
    modules = list(sys.modules.items())
    _modules_seen = len(modules)
    for module_name, module in modules:
        if module_name in _scanned:
            continue
        _scanned.add(module_name)
        # Only plain modules: a lazy module's attribute access would import it.
        if type(module) is not types.ModuleType or reads_real_time(module_name):
            continue
        namespace = module.__dict__
        for name, value in list(namespace.items()):
            found = _BOUND.get(id(value))
            if found is not None and found[0] is value:
                _bindings.append((namespace, name, value, found[1]))
