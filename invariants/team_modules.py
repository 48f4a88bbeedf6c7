"""A team's own modules, named `module:attribute` in `[tool.harness]`: rules and invariants.

The modules are the team's tooling (never the code a scan reads), imported from its
repository (the pytest `pythonpath` directories and the repository root, searched first,
then the installed packages). Every problem with a spec is a `TeamModuleError` of one line
naming it; its caller adds the file and the key.

Beside the layers, like `invariants.user_errors`: it imports nothing else of the project,
so the static half (`invariants.scan.team`) and the dynamic half
(`invariants.checks.team`) load their records the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

from invariants.user_errors import UserError

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class TeamModuleError(UserError):
    """A `module:attribute` entry that cannot be used; the message names the spec."""


def specs_of(value: object) -> tuple[str, ...]:
    """The specs a key's value lists: a string or an array of strings."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TeamModuleError(f"expected an array of 'module:attribute' strings, got {value!r}")
    return tuple(item.strip() for item in value)


def split(spec: str, example: str) -> tuple[str, str]:
    """(module, attribute) of `spec`; `example` is a spec of the right kind, for the error."""
    module, colon, attribute = spec.partition(":")
    if not colon or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(attribute):
        raise TeamModuleError(f"{spec!r}: expected 'module:attribute' (e.g. {example!r})")
    return module, attribute


@contextlib.contextmanager
def _importable_from(paths: Sequence[Path]) -> Iterator[None]:
    """The repository's directories first on `sys.path` while its modules load."""
    added = [str(path) for path in paths if str(path) not in sys.path]
    sys.path[:0] = added
    importlib.invalidate_caches()  # a directory or module written since the last import
    try:
        yield
    finally:
        for entry in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)


def import_module(spec: str, module: str, paths: Sequence[Path]) -> ModuleType:
    """`module`, imported from `paths` first; a module that is missing or raises while
    loading is a `TeamModuleError` naming `spec`."""
    try:
        with _importable_from(paths):
            return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(f"{exc.name}.")):
            searched = dict.fromkeys(str(path) for path in paths)  # "." may be the root too
            where = ", ".join(searched) or "the installed packages"
            raise TeamModuleError(f"{spec!r}: cannot import module {module!r}: {exc} "
                                  f"(searched {where}, then the installed packages)") from None
        raise TeamModuleError(f"{spec!r}: module {module!r} raised while loading: "
                              f"{type(exc).__name__}: {exc}") from None
    except (Exception, SystemExit) as exc:  # the module's own code failed: name it, go no further
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise TeamModuleError(f"{spec!r}: module {module!r} raised while loading: "
                              f"{type(exc).__name__}: {detail}".rstrip(": ")) from None


def attribute_of(spec: str, module: ModuleType, attribute: str) -> object:
    """`module`'s (dotted) `attribute`; a missing one, or one whose reading raises, is a
    `TeamModuleError` naming `spec`."""
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise TeamModuleError(f"{spec!r}: module {module.__name__!r} has no attribute "
                                  f"{attribute!r}") from None
        except Exception as exc:  # a module `__getattr__` or a property of its own
            raise TeamModuleError(f"{spec!r}: reading {attribute!r} raised "
                                  f"{type(exc).__name__}: {exc}") from None
    return value


def load(spec: str, example: str, paths: Sequence[Path]) -> tuple[ModuleType, object]:
    """The module `spec` names and its attribute's value."""
    module_name, attribute = split(spec, example)
    module = import_module(spec, module_name, paths)
    return module, attribute_of(spec, module, attribute)


def source_files(module: ModuleType) -> list[Path]:
    """The files a team module's behaviour may come from: its top-level package's, or its
    own."""
    top = sys.modules.get(module.__name__.partition(".")[0], module)
    locations = getattr(top, "__path__", None)
    if locations is not None:
        return sorted({file for place in locations for file in Path(place).rglob("*.py")})
    file = getattr(module, "__file__", None)
    return [Path(file)] if file else []


def fingerprint(specs: Sequence[str], modules: Iterable[ModuleType]) -> str:
    """A digest of the specs and of every file their modules' behaviour may come from: a
    cache keyed by it is stale once the team edits one."""
    digest = hashlib.sha256("\x00".join(specs).encode())
    files = sorted({file for module in modules for file in source_files(module)})
    for file in files:
        digest.update(str(file).encode())
        with contextlib.suppress(OSError):  # a file gone since the import: its name stays
            digest.update(file.read_bytes())
    return digest.hexdigest()
