"""Import a renamed copy of a package, compiling each module's placeholder form once.

A mutant's copy differs from the mesh in one module; every other module differs from the
mesh's only in the package name its imports name (`rename`). So each module is compiled
once per process in its placeholder form, and a copy gets that code with the placeholder
replaced by its own name in the names the bytecode imports, and its own file as the code's
file: compiling a copy's modules afresh was most of importing it. The copy's files are
still written and are what its code names (tracebacks, coverage and scans read them);
their bytecode is never cached, since a copy is imported once.

One finder on `sys.meta_path` serves every copy this process imported (a function-level
import of a copy's module after its import still resolves); `forget` drops a copy.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

from invariants.mutants.rename import PLACEHOLDER


@dataclass(frozen=True)
class _Copy:
    directory: Path
    forms: Mapping[str, str | None]  # relative path -> placeholder form (None: compile it)


class _CopyLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, form: str | None, package: str) -> None:
        super().__init__(fullname, path)
        self._form = form
        self._package = package

    def get_code(self, fullname: str) -> CodeType:
        """Never from or to a bytecode cache: a copy is imported once."""
        if self._form is None:
            return self.source_to_code(self.get_data(self.path), self.path)
        return _as_copy(_compiled(self._form), self._package, self.path)


class _CopyFinder:
    """Finds the modules of the copies `import_copy` registered, by their files."""

    def __init__(self) -> None:
        self.copies: dict[str, _Copy] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, rest = fullname.partition(".")
        copy = self.copies.get(package)
        if copy is None:
            return None
        parts = rest.split(".") if rest else []
        for relative, is_package in (("/".join([*parts, "__init__.py"]), True),
                                     ("/".join(parts) + ".py", False)):
            if relative in copy.forms:
                loader = _CopyLoader(fullname, str(copy.directory / relative),
                                     copy.forms[relative], package)
                return importlib.util.spec_from_file_location(
                    fullname, copy.directory / relative, loader=loader,
                    submodule_search_locations=[str((copy.directory / relative).parent)]
                    if is_package else None)
        return None


_FINDER = _CopyFinder()


def import_copy(
    package: str, directory: Path, forms: Mapping[str, str | None], adapter: str = "adapter"
) -> ModuleType:
    """Import the copy written to `directory` as `package` (its modules' placeholder forms
    by relative path), then its `adapter` module; on any failure nothing of it stays
    imported."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _FINDER.copies[package] = _Copy(directory, dict(forms))
    try:
        importlib.import_module(package)
        return importlib.import_module(f"{package}.{adapter}" if adapter else package)
    except BaseException:
        forget(package)
        raise


def forget(package: str) -> None:
    """Drop the copy `package`: its modules and its finder entry."""
    _FINDER.copies.pop(package, None)
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


@functools.lru_cache(maxsize=64)  # the mesh's modules, used by every copy, stay in it
def _compiled(form: str) -> CodeType:
    return compile(form, f"<{PLACEHOLDER}>", "exec", dont_inherit=True)


def _as_copy(code: CodeType, package: str, filename: str) -> CodeType:
    """`code` as if compiled from the copy's file: the placeholder in the names it imports
    by (the only place a placeholder form names it) replaced by `package`. Only the
    columns on an import line differ, by the names' difference in length."""
    return code.replace(
        co_names=tuple(name.replace(PLACEHOLDER, package) for name in code.co_names),
        co_consts=tuple(_as_copy(c, package, filename) if isinstance(c, CodeType) else c
                        for c in code.co_consts),
        co_filename=filename,
    )
