"""The harness calling into an adapter: what it names the mesh by, and what it raises when
the adapter misbehaves (exits, hangs, moves its clock wrongly).

The harness's own: an adapter needs none of it (`invariants.adapter` is its surface).
"""

from __future__ import annotations

import dis
from collections.abc import Iterator
from contextlib import contextmanager

from invariants.adapter import AdapterFactory


class ClockError(Exception):
    """The adapter's virtual clock did not move as the harness asked: every timing verdict
    would read a wrong clock, so the run stops with this instead of judging."""


class MeshHung(Exception):
    """A step the harness asked of the mesh did not return within its budget: of CPU
    time (it computed without end) or of wall-clock time (it blocked)."""


# A factory may name its mesh itself, where its module and name do not tell meshes apart
# (a `functools.partial`, one closure made for several meshes, a pre-fix mutant's build).
MESH_ID_ATTRIBUTE = "harness_mesh_id"


def factory_name(factory: AdapterFactory) -> str:
    """What names the mesh a factory makes: its `harness_mesh_id` where it sets one, else
    its `module:qualified name` (what an adapter spec names)."""
    own = getattr(factory, MESH_ID_ATTRIBUTE, None)
    if isinstance(own, str) and own.strip():
        return own.strip()
    module = str(getattr(factory, "__module__", None) or type(factory).__module__)
    name = str(getattr(factory, "__qualname__", None) or type(factory).__qualname__)
    return f"{module}:{name}"


class AdapterExited(Exception):
    """The adapter (its factory or a step) raised `SystemExit`, or a `KeyboardInterrupt`
    of its own: an error of the adapter, shown with the adapter's traceback (its cause),
    never the end of the run, its exit code or an interrupt."""


_RAISE = dis.opmap["RAISE_VARARGS"]


def _signalled(exc: KeyboardInterrupt) -> bool:
    """Whether `exc` is a real interrupt (a signal: the terminal's Ctrl-C, a SIGTERM), not
    one the adapter raised itself. With the harness's handlers installed
    (`invariants.interrupts`) a signal is recorded as it arrives; without them, Python's
    default SIGINT handler raises wherever the interpreter is, never at a `raise`."""
    from invariants import interrupts

    if isinstance(exc, interrupts.Terminated) or interrupts.received() is not None:
        return True
    tb = exc.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return not (0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE)


@contextmanager
def calling_adapter(name: str, where: str) -> Iterator[None]:
    """The harness calling into the adapter `name` (`where`: "from its factory", "in step
    'init'"): a `SystemExit` it raises, or a `KeyboardInterrupt` it raises itself, becomes
    an `AdapterExited` naming it, raised from the original; a real interrupt, and every
    other exception, passes through as it is."""
    try:
        yield
    except (SystemExit, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt) and _signalled(exc):
            raise
        raise AdapterExited(
            f"the adapter {name} raised {exc!r} {where}: an adapter reports an error by "
            "raising an exception, never by ending the run"
        ) from exc
