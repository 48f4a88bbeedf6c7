"""Resolve an adapter spec `module:factory` to the `AdapterFactory` it names.

A spec names an importable module and a callable in it (dotted attributes allowed, as in
`pkg.mod:Factory.create`) that takes a `Chooser` and returns a `MeshAdapter`. Every entry
point loads factories here (the plugin, `check`, `adapter-check`, `fuzz` and its workers).
Every problem is one line naming where the spec came from (`--harness-adapter`,
`[tool.harness] adapter`, ...), so a typo is obvious: a factory that returns None or a
plain value (a dict, a coroutine) is found as it loads, by calling it once.
"""

from __future__ import annotations

import importlib
import inspect
from typing import cast

from invariants.adapter import AdapterFactory, FirstChooser
from invariants.adapter_calls import calling_adapter
from invariants.user_errors import UserError

REFERENCE_ADAPTER = "reference_impl.adapter:make_adapter"


class AdapterSpecError(UserError):
    """An adapter spec that cannot be used; the message is one line."""


def split_spec(spec: str, origin: str) -> tuple[str, str]:
    """(`module`, `attribute path`) of a well-formed `module:factory` spec."""
    module, sep, attribute = spec.partition(":")
    if not sep or not module.strip() or not attribute.strip() or ":" in attribute:
        raise AdapterSpecError(
            f"{origin}: expected 'module:factory' (for example {REFERENCE_ADAPTER!r}), "
            f"got {spec!r}"
        )
    return module.strip(), attribute.strip()


def load_factory(spec: str, origin: str) -> AdapterFactory:
    """Import the module of `spec` and return its factory callable."""
    module_name, attribute = split_spec(spec, origin)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise AdapterSpecError(
            f"{origin}: cannot import module {module_name!r} of {spec!r}: {exc} "
            "(is it installed, or on pytest's `pythonpath`?)"
        ) from exc
    except Exception as exc:  # the user's module raised while importing: say so, one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise AdapterSpecError(
            f"{origin}: importing {module_name!r} raised {type(exc).__name__}: {first}"
        ) from exc
    target: object = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AdapterSpecError(
                f"{origin}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not callable(target):
        raise AdapterSpecError(
            f"{origin}: {spec!r} is a {type(target).__name__}, not a callable factory"
        )
    factory = cast(AdapterFactory, target)
    _check_returns_an_adapter(factory, spec, origin)
    return factory


def _check_returns_an_adapter(factory: AdapterFactory, spec: str, origin: str) -> None:
    """Call `factory` once: None or a built-in value (a dict, a coroutine) is no adapter,
    and every later call would fail far from the spec (`'dict' object has no attribute
    'create_hub'`). A factory that raises is left to the entry point, which reports what
    the adapter raised as it does for any step."""
    try:
        with calling_adapter(spec, "from its factory"):
            made: object = factory(FirstChooser())
    except Exception:
        return
    if made is not None and type(made).__module__ != "builtins":
        return  # an object of the mesh's own: the adapter (conformance judges the rest)
    what = "None" if made is None else f"a {type(made).__name__}"
    hint = (" (an `async def` factory? it must build the adapter and return it)"
            if inspect.iscoroutine(made) else "")
    if inspect.iscoroutine(made):
        made.close()  # never to be awaited: no "never awaited" warning either
    raise AdapterSpecError(
        f"{origin}: factory {spec!r} returned {what}, not a mesh adapter{hint}"
    )

